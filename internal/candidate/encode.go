package candidate

import (
	"bufio"
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
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
// The output is the same as encoding v with encoding/json, decoding the
// text into generic values and encoding them again with sorted keys, but
// neither those values nor the whole compact text are built: v is walked
// by reflection and written as it is walked, with struct fields by their
// JSON names, sorted, and map keys sorted. What the walk does not write
// itself (a value with its own MarshalJSON or MarshalText, a number that
// is not an integer, a json.Number, a []byte, a struct with a ",string"
// field, a map whose keys are not plain strings or not valid UTF-8) is
// encoded with encoding/json, one value at a time, and that compact text
// rewritten as it is read: each object's members sorted by their decoded
// names, strings re-escaped without HTML escaping, numbers copied as
// written, a name given twice in one object keeping its last value. A
// report of hundreds of megabytes then costs its output and one value's
// compact text at a time, not a second copy of itself.
func WriteJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	c := canonWriter{w: bw}
	if err := c.typed(reflect.ValueOf(v), 0); err != nil {
		return err
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// writeCompact encodes v with encoding/json and writes that text
// canonically at depth.
func (c *canonWriter) writeCompact(v any, depth int) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	i, err := c.value(raw, skipSpace(raw, 0), depth)
	if err != nil {
		return err
	}
	if skipSpace(raw, i) != len(raw) {
		return errors.New("canonical json: trailing data after the value")
	}
	return nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// typed writes v at depth.
func (c *canonWriter) typed(v reflect.Value, depth int) error {
	if !v.IsValid() {
		c.w.WriteString("null")
		return nil
	}
	t := v.Type()
	if selfEncoding(t) {
		if v.CanAddr() {
			return c.writeCompact(v.Addr().Interface(), depth)
		}
		return c.writeCompact(v.Interface(), depth)
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			s = validUTF8(s)
		}
		c.scratch = redact.AppendJSONString(c.scratch[:0], s)
		c.w.Write(c.scratch)
	case reflect.Bool:
		if v.Bool() {
			c.w.WriteString("true")
		} else {
			c.w.WriteString("false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.scratch = strconv.AppendInt(c.scratch[:0], v.Int(), 10)
		c.w.Write(c.scratch)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.scratch = strconv.AppendUint(c.scratch[:0], v.Uint(), 10)
		c.w.Write(c.scratch)
	case reflect.Float32, reflect.Float64:
		return c.writeCompact(v.Interface(), depth)
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			c.w.WriteString("null")
			return nil
		}
		return c.typed(v.Elem(), depth)
	case reflect.Slice:
		if v.IsNil() {
			c.w.WriteString("null")
			return nil
		}
		return c.typedArray(v, depth)
	case reflect.Array:
		return c.typedArray(v, depth)
	case reflect.Map:
		if v.IsNil() {
			c.w.WriteString("null")
			return nil
		}
		return c.typedMap(v, depth)
	case reflect.Struct:
		return c.typedStruct(v, depth)
	default:
		return c.writeCompact(v.Interface(), depth)
	}
	return nil
}

// selfEncoding reports whether values of t are left to encoding/json.
func selfEncoding(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		return false
	}
	if t == numberType {
		return true
	}
	pt := reflect.PointerTo(t)
	if t.Implements(marshalerType) || pt.Implements(marshalerType) || t.Implements(textMarshalerType) || pt.Implements(textMarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	case reflect.Map:
		return t.Key().Kind() != reflect.String
	case reflect.Struct:
		return encodePlan(t).compact
	}
	return false
}

func (c *canonWriter) typedArray(v reflect.Value, depth int) error {
	if v.Len() == 0 {
		c.w.WriteString("[]")
		return nil
	}
	c.w.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.indent(depth + 1)
		if err := c.typed(v.Index(i), depth+1); err != nil {
			return err
		}
	}
	c.indent(depth)
	c.w.WriteByte(']')
	return nil
}

func (c *canonWriter) typedMap(v reflect.Value, depth int) error {
	keys := make([]string, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := it.Key().String()
		if !utf8.ValidString(k) {
			// Keys that become equal once repaired are settled by the
			// compact road, as a decode would settle them.
			return c.writeCompact(v.Interface(), depth)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		c.w.WriteString("{}")
		return nil
	}
	slices.Sort(keys)
	c.w.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.indent(depth + 1)
		c.scratch = redact.AppendJSONString(c.scratch[:0], k)
		c.w.Write(c.scratch)
		c.w.WriteString(": ")
		if err := c.typed(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), depth+1); err != nil {
			return err
		}
	}
	c.indent(depth)
	c.w.WriteByte('}')
	return nil
}

func (c *canonWriter) typedStruct(v reflect.Value, depth int) error {
	written := false
	for _, f := range encodePlan(v.Type()).fields {
		fv, ok := redact.FieldByIndex(v, f.Index)
		if !ok || f.OmitEmpty && redact.IsEmptyJSONValue(fv) {
			continue
		}
		if written {
			c.w.WriteByte(',')
		} else {
			c.w.WriteByte('{')
		}
		written = true
		c.indent(depth + 1)
		c.w.Write(f.key)
		if err := c.typed(fv, depth+1); err != nil {
			return err
		}
	}
	if !written {
		c.w.WriteString("{}")
		return nil
	}
	c.indent(depth)
	c.w.WriteByte('}')
	return nil
}

// structEncoding is what WriteJSON needs of a struct type: its JSON
// fields (redact.JSONFields) sorted by name, each with its quoted name and
// ": ", or that it is left to encoding/json.
type structEncoding struct {
	fields  []encodeField
	compact bool
}

type encodeField struct {
	redact.JSONField
	key []byte
}

var encodePlans sync.Map // reflect.Type → *structEncoding

func encodePlan(t reflect.Type) *structEncoding {
	if p, ok := encodePlans.Load(t); ok {
		return p.(*structEncoding)
	}
	fields, unusual := redact.JSONFields(t)
	p := &structEncoding{compact: unusual}
	for _, f := range fields {
		key := append(redact.AppendJSONString(nil, f.Name), ": "...)
		p.fields = append(p.fields, encodeField{JSONField: f, key: key})
	}
	slices.SortStableFunc(p.fields, func(a, b encodeField) int { return strings.Compare(a.Name, b.Name) })
	encodePlans.Store(t, p)
	return p
}

// validUTF8 returns s with each byte that is not valid UTF-8 replaced by
// U+FFFD, as encoding/json's output decodes.
func validUTF8(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
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
