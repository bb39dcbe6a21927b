package toon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// ReadJSON parses one JSON value into the decoder's value types: Object
// for objects (key order kept), []any, string, json.Number, bool and nil.
// A key repeated within one object keeps its first position and takes its
// last value, as JSON.parse does. Errors carry the line of the problem.
// Arrays and objects nested more than DefaultMaxDepth deep are refused
// (ErrTooDeep).
func ReadJSON(data []byte) (any, error) {
	return readJSON(data, DefaultMaxDepth)
}

// readJSON is ReadJSON with max, the nesting it accepts (at most 0
// refuses any array or object).
func readJSON(data []byte, max int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec, max, max)
	if err == nil {
		if _, err = dec.Token(); err == io.EOF {
			return v, nil
		} else if err == nil {
			err = errors.New("invalid character after top-level value")
		}
	}
	return nil, jsonError(data, dec, err)
}

// jsonError attaches a line number to a JSON error: the syntax error's
// offset when there is one, else the decoder's position.
func jsonError(data []byte, dec *json.Decoder, err error) error {
	off := dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = errors.New("unexpected end of JSON input")
		off = int64(len(data))
	}
	line, _ := jsontext.Position(data, int(off))
	if errors.Is(err, ErrTooDeep) {
		return &Error{Line: line, Msg: err.Error(), err: err}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return &Error{Line: line, Msg: "invalid JSON: " + msg}
}

// readValue reads one value that may nest room more arrays and objects,
// in a document that may nest max.
func readValue(dec *json.Decoder, room, max int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if room <= 0 {
			return nil, fmt.Errorf("%w: arrays and objects nest more than %d deep", ErrTooDeep, max)
		}
		switch tok {
		case '{':
			o := Object{}
			index := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string) // the decoder only yields string keys
				v, err := readValue(dec, room-1, max)
				if err != nil {
					return nil, err
				}
				if i, dup := index[key]; dup {
					o[i].Value = v
					continue
				}
				index[key] = len(o)
				o = append(o, Member{key, v})
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readValue(dec, room-1, max)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", tok)
	}
	return tok, nil
}

// WriteJSON returns the JSON text of a value of the kinds Decode returns,
// indented by indent per level ("" for one line), keys in object order,
// with no trailing newline. Other host values are normalized as by Encode.
func WriteJSON(v any, indent string) ([]byte, error) {
	n, err := normalize(v, 0, 0)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	writeJSON(&b, n, indent, 0)
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any, indent string, depth int) {
	switch v := v.(type) {
	case Object:
		writeSeq(b, '{', '}', len(v), indent, depth, func(i int) {
			writeString(b, v[i].Key)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeJSON(b, v[i].Value, indent, depth+1)
		})
	case []any:
		writeSeq(b, '[', ']', len(v), indent, depth, func(i int) { writeJSON(b, v[i], indent, depth+1) })
	case string:
		writeString(b, v)
	case number:
		b.WriteString(string(v))
	case bool:
		fmt.Fprint(b, v)
	default:
		b.WriteString("null")
	}
}

// writeSeq writes an array (open '[') or an object (open '{') of n
// elements or members, elem writing each (a member with its key).
func writeSeq(b *bytes.Buffer, open, end byte, n int, indent string, depth int, elem func(i int)) {
	if n == 0 {
		b.WriteByte(open)
		b.WriteByte(end)
		return
	}
	newline := func(d int) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(indent, d))
		}
	}
	b.WriteByte(open)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(depth + 1)
		elem(i)
	}
	newline(depth)
	b.WriteByte(end)
}

// writeString writes s as a JSON string as every file of the module
// quotes it (jsontext.AppendQuote), without HTML escaping, which would
// turn the <, > and & of ordinary text into \u003c and the like.
func writeString(b *bytes.Buffer, s string) {
	b.Write(jsontext.AppendQuote(b.AvailableBuffer(), s))
}

// EncodeJSON converts a JSON document to TOON, keeping its key order.
func EncodeJSON(data []byte, opts EncodeOptions) ([]byte, error) {
	var b bytes.Buffer
	if err := EncodeJSONTo(&b, data, opts); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// EncodeJSONTo writes the TOON text of a JSON document to w, as
// EncodeTo writes a value; nothing is written when the document is
// refused.
func EncodeJSONTo(w io.Writer, data []byte, opts EncodeOptions) error {
	max := opts.MaxDepth
	if max <= 0 {
		max = DefaultMaxDepth
	}
	v, err := readJSON(data, max)
	if err != nil {
		return err
	}
	return EncodeTo(w, v, opts)
}

// DecodeJSON converts a TOON document to JSON indented by two spaces,
// keeping its key order, without a trailing newline.
func DecodeJSON(data []byte, opts DecodeOptions) ([]byte, error) {
	v, err := Decode(data, opts)
	if err != nil {
		return nil, err
	}
	return WriteJSON(v, "  ")
}
