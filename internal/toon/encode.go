package toon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Delimiter is a TOON value separator. The zero value is Comma.
type Delimiter int

// The three delimiters of §11.
const (
	Comma Delimiter = iota
	Tab
	Pipe
)

// byte returns the delimiter character.
func (d Delimiter) byte() byte {
	switch d {
	case Tab:
		return '\t'
	case Pipe:
		return '|'
	}
	return ','
}

// symbol is what a bracket segment carries for d: nothing for comma.
func (d Delimiter) symbol() string {
	switch d {
	case Tab:
		return "\t"
	case Pipe:
		return "|"
	}
	return ""
}

// String returns the delimiter's name: comma, tab or pipe.
func (d Delimiter) String() string {
	switch d {
	case Tab:
		return "tab"
	case Pipe:
		return "pipe"
	}
	return "comma"
}

// ParseDelimiter returns the delimiter named comma, tab or pipe (or the
// character itself).
func ParseDelimiter(name string) (Delimiter, error) {
	switch name {
	case "comma", ",":
		return Comma, nil
	case "tab", "\t":
		return Tab, nil
	case "pipe", "|":
		return Pipe, nil
	}
	return Comma, fmt.Errorf("unknown delimiter %q (want comma, tab or pipe)", name)
}

// EncodeOptions configures Encode. The zero value is the spec's default:
// two-space indentation and commas everywhere.
type EncodeOptions struct {
	// Indent is the number of spaces per level; 0 means 2.
	Indent int
	// Delimiter separates inline array values and row cells; every
	// array header declares it (§11).
	Delimiter Delimiter
	// DocumentDelimiter decides which object field values (key: value)
	// need quotes (§11.1). It is separate from Delimiter because the spec
	// separates them: a pipe-delimited table may sit in a document whose
	// field values are quoted against commas, as in the spec's
	// delimiter-scoping example. The zero value is Comma.
	DocumentDelimiter Delimiter
	// MaxDepth bounds how deeply arrays and objects may nest; 0 means
	// DefaultMaxDepth. A deeper value is refused with ErrTooDeep.
	MaxDepth int
}

// DefaultMaxDepth is the deepest nesting of arrays and objects Encode
// and EncodeJSON accept by default. TOON indents every level, so the
// text of a value nested d deep holds d lines indented up to d levels:
// its size grows with the square of d while the JSON grows with d (16 KB
// of nested brackets is 67 MB of TOON). A bound on d makes the output at
// most a constant times the input. Real documents nest a few dozen
// levels; encoding/json's own bound is 10000.
const DefaultMaxDepth = 256

// ErrTooDeep: a value nests arrays and objects deeper than the
// encoder's MaxDepth.
var ErrTooDeep = errors.New("nesting too deep")

