package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// Bytes redacts the JSON document b as Value redacts its decoded value, and
// returns the result as canonical JSON with the number of replacements.
//
// Canonical JSON is compact (no insignificant white space, no trailing
// newline), has the keys of each object sorted bytewise with a repeated key
// keeping its last value, writes numbers as they were written, and escapes
// strings as encoding/json does with SetEscapeHTML(false). It is what
// decoding with UseNumber, calling Value and encoding would give; Bytes
// does it in one pass of its own because that measured several times slower
// (encoding/json decodes into maps, the maps are copied, and the encoder
// sorts them again). A document whose keys contain secrets, which needs the
// renaming Value does, takes that slower path.
//
// A malformed document gives a *SyntaxError.
func Bytes(b []byte) ([]byte, int, error) {
	e := &encoder{src: string(b), out: make([]byte, 0, len(b)+len(b)/8)}
	e.skip()
	err := e.value(0)
	if err == nil {
		e.skip()
		if e.pos < len(e.src) {
			err = e.syntax("invalid character %s after top-level value", jsontext.QuoteChar(e.src[e.pos]))
		}
	}
	if err == errKeySecret {
		return slowBytes(b)
	}
	if err != nil {
		return nil, 0, err
	}
	return e.out, e.n, nil
}

// SyntaxError is a syntax error in a JSON document given to Bytes. Its
// message names at most one byte of the input, never a value.
type SyntaxError struct {
	Offset int // of the offending byte, from 0
	Line   int // from 1
	Column int // in bytes, from 1
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// errKeySecret stops the one-pass encoder at an object key that holds a
// secret; Bytes then takes the slow path.
var errKeySecret = errors.New("secret in object key")

// maxDepth is the nesting limit of encoding/json, kept so that both paths
// accept the same documents.
const maxDepth = 10000

// An encoder parses src and writes its redacted canonical form to out.
type encoder struct {
	src     string
	pos     int
	out     []byte
	n       int
	members [][]member // one reusable slice per nesting depth
	scratch []byte     // an object's members while they are reordered
	str     []byte     // a string being unescaped
}

// A member is an object member written to out[start:end] as "key":value;
// n is the number of replacements in it.
type member struct {
	key        string
	start, end int
	n          int
}

func (e *encoder) value(depth int) error {
	if e.pos >= len(e.src) {
		return e.eof()
	}
	switch c := e.src[e.pos]; {
	case c == '{':
		return e.object(depth + 1)
	case c == '[':
		return e.array(depth + 1)
	case c == '"':
		s, raw, err := e.string()
		if err != nil {
			return err
		}
		r, k := redactString(s)
		e.n += k
		e.quote(r, raw && k == 0)
		return nil
	case c == '-' || '0' <= c && c <= '9':
		return e.number()
	case c == 't':
		return e.literal("true")
	case c == 'f':
		return e.literal("false")
	case c == 'n':
		return e.literal("null")
	default:
		return e.syntax("invalid character %s looking for beginning of value", jsontext.QuoteChar(c))
	}
}

func (e *encoder) object(depth int) error {
	if depth > maxDepth {
		return e.syntax("exceeded max depth")
	}
	e.pos++
	e.out = append(e.out, '{')
	base := len(e.out)
	for len(e.members) <= depth {
		e.members = append(e.members, nil)
	}
	ms := e.members[depth][:0]
	e.skip()
	if e.pos < len(e.src) && e.src[e.pos] == '}' {
		e.pos++
		e.out = append(e.out, '}')
		return nil
	}
	for {
		e.skip()
		if e.pos >= len(e.src) {
			return e.eof()
		}
		if e.src[e.pos] != '"' {
			return e.syntax("invalid character %s looking for beginning of object key string", jsontext.QuoteChar(e.src[e.pos]))
		}
		key, raw, err := e.string()
		if err != nil {
			return err
		}
		if _, ok := Secret(key); ok {
			return errKeySecret
		}
		e.skip()
		if e.pos >= len(e.src) {
			return e.eof()
		}
		if e.src[e.pos] != ':' {
			return e.syntax("invalid character %s after object key", jsontext.QuoteChar(e.src[e.pos]))
		}
		e.pos++
		e.skip()
		start, n := len(e.out), e.n
		e.quote(key, raw)
		e.out = append(e.out, ':')
		mark := len(e.out)
		if err := e.value(depth); err != nil {
			return err
		}
		if SensitiveKey(key) {
			// The value is parsed and written before it is replaced, so that
			// a malformed one is still reported. It is kept only when it
			// holds nothing or is a redaction marker (written unchanged).
			switch v := string(e.out[mark:]); {
			case v == "null", v == "true", v == "false", v == `""`:
			case quotedMarker(v):
			default:
				e.out = append(e.out[:mark], `"`+Redacted+`"`...)
				e.n = n + 1
			}
		}
		ms = append(ms, member{key, start, len(e.out), e.n - n})
		e.skip()
		if e.pos >= len(e.src) {
			return e.eof()
		}
		c := e.src[e.pos]
		e.pos++
		if c == '}' {
			break
		}
		if c != ',' {
			e.pos--
			return e.syntax("invalid character %s after object key:value pair", jsontext.QuoteChar(c))
		}
		e.out = append(e.out, ',')
	}
	e.members[depth] = ms
	e.sort(base, ms)
	e.out = append(e.out, '}')
	return nil
}

// sort rewrites the members ms of the object written from out[base:] in
// key order, dropping all but the last of repeated keys. Most objects are
// written in key order already and cost one comparison per member; others
// are copied once, so a document costs O(size × depth) at worst.
func (e *encoder) sort(base int, ms []member) {
	sorted := true
	for i := 1; i < len(ms); i++ {
		if ms[i-1].key >= ms[i].key {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	if len(ms) <= 16 {
		// Insertion sort: stable, and faster than the general sort for the
		// handful of members objects have.
		for i := 1; i < len(ms); i++ {
			for j := i; j > 0 && ms[j].key < ms[j-1].key; j-- {
				ms[j], ms[j-1] = ms[j-1], ms[j]
			}
		}
	} else {
		slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
	}
	e.scratch = append(e.scratch[:0], e.out[base:]...)
	e.out = e.out[:base]
	first := true
	for i, m := range ms {
		if i+1 < len(ms) && ms[i+1].key == m.key {
			e.n -= m.n // encoding/json keeps the last; so does Value
			continue
		}
		if !first {
			e.out = append(e.out, ',')
		}
		first = false
		e.out = append(e.out, e.scratch[m.start-base:m.end-base]...)
	}
}

func (e *encoder) array(depth int) error {
	if depth > maxDepth {
		return e.syntax("exceeded max depth")
	}
	e.pos++
	e.out = append(e.out, '[')
	e.skip()
	if e.pos < len(e.src) && e.src[e.pos] == ']' {
		e.pos++
		e.out = append(e.out, ']')
		return nil
	}
	for {
		e.skip()
		if err := e.value(depth); err != nil {
			return err
		}
		e.skip()
		if e.pos >= len(e.src) {
			return e.eof()
		}
		c := e.src[e.pos]
		e.pos++
		if c == ']' {
			e.out = append(e.out, ']')
			return nil
		}
		if c != ',' {
			e.pos--
			return e.syntax("invalid character %s after array element", jsontext.QuoteChar(c))
		}
		e.out = append(e.out, ',')
	}
}

// string reads the string literal at src[pos] and returns its value. raw
// reports that the literal is printable ASCII without escapes, so that it
// is its own canonical form: the common case, which costs no copy.
func (e *encoder) string() (s string, raw bool, err error) {
	start := e.pos + 1
	for i := start; i < len(e.src); i++ {
		c := e.src[i]
		if c == '"' {
			e.pos = i + 1
			return e.src[start:i], true, nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
	}
	// Any other string is decoded as encoding/json decodes it.
	b, end, err := jsontext.AppendUnquote(e.str[:0], e.src, e.pos)
	e.str = b
	if se, ok := err.(*jsontext.SyntaxError); ok {
		e.pos = se.Offset
		return "", false, e.syntax("%s", se.Msg)
	}
	e.pos = end
	return string(b), false, nil
}

// quote writes the string s: as it is when raw (string found its literal
// to be its own canonical form), else escaped.
func (e *encoder) quote(s string, raw bool) {
	if raw {
		e.out = append(append(append(e.out, '"'), s...), '"')
		return
	}
	e.out = jsontext.AppendQuote(e.out, s)
}

func (e *encoder) number() error {
	end, ok := jsontext.NumberEnd(e.src, e.pos)
	if !ok {
		e.pos = end
		if end >= len(e.src) {
			return e.eof()
		}
		return e.syntax("invalid character %s in numeric literal", jsontext.QuoteChar(e.src[end]))
	}
	e.out = append(e.out, e.src[e.pos:end]...)
	e.pos = end
	return nil
}

func (e *encoder) literal(word string) error {
	for k := 0; k < len(word); k++ {
		if e.pos+k >= len(e.src) {
			e.pos = len(e.src)
			return e.eof()
		}
		if e.src[e.pos+k] != word[k] {
			e.pos += k
			return e.syntax("invalid character %s in literal %s", jsontext.QuoteChar(e.src[e.pos]), word)
		}
	}
	e.pos += len(word)
	e.out = append(e.out, word...)
	return nil
}

func (e *encoder) skip() { e.pos = jsontext.SkipSpace(e.src, e.pos) }

func (e *encoder) eof() error {
	return e.syntax("unexpected end of JSON input")
}

func (e *encoder) syntax(format string, args ...any) error {
	pos := min(e.pos, len(e.src))
	line, col := jsontext.Position(e.src, pos)
	return &SyntaxError{Offset: pos, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// slowBytes is Bytes by way of encoding/json and Value.
func slowBytes(b []byte) ([]byte, int, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, 0, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, 0, errors.New("invalid data after top-level value")
	}
	out, n := Value(v)
	text, err := jsontext.AppendCompact(nil, out)
	if err != nil {
		return nil, 0, err
	}
	return text, n, nil
}
