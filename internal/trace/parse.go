package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// ParseJSON parses data as exactly one JSON value into the generic values
// of encoding/json, with numbers kept as json.Number so that integers of
// any size and the literal form of every number survive.
//
// A syntax error is an ErrorList with one entry at the line and byte
// column of the offending byte: "a.json:14:7: invalid JSON: …". When line
// is positive, data is taken to start on that line (a JSON Lines record),
// otherwise on line 1. Text after the value other than white space is an
// error too, since a file holds one document.
//
// ParseJSON is a Parser used once; code that parses many documents should
// keep a Parser, so that what repeats between documents is stored once.
func ParseJSON(data []byte, file string, line int) (any, error) {
	var p Parser
	return p.Parse(data, file, line)
}

// Parser parses JSON documents into the generic values ParseJSON returns:
// map[string]any, []any, string, json.Number, bool and nil, equal (as by
// reflect.DeepEqual) to what encoding/json's Decoder gives with UseNumber.
//
// Its reason to exist is the memory of a loaded corpus. Traces hold their
// parameters, outputs and metadata as these generic values, and a corpus
// repeats the same strings in every action: the member names, the action
// kinds and names, capabilities, models, small numbers. encoding/json
// allocates each occurrence anew, twice for a string value (the bytes and
// the interface box). A Parser keeps a table of the short strings and
// numbers it has seen, keys and values alike, boxed once, and hands out the
// same value for the same text, so that they are stored once per table
// instead of once per occurrence. Strings and boxed values are immutable,
// so sharing them cannot be observed; maps and slices are never shared.
// The typed fields that Decode fills from these values (Action.Kind and
// Name, capabilities, side effects, Cost.Model, …) share them too.
//
// The tables are bounded: a string or number longer than maxInternLen is
// not entered, and a table that reaches maxInterned entries is emptied and
// starts again. Frequent strings are back in it after a few documents;
// unique ones (ids, timestamps) cannot grow it without bound. A Parser is
// therefore cheap to keep for a whole load, one per goroutine: it is not
// safe for concurrent use, and one table per worker avoids a lock on every
// string at the cost of one copy of each frequent string per worker.
//
// The parser itself is a single pass over the bytes, with no separate
// validation pass and no copy of the input. Of an invalid document it only
// finds that it is invalid; Parse then reports the error encoding/json
// reports, at the same position, by parsing the document again with it,
// so messages do not depend on which parser ran. The two must accept the
// same documents and give equal values; FuzzParser checks that they do.
//
// The zero Parser is ready to use.
type Parser struct {
	strs map[string]any // string values and member names, boxed, by text
	nums map[string]any // json.Number values, boxed, by literal

	// Scratch space, reused across documents: the bytes of the current
	// document and the read position, the unescaped text of the current
	// string, and the elements and members of the arrays and objects
	// being parsed, collected so that each slice and map is allocated
	// once, at its final size.
	data    []byte
	pos     int
	buf     []byte
	elems   []any
	members []member
	skipped [][]byte // names of the members ParseShaped drops
	// Scratch space of Skim: the parameter names of the current
	// action, the action ids of the current trace, the signature being
	// built, and the signatures seen, shared like strings.
	params [][]byte
	ids    map[string]struct{}
	sig    []byte
	sigs   map[string]string
	// actions collects the actions of the trace DecodeDirect reads, so
	// that the trace's slice is allocated once, at its final size.
	actions []Action
	// window, set while DecodeWindow runs, is which actions it builds.
	window *Window
	// dup is set when an object of the last document had two members
	// of the same name; Parse then reports them with Duplicates.
	dup bool
}

type member struct {
	key string
	val any
}