// Encode returns the TOON text of v, without a trailing newline (§12).
// v is a JSON-model value (see the package comment for the host types
// accepted). The only errors are values that cannot be represented:
// an invalid json.Number, a host value encoding/json rejects, or one
// nested deeper than opts.MaxDepth (ErrTooDeep).
func Encode(v any, opts EncodeOptions) ([]byte, error) {
	var b bytes.Buffer
	if err := EncodeTo(&b, v, opts); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// EncodeTo writes the TOON text of v to w, as Encode returns it. What it
// holds besides v is a copy of v and one line: the text, which can be
// much larger than v, is never held whole. Nothing is written when v
// cannot be represented.
func EncodeTo(w io.Writer, v any, opts EncodeOptions) error {
	max := opts.MaxDepth
	if max <= 0 {
		max = DefaultMaxDepth
	}
	n, err := normalize(v, 0, max)
	if err != nil {
		return err
	}
	if opts.Indent <= 0 {
		opts.Indent = 2
	}
	e := &encoder{opts: opts, doc: opts.DocumentDelimiter.byte(), w: bufio.NewWriter(w)}
	e.root(n)
	return e.w.Flush()
}

// normalize converts a host value to the encoder's tree: Object with
// unique keys, []any, string, number, bool and nil. depth is how many
// arrays and objects enclose v; one nesting deeper than max (when max is
// positive) is refused.
func normalize(v any, depth, max int) (any, error) {
	switch v.(type) {
	case Object, map[string]any, []any:
		if max > 0 && depth >= max {
			return nil, fmt.Errorf("%w: arrays and objects nest more than %d deep", ErrTooDeep, max)
		}
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool:
		return v, nil
	case string:
		return strings.ToValidUTF8(v, "\uFFFD"), nil
	case json.Number:
		if !isNumberToken(string(v)) {
			return nil, fmt.Errorf("invalid number %q", string(v))
		}
		return number(canonicalNumber(string(v))), nil
	case float64:
		return floatNumber(v, 64), nil
	case float32:
		return floatNumber(float64(v), 32), nil
	case int:
		return number(strconv.FormatInt(int64(v), 10)), nil
	case int8:
		return number(strconv.FormatInt(int64(v), 10)), nil
	case int16:
		return number(strconv.FormatInt(int64(v), 10)), nil
	case int32:
		return number(strconv.FormatInt(int64(v), 10)), nil
	case int64:
		return number(strconv.FormatInt(v, 10)), nil
	case uint:
		return number(strconv.FormatUint(uint64(v), 10)), nil
	case uint8:
		return number(strconv.FormatUint(uint64(v), 10)), nil
	case uint16:
		return number(strconv.FormatUint(uint64(v), 10)), nil
	case uint32:
		return number(strconv.FormatUint(uint64(v), 10)), nil
	case uint64:
		return number(strconv.FormatUint(v, 10)), nil
	case Object:
		out := make(Object, 0, len(v))
		index := make(map[string]int, len(v))
		for _, m := range v {
			x, err := normalize(m.Value, depth+1, max)
			if err != nil {
				return nil, err
			}
			key := strings.ToValidUTF8(m.Key, "\uFFFD")
			if i, dup := index[key]; dup {
				out[i].Value = x
				continue
			}
			index[key] = len(out)
			out = append(out, Member{key, x})
		}
		return out, nil
	case *Object:
		if v == nil {
			return nil, nil
		}
		return normalize(*v, depth, max)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := make(Object, 0, len(v))
		for _, k := range keys {
			o = append(o, Member{k, v[k]})
		}
		return normalize(o, depth, max)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			var err error
			if out[i], err = normalize(x, depth+1, max); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// Everything else goes through encoding/json, which honours
	// json.Marshaler and struct tags (§3, Appendix F.1). Nil pointers and
	// the like marshal to null.
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && rv.IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	x, err := readJSON(b, max-depth)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	return normalize(x, depth, max)
}

// floatNumber formats f with the fewest digits that read back as f, then
// canonicalizes; NaN and ±Inf become null (§3).
func floatNumber(f float64, bits int) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return number(canonicalNumber(strconv.FormatFloat(f, 'e', -1, bits)))
}

type encoder struct {
	opts  EncodeOptions
	doc   byte // document delimiter
	w     *bufio.Writer
	begun bool // a line was written: the next one starts with a newline
}

// spaces is written in pieces for the indentation of a line.
var spaces = bytes.Repeat([]byte(" "), 256)

// line writes s at depth. Write errors are the bufio.Writer's to keep:
// Flush returns the first.
func (e *encoder) line(depth int, s string) {
	if e.begun {
		e.w.WriteByte('\n')
	}
	e.begun = true
	for n := depth * e.opts.Indent; n > 0; n -= len(spaces) {
		e.w.Write(spaces[:min(n, len(spaces))])
	}
	e.w.WriteString(s)
}

// root writes the document form of §5: an empty object is an empty
// document, an empty array is [], a keyed-eligible object is a keyless
// keyed table.
func (e *encoder) root(v any) {
	switch v := v.(type) {
	case Object:
		if len(v) == 0 {
			return
		}
		if fields := keyedFields(v); fields != nil {
			e.keyed(0, "", 0, "", v, fields)
			return
		}
		e.fields(0, v)
	case []any:
		if len(v) == 0 {
			e.line(0, "[]")
			return
		}
		e.array(0, "", 0, "", v, true)
	default:
		e.line(0, primitive(v, e.doc))
	}
}

// fields writes the members of o at depth.
func (e *encoder) fields(depth int, o Object) {
	for _, m := range o {
		e.field(depth, "", depth, m.Key, m.Value)
	}
}

// field writes one member. The line goes at lineDepth behind prefix (the
// "- " of a list item carrying its first field), while the member itself
// stands at depth, which is one deeper than lineDepth on a hyphen line
// (§10's depth model); its content goes at depth+1.
func (e *encoder) field(lineDepth int, prefix string, depth int, key string, v any) {
	k := encodeKey(key)
	switch v := v.(type) {
	case Object:
		if fields := keyedFields(v); fields != nil {
			e.keyed(lineDepth, prefix, depth, k, v, fields)
			return
		}
		e.line(lineDepth, prefix+k+":")
		e.fields(depth+1, v)
	case []any:
		if len(v) == 0 {
			e.line(lineDepth, prefix+k+": []")
			return
		}
		e.array(lineDepth, prefix, depth, k, v, true)
	default:
		e.line(lineDepth, prefix+k+": "+primitive(v, e.doc))
	}
}

// array writes a non-empty array under the encoded key k (empty for a
// root or list-item array). tabular is false for keyless arrays inside
// lists, where §9.4 forbids the tabular form.
func (e *encoder) array(lineDepth int, prefix string, depth int, k string, a []any, tabular bool) {
	d := e.opts.Delimiter
	head := prefix + k + "[" + strconv.Itoa(len(a)) + d.symbol() + "]"
	if allPrimitive(a) {
		cells := make([]string, len(a))
		for i, x := range a {
			cells[i] = primitive(x, d.byte())
		}
		e.line(lineDepth, head+": "+strings.Join(cells, string(d.byte())))
		return
	}
	if tabular {
		if fields := tableFields(a); fields != nil {
			e.line(lineDepth, head+fieldList(fields, d)+":")
			for _, x := range a {
				e.line(depth+1, strings.Join(row(nil, x.(Object), fields, d.byte()), string(d.byte())))
			}
			return
		}
	}
	e.line(lineDepth, head+":")
	for _, x := range a {
		e.item(depth+1, x)
	}
}

// item writes one element of an expanded list at depth (§9.4, §10).
func (e *encoder) item(depth int, v any) {
	switch v := v.(type) {
	case Object:
		if len(v) == 0 {
			e.line(depth, "-")
			return
		}
		e.field(depth, "- ", depth+1, v[0].Key, v[0].Value)
		e.fields(depth+1, v[1:])
	case []any:
		if len(v) == 0 {
			// §9.2: never "- []" for an inner array.
			e.line(depth, "- [0"+e.opts.Delimiter.symbol()+"]:")
			return
		}
		e.array(depth, "- ", depth, "", v, false)
	default:
		e.line(depth, "- "+primitive(v, e.opts.Delimiter.byte()))
	}
}

// keyed writes an object in keyed tabular form (§9.5).
func (e *encoder) keyed(lineDepth int, prefix string, depth int, k string, o Object, fields []field) {
	d := e.opts.Delimiter
	e.line(lineDepth, prefix+k+"["+strconv.Itoa(len(o))+":"+d.symbol()+"]"+fieldList(fields, d)+":")
	for _, m := range o {
		cells := row(nil, m.Value.(Object), fields, d.byte())
		e.line(depth+1, encodeKey(m.Key)+": "+strings.Join(cells, string(d.byte())))
	}
}

// field is one entry of a tabular field list: a leaf, or a nested group
// when sub is not empty.
type field struct {
	name string
	sub  []field
}

// tableFields returns the field list for a tabular array (§9.3), or nil
// when the array does not qualify.
func tableFields(a []any) []field {
	objs := make([]Object, len(a))
	for i, x := range a {
		o, ok := x.(Object)
		if !ok {
			return nil
		}
		objs[i] = o
	}
	return uniformFields(objs)
}

// keyedFields returns the field list for an object in keyed tabular form
// (§9.5: at least two entries whose values are uniform objects), or nil.
func keyedFields(o Object) []field {
	if len(o) < 2 {
		return nil
	}
	objs := make([]Object, len(o))
	for i, m := range o {
		x, ok := m.Value.(Object)
		if !ok {
			return nil
		}
		objs[i] = x
	}
	return uniformFields(objs)
}

// uniformFields returns the shared field tree of objs, in the first
// object's order, when every object is non-empty, all have the same keys
// and every column is uniform-primitive or nested-uniform; otherwise nil.
// The cost is O(objects × keys²) from Object.Get, fine for the small
// records tables hold.
func uniformFields(objs []Object) []field {
	first := objs[0]
	if len(first) == 0 {
		return nil
	}
	for _, o := range objs[1:] {
		if len(o) != len(first) {
			return nil
		}
		for _, m := range first {
			if _, ok := o.Get(m.Key); !ok {
				return nil
			}
		}
	}
	fields := make([]field, len(first))
	for i, m := range first {
		fields[i].name = m.Key
		col := make([]any, len(objs))
		for j, o := range objs {
			col[j], _ = o.Get(m.Key)
		}
		if allPrimitive(col) {
			continue
		}
		sub := make([]Object, len(col))
		for j, x := range col {
			o, ok := x.(Object)
			if !ok {
				return nil
			}
			sub[j] = o
		}
		if fields[i].sub = uniformFields(sub); fields[i].sub == nil {
			return nil
		}
	}
	return fields
}

func allPrimitive(a []any) bool {
	for _, x := range a {
		switch x.(type) {
		case Object, []any:
			return false
		}
	}
	return true
}

// fieldList renders {f1<d>f2{s1<d>s2}}.
func fieldList(fields []field, d Delimiter) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = encodeKey(f.name)
		if f.sub != nil {
			parts[i] += fieldList(f.sub, d)
		}
	}
	return "{" + strings.Join(parts, string(d.byte())) + "}"
}

