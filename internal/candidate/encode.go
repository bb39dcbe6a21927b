package candidate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/redact"
)

// EncodeJSON renders v as canonical JSON: every object's keys sorted,
// two-space indentation, no HTML escaping, numbers as written, and a
// trailing newline. See WriteJSON.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON writes v to w as canonical JSON, as EncodeJSON returns it.
//
// Go structs encode their fields in declaration order, so v is encoded
// once with encoding/json (which runs every MarshalJSON method and applies
// the field tags) and that compact text is then rewritten as it is read:
// each object's members are sorted by their decoded names, strings are
// re-escaped without HTML escaping, and numbers are copied as written.
// The output is the same as decoding the text into generic values and
// encoding them again with sorted keys, but it never builds those values:
// a report of tens of megabytes costs its compact text and one slice of
// member offsets per open object, not a map per object and an interface
// per value. A name given twice in one object keeps its last value, as
// decoding would.
func WriteJSON(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	c := canonWriter{w: bw}
	i, err := c.value(raw, skipSpace(raw, 0), 0)
	if err != nil {
		return err
	}
	if skipSpace(raw, i) != len(raw) {
		return errors.New("canonical json: trailing data after the value")
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// canonWriter rewrites compact JSON text as canonical JSON.
type canonWriter struct {
	w *bufio.Writer
	// members holds, per nesting depth, the member slice of the object
	// being written at that depth, reused between objects.
	members [][]member
	// scratch and dec are buffers for escaping a string and for decoding
	// one, reused between strings.
	scratch, dec []byte
}

// member is one member of an object: its decoded name and where its
// value starts in the text.
type member struct {
	name  []byte
	value int
}

var errSyntax = errors.New("canonical json: malformed json")

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func (c *canonWriter) indent(depth int) {
	c.w.WriteByte('\n')
	for range depth {
		c.w.WriteString("  ")
	}
}

// value writes the value at b[i:] and returns the index after it.
func (c *canonWriter) value(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '{':
		return c.object(b, i, depth)
	case '[':
		return c.array(b, i, depth)
	case '"':
		end, err := stringEnd(b, i)
		if err != nil {
			return 0, err
		}
		c.writeString(b[i:end])
		return end, nil
	default:
		end := scalarEnd(b, i)
		if end == i {
			return 0, errSyntax
		}
		c.w.Write(b[i:end])
		return end, nil
	}
}

func (c *canonWriter) array(b []byte, i, depth int) (int, error) {
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		c.w.WriteString("[]")
		return i + 1, nil
	}
	c.w.WriteByte('[')
	for first := true; ; first = false {
		if !first {
			c.w.WriteByte(',')
		}
		c.indent(depth + 1)
		end, err := c.value(b, i, depth+1)
		if err != nil {
			return 0, err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return 0, errSyntax
		}
		if b[i] == ']' {
			break
		}
		if b[i] != ',' {
			return 0, errSyntax
		}
		i = skipSpace(b, i+1)
	}
	c.indent(depth)
	c.w.WriteByte(']')
	return i + 1, nil
}

func (c *canonWriter) object(b []byte, i, depth int) (int, error) {
	for len(c.members) <= depth {
		c.members = append(c.members, nil)
	}
	ms := c.members[depth][:0]
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		c.w.WriteString("{}")
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errSyntax
		}
		end, err := stringEnd(b, i)
		if err != nil {
			return 0, err
		}
		name := b[i+1 : end-1]
		if !plain(name) {
			name = unquote(nil, name)
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return 0, errSyntax
		}
		i = skipSpace(b, i+1)
		ms = append(ms, member{name: name, value: i})
		if i, err = skipValue(b, i); err != nil {
			return 0, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return 0, errSyntax
		}
		if b[i] == '}' {
			break
		}
		if b[i] != ',' {
			return 0, errSyntax
		}
		i = skipSpace(b, i+1)
	}
	after := i + 1
	// Stable, so that of two members with one name the later one comes
	// last and wins below.
	slices.SortStableFunc(ms, func(x, y member) int { return bytes.Compare(x.name, y.name) })
	c.members[depth] = ms
	c.w.WriteByte('{')
	written := false
	for k := range ms {
		if k+1 < len(ms) && bytes.Equal(ms[k].name, ms[k+1].name) {
			continue
		}
		if written {
			c.w.WriteByte(',')
		}
		written = true
		c.indent(depth + 1)
		c.scratch = appendString(c.scratch[:0], ms[k].name)
		c.w.Write(c.scratch)
		c.w.WriteString(": ")
		// The slice may be reused by a nested object at depth+1 only,
		// never at this depth, so ms stays valid.
		if _, err := c.value(b, ms[k].value, depth+1); err != nil {
			return 0, err
		}
	}
	c.indent(depth)
	c.w.WriteByte('}')
	return after, nil
}

// writeString writes the JSON string token s (quotes included) escaped as
// encoding/json escapes a decoded string without HTML escaping. Most
// strings need no change and are copied.
func (c *canonWriter) writeString(s []byte) {
	body := s[1 : len(s)-1]
	if plain(body) {
		c.w.Write(s)
		return
	}
	// Decoded first, as a decoder would: that also turns an invalid
	// UTF-8 byte into U+FFFD itself, where escaping one would write
	// \ufffd.
	c.dec = unquote(c.dec[:0], body)
	c.scratch = appendString(c.scratch[:0], c.dec)
	c.w.Write(c.scratch)
}

// plain reports whether the body of a string token is written unchanged:
// no escape, no control character, valid UTF-8 without U+2028 or U+2029.
func plain(b []byte) bool {
	for i := 0; i < len(b); {
		x := b[i]
		if x < utf8.RuneSelf {
			if x < 0x20 || x == '\\' || x == '"' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// appendString appends the decoded string s as a JSON string token,
// escaped the way encoding/json escapes it with HTML escaping off. The
// conversion does not escape, so short strings stay on the stack.
func appendString(dst, s []byte) []byte {
	return redact.AppendJSONString(dst, string(s))
}

// unquote appends the decoded body of a JSON string to dst, as
// encoding/json decodes it: a lone or malformed surrogate escape and an
// invalid UTF-8 byte each become U+FFFD.
func unquote(dst, b []byte) []byte {
	for i := 0; i < len(b); {
		x := b[i]
		switch {
		case x == '\\' && i+1 < len(b):
			i++
			switch b[i] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(b, i+1)
				i += 4
				if utf16.IsSurrogate(r) {
					if i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						if r2 := utf16.DecodeRune(r, hex4(b, i+3)); r2 != utf8.RuneError {
							dst = utf8.AppendRune(dst, r2)
							i += 6
							break
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
			default: // '"', '\\', '/'
				dst = append(dst, b[i])
			}
			i++
		case x < utf8.RuneSelf:
			dst = append(dst, x)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
		}
	}
	return dst
}

// hex4 reads the four hex digits at b[i:]; malformed digits give -1,
// which encodes as U+FFFD. Marshal never writes those: its output is
// valid JSON.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// stringEnd returns the index after the string token starting at b[i].
func stringEnd(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errSyntax
}

// scalarEnd returns the index after the number, true, false or null at
// b[i].
func scalarEnd(b []byte, i int) int {
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// skipValue returns the index after the value at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := stringEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errSyntax
	}
	end := scalarEnd(b, i)
	if end == i {
		return 0, errSyntax
	}
	return end, nil
}
