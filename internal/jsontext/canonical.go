package jsontext

import (
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Canonical returns v as canonical JSON (see the package comment) with a
// final newline.
//
// v is walked, not marshalled and decoded again: the generic values of
// decoded JSON (maps, lists, strings, integers, booleans) are written
// directly, other values by reflection, with struct fields by their JSON
// names (Fields), sorted, and map keys sorted. What the walk does not
// write itself (a value with its own MarshalJSON or MarshalText, a number
// that is not an integer, a json.Number, a []byte, a struct with a
// ",string" field, a map whose keys are not plain strings or not valid
// UTF-8) is encoded with encoding/json, one value at a time, and that
// compact text rewritten by AppendIndent.
func Canonical(v any) ([]byte, error) {
	// Written to a bytes.Buffer, which doubles as it grows, where a slice
	// grown by append grows by a quarter once large and would copy a
	// report of tens of megabytes many times over.
	var buf bytes.Buffer
	if err := WriteCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteCanonical writes Canonical(v) to w as it is walked, holding about
// 64 KiB of output and one self-encoding value's compact text at a time,
// so that a report of hundreds of megabytes is not held twice.
func WriteCanonical(w io.Writer, v any) error {
	e := encoder{w: w}
	if err := e.value(v, 0); err != nil {
		return err
	}
	e.out = append(e.out, '\n')
	_, err := w.Write(e.out)
	return err
}

// AppendCanonical appends the canonical form of v to dst as written at
// nesting depth depth (see AppendIndent), without a final newline.
func AppendCanonical(dst []byte, v any, depth int) ([]byte, error) {
	e := encoder{out: dst}
	err := e.value(v, depth)
	return e.out, err
}

// flushAt is how much output WriteCanonical holds before writing it.
const flushAt = 64 << 10

// An encoder writes canonical JSON to out, and out to w (when set)
// whenever it has grown past flushAt.
type encoder struct {
	out []byte
	w   io.Writer
	x   indenter
}

// next is called between elements and members: it passes what is
// written on to w.
func (e *encoder) next() error {
	if e.w == nil || len(e.out) < flushAt {
		return nil
	}
	_, err := e.w.Write(e.out)
	e.out = e.out[:0]
	return err
}

// value writes v, the generic values of decoded JSON directly.
func (e *encoder) value(v any, depth int) error {
	switch v := v.(type) {
	case nil:
		e.out = append(e.out, "null"...)
	case bool:
		e.out = strconv.AppendBool(e.out, v)
	case string:
		e.out = AppendString(e.out, v)
	case int:
		e.out = strconv.AppendInt(e.out, int64(v), 10)
	case int64:
		e.out = strconv.AppendInt(e.out, v, 10)
	case []any:
		if v == nil {
			e.out = append(e.out, "null"...)
			return nil
		}
		return e.seq('[', ']', len(v), depth, func(i int) error { return e.value(v[i], depth+1) })
	case map[string]any:
		if v == nil {
			e.out = append(e.out, "null"...)
			return nil
		}
		var small [8]string // most objects are small: their keys stay off the heap
		keys := small[:0]
		for k := range v {
			if !utf8.ValidString(k) {
				// Keys that become equal once repaired are settled by
				// the compact road, as a decode would settle them.
				return e.compact(v, depth)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return e.seq('{', '}', len(keys), depth, func(i int) error {
			e.out = append(AppendQuote(e.out, keys[i]), ": "...)
			return e.value(v[keys[i]], depth+1)
		})
	default:
		return e.typed(reflect.ValueOf(v), depth)
	}
	return nil
}

// seq writes an array (open '[') or an object (open '{') of n elements
// or members, elem writing each (a member with its name).
func (e *encoder) seq(open, end byte, n, depth int, elem func(i int) error) error {
	if n == 0 {
		e.out = append(e.out, open, end)
		return nil
	}
	e.out = append(e.out, open)
	for i := range n {
		if i > 0 {
			e.out = append(e.out, ',')
		}
		e.out = AppendNewline(e.out, depth+1)
		if err := elem(i); err != nil {
			return err
		}
		if err := e.next(); err != nil {
			return err
		}
	}
	e.out = append(AppendNewline(e.out, depth), end)
	return nil
}

// compact encodes v with encoding/json and writes that text canonically.
func (e *encoder) compact(v any, depth int) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.out, err = e.x.append(e.out, raw, depth)
	return err
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	numberType        = reflect.TypeFor[json.Number]()
)

// typed writes v by reflection.
func (e *encoder) typed(v reflect.Value, depth int) error {
	if !v.IsValid() {
		e.out = append(e.out, "null"...)
		return nil
	}
	if selfEncoding(v.Type()) {
		if v.CanAddr() {
			return e.compact(v.Addr().Interface(), depth)
		}
		return e.compact(v.Interface(), depth)
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Map:
		if v.IsNil() {
			e.out = append(e.out, "null"...)
			return nil
		}
	}
	switch v.Kind() {
	case reflect.String:
		e.out = AppendString(e.out, v.String())
	case reflect.Bool:
		e.out = strconv.AppendBool(e.out, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.out = strconv.AppendInt(e.out, v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		e.out = strconv.AppendUint(e.out, v.Uint(), 10)
	case reflect.Interface:
		// The interface's own value, unboxed without a copy, takes the
		// generic road.
		return e.value(v.Interface(), depth)
	case reflect.Pointer:
		return e.typed(v.Elem(), depth)
	case reflect.Slice, reflect.Array:
		return e.seq('[', ']', v.Len(), depth, func(i int) error { return e.typed(v.Index(i), depth+1) })
	case reflect.Map:
		return e.typedMap(v, depth)
	case reflect.Struct:
		return e.typedStruct(v, depth)
	default: // floats, and what encoding/json refuses
		return e.compact(v.Interface(), depth)
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
		return structPlan(t).compact
	}
	return false
}

func (e *encoder) typedMap(v reflect.Value, depth int) error {
	keys := make([]string, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k := it.Key().String()
		if !utf8.ValidString(k) {
			return e.compact(v.Interface(), depth) // as for map[string]any
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kt := v.Type().Key()
	return e.seq('{', '}', len(keys), depth, func(i int) error {
		e.out = append(AppendQuote(e.out, keys[i]), ": "...)
		return e.typed(v.MapIndex(reflect.ValueOf(keys[i]).Convert(kt)), depth+1)
	})
}

func (e *encoder) typedStruct(v reflect.Value, depth int) error {
	written := false
	for _, f := range structPlan(v.Type()).fields {
		fv, ok := FieldByIndex(v, f.Index)
		if !ok || f.OmitEmpty && IsEmpty(fv) {
			continue
		}
		if written {
			e.out = append(e.out, ',')
		} else {
			e.out = append(e.out, '{')
		}
		written = true
		e.out = AppendNewline(e.out, depth+1)
		e.out = append(e.out, f.key...)
		if err := e.typed(fv, depth+1); err != nil {
			return err
		}
		if err := e.next(); err != nil {
			return err
		}
	}
	if !written {
		e.out = append(e.out, "{}"...)
		return nil
	}
	e.out = append(AppendNewline(e.out, depth), '}')
	return nil
}

// structEncoding is what the walk needs of a struct type: its JSON
// fields sorted by name, each with its quoted name and ": ", or that it
// is left to encoding/json.
type structEncoding struct {
	fields  []encodeField
	compact bool
}

type encodeField struct {
	Field
	key []byte
}

var structPlans sync.Map // reflect.Type → *structEncoding

func structPlan(t reflect.Type) *structEncoding {
	if p, ok := structPlans.Load(t); ok {
		return p.(*structEncoding)
	}
	fields, unusual := Fields(t)
	p := &structEncoding{compact: unusual}
	for _, f := range fields {
		key := append(AppendQuote(nil, f.Name), ": "...)
		p.fields = append(p.fields, encodeField{Field: f, key: key})
	}
	slices.SortStableFunc(p.fields, func(a, b encodeField) int { return strings.Compare(a.Name, b.Name) })
	structPlans.Store(t, p)
	return p
}

// AppendCompact appends v as encoding/json's Encoder writes it with
// SetEscapeHTML(false), without the newline: compact, map keys sorted.
// The generic values of decoded JSON, integers, floats and []string are
// written directly, since callers digest every step's arguments with it
// and encoding/json's reflection cost more than the digest.
func AppendCompact(dst []byte, v any) ([]byte, error) {
	if out, ok := appendCompact(dst, v); ok {
		return out, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// appendCompact appends v as AppendCompact writes it, or reports false
// for a value holding a type it leaves to encoding/json.
func appendCompact(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return AppendQuote(dst, v), true
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case float64:
		return AppendFloat(dst, v)
	case json.Number:
		if v == "" {
			return append(dst, '0'), true // as encoding/json writes it
		}
		if !IsNumber(string(v)) {
			return dst, false // encoding/json's error
		}
		return append(dst, v...), true
	case []string:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, s := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendQuote(dst, s)
		}
		return append(dst, ']'), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendCompact(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		var small [8]string // most objects are small: their keys stay off the heap
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json sorts string keys by their bytes
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(AppendQuote(dst, k), ':')
			var ok bool
			if dst, ok = appendCompact(dst, v[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// AppendFloat appends f as encoding/json writes a float64: the shortest
// decimal that round-trips, in exponent form only for very small or
// large magnitudes. It reports false, appending nothing, for NaN and the
// infinities, which encoding/json refuses.
func AppendFloat(dst []byte, f float64) ([]byte, bool) {
	if f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308 {
		return dst, false
	}
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}