const (
	// maxInternLen is the length of the longest string or number literal
	// a Parser shares. Names, kinds, enum-like values and numbers are far
	// shorter; longer text (prompts, outputs) rarely repeats exactly, and
	// entering it would cost a hash of the whole text for nothing.
	maxInternLen = 64
	// maxInterned bounds each table of a Parser: a few megabytes per
	// Parser at most, and so per worker of a load. A larger bound saves
	// little: on a generated corpus of 10,000 traces, an unbounded table
	// kept the live heap 2 MB (0.4 %) lower.
	maxInterned = 1 << 14
	// maxDepth is encoding/json's limit on the nesting of arrays and
	// objects, which keeps the recursion of the parser bounded too.
	maxDepth = 10000
)

// Parse parses data as ParseJSON does, sharing the strings and numbers of
// data with the documents parsed before.
//
// A document in which an object has two members of the same name is an
// error too, listing every duplicate with its line and JSON path (see
// Duplicates): which of the two values counts would otherwise depend on
// the decoder, and a reviewer could read the one that does not.
func (p *Parser) Parse(data []byte, file string, line int) (any, error) {
	if v, ok := p.parse(data); ok {
		if p.dup {
			return nil, Duplicates(data, file, line)
		}
		return v, nil
	}
	return parseStd(data, file, line)
}

// parse parses data and reports whether it is one valid JSON document.
func (p *Parser) parse(data []byte) (v any, ok bool) {
	if !p.readWhole(data, func() (ok bool) { v, ok = p.value(0); return ok }) {
		return nil, false
	}
	return v, true
}

// parseStd parses data with encoding/json, the reference: the parser is
// correct when it agrees with it, and its messages are the ones users see.
func parseStd(data []byte, file string, line int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			// Offset counts the bytes read including the offending one.
			return nil, syntaxError(data, file, line, int(syn.Offset)-1, syn.Error())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, syntaxError(data, file, line, len(data), "unexpected end of input")
		case errors.Is(err, io.EOF):
			return nil, syntaxError(data, file, line, len(data), "empty document")
		default:
			return nil, syntaxError(data, file, line, len(data), err.Error())
		}
	}
	rest := int(dec.InputOffset())
	for rest < len(data) && isSpace(data[rest]) {
		rest++
	}
	if rest < len(data) {
		return nil, syntaxError(data, file, line, rest, "unexpected data after top-level value")
	}
	return v, nil
}

func isSpace(c byte) bool { return jsontext.IsSpace(c) }

// syntaxError positions msg at byte offset off of data (jsontext.Position),
// data starting on line line (a JSON Lines record) or, when line is not
// positive, on line 1.
func syntaxError(data []byte, file string, line, off int, msg string) ErrorList {
	l, col := jsontext.Position(data, off)
	return ErrorList{{File: file, Line: max(line, 1) + l - 1, Col: col, Msg: "invalid JSON: " + msg}}
}

// The methods below parse one value each, starting at p.pos, and report
// false for anything that is not valid JSON. They follow RFC 8259 as
// encoding/json reads it: white space is space, tab, CR and LF; strings
// may hold any byte but control characters, invalid UTF-8 and unpaired
// surrogate escapes read as U+FFFD; a later duplicate member wins, and
// p.dup records that there was one.

func (p *Parser) skipSpace() {
	for p.pos < len(p.data) && isSpace(p.data[p.pos]) {
		p.pos++
	}
}

// value parses the value at p.pos, after optional white space; depth is
// the number of arrays and objects around it.
func (p *Parser) value(depth int) (any, bool) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object(depth + 1)
	case '[':
		return p.array(depth + 1)
	case '"':
		s, ok := p.str()
		if !ok {
			return nil, false
		}
		return p.boxString(s), true
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return p.number()
		}
		return nil, false
	}
}

func (p *Parser) literal(lit string) bool {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(lit)) {
		return false
	}
	p.pos += len(lit)
	return true
}