// row appends o's leaf values in depth-first field order.
func row(cells []string, o Object, fields []field, delim byte) []string {
	for _, f := range fields {
		v, _ := o.Get(f.name)
		if f.sub != nil {
			cells = row(cells, v.(Object), f.sub, delim)
			continue
		}
		cells = append(cells, primitive(v, delim))
	}
	return cells
}

// primitive renders a primitive, quoting a string per §7.2 against delim.
func primitive(v any, delim byte) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		if v {
			return "true"
		}
		return "false"
	case number:
		return string(v)
	case string:
		if needsQuotes(v, delim) {
			return quote(v)
		}
		return v
	}
	return "null" // unreachable for normalized values
}

// needsQuotes implements the list of §7.2.
func needsQuotes(s string, delim byte) bool {
	if s == "" || s == "true" || s == "false" || s == "null" {
		return true
	}
	if isSpace(s[0]) || isSpace(s[len(s)-1]) || s[0] == '-' || s[0] == '#' {
		return true
	}
	if isNumericLike(s) {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20, c == delim:
			return true
		}
		switch c {
		case ':', '"', '\\', '[', ']', '{', '}':
			return true
		}
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// isNumericLike matches /^[+-]?[0-9]+(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?$/i,
// which is wider than the decoder's number grammar on purpose (§7.2).
func isNumericLike(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	return s != "" && s[0] != '-' && isNumberToken(s)
}

// quote returns s in double quotes with the escapes of §7.1.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// encodeKey quotes a key unless it matches ^[A-Za-z_][A-Za-z0-9_.]*$ (§7.3).
func encodeKey(k string) string {
	if isIdent(k) {
		return k
	}
	return quote(k)
}

func isIdent(k string) bool {
	if k == "" || !utf8.ValidString(k) {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '.')) {
			return false
		}
	}
	return true
}