// object parses the object at p.pos. Its members are collected on
// p.members first, so that the map is made with its final size and never
// rehashed while it grows.
func (p *Parser) object(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return map[string]any{}, true
	}
	base := len(p.members)
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		key := p.key(k)
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, false
		}
		p.pos++
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		p.members = append(p.members, member{key, v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			members := p.members[base:]
			m := make(map[string]any, len(members))
			for _, e := range members {
				m[e.key] = e.val
			}
			// Fewer entries than members: a name came twice. Finding
			// which, and where, is left to Duplicates, off the hot path.
			p.dup = p.dup || len(m) < len(members)
			clear(members)
			p.members = p.members[:base]
			return m, true
		default:
			return nil, false
		}
	}
}

// array parses the array at p.pos, collecting its elements on p.elems so
// that the slice is allocated once with its exact length.
func (p *Parser) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return []any{}, true
	}
	base := len(p.elems)
	for {
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		p.elems = append(p.elems, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, false
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			elems := p.elems[base:]
			a := make([]any, len(elems))
			copy(a, elems)
			clear(elems)
			p.elems = p.elems[:base]
			return a, true
		default:
			return nil, false
		}
	}
}

// number parses the number at p.pos: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *Parser) number() (any, bool) {
	i, ok := p.numberEnd()
	if !ok {
		return nil, false
	}
	lit := p.data[p.pos:i]
	p.pos = i
	return p.boxNumber(lit), true
}

// numberEnd returns the position after the number at p.pos, and whether
// it is one.
func (p *Parser) numberEnd() (int, bool) {
	end, ok := jsontext.NumberEnd(p.data, p.pos)
	return end, ok
}

// IsNumber reports whether s is exactly one JSON number literal, as the
// parser reads them (jsontext.IsNumber).
func IsNumber(s string) bool { return jsontext.IsNumber(s) }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// str parses the string at p.pos and returns its text, which is valid
// until the next call: a slice of the document when the string has no
// escapes and is valid UTF-8 (the common case, copied only if the text is
// new), otherwise decoded into p.buf as encoding/json decodes it
// (jsontext.AppendUnquote).
func (p *Parser) str() ([]byte, bool) {
	data := p.data
scan:
	for i := p.pos + 1; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			s := data[p.pos+1 : i]
			p.pos = i + 1
			return s, true
		case c == '\\' || c < ' ':
			break scan
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				break scan
			}
			i += size
		}
	}
	b, end, err := jsontext.AppendUnquote(p.buf[:0], data, p.pos)
	p.buf = b
	if err != nil {
		return nil, false
	}
	p.pos = end
	return b, true
}

// boxString returns s as a string value, shared with earlier occurrences
// of the same text. The lookup with string(s) as the key does not
// allocate; only new text is copied, and boxed once.
func (p *Parser) boxString(s []byte) any {
	if len(s) > maxInternLen {
		return string(s)
	}
	if v, ok := p.strs[string(s)]; ok {
		return v
	}
	text := string(s)
	v := any(text)
	enter(&p.strs, text, v)
	return v
}

// key returns s as a member name, shared like a string value: member
// names are what repeats most.
func (p *Parser) key(s []byte) string {
	if len(s) > maxInternLen {
		return string(s)
	}
	if v, ok := p.strs[string(s)]; ok {
		return v.(string)
	}
	text := string(s)
	enter(&p.strs, text, text)
	return text
}

// boxNumber returns lit as a json.Number value, shared like a string.
func (p *Parser) boxNumber(lit []byte) any {
	if len(lit) > maxInternLen {
		return json.Number(lit)
	}
	if v, ok := p.nums[string(lit)]; ok {
		return v
	}
	text := string(lit)
	v := any(json.Number(text))
	enter(&p.nums, text, v)
	return v
}

// enter adds text to a table, emptying the table first when it is full.
func enter(table *map[string]any, text string, v any) {
	if *table == nil {
		*table = make(map[string]any)
	}
	if len(*table) >= maxInterned {
		clear(*table)
	}
	(*table)[text] = v
}
