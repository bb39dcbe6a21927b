package redact

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// Copy returns a deep copy of *v with every private payload redacted, and
// the number of replacements: the value that encoding *v as JSON,
// decoding that with UseNumber, redacting it with Value, encoding the
// result and decoding it into a new T would give, built without any of
// those steps.
//
// Going through JSON costs a map per object and an interface per value,
// several times over; a report of tens of thousands of examples spent
// most of a publish there. Copy walks the typed value instead, with the
// JSON names of the struct fields, and reproduces what the round trip
// does to the Go value as well as to its content:
//
//   - A value under a sensitive key must become Redacted, a string; where
//     the field cannot hold a string (a number, a struct, a slice or map
//     that is not empty) the decode would have failed, and Copy fails
//     with the JSON path of the member.
//   - An omitted member (omitempty on an empty value) comes back as the
//     zero value; fields encoding/json ignores (unexported, "-") come back
//     zero too.
//   - An interface value comes back in the generic form a decode gives
//     (map[string]any, []any, string, json.Number, bool, nil), so a
//     float64 there becomes a json.Number.
//   - A string comes back with each byte of invalid UTF-8 turned into
//     U+FFFD, as the encoder writes it.
//   - A value whose type encodes itself (json.Marshaler,
//     encoding.TextMarshaler), a []byte, a struct with a ",string" field
//     and a map whose keys are not plain strings take the round trip
//     itself; they are rare and small.
//
// v is not modified. A float that is not a number or infinite is an
// error, as it is for the encoder.
func Copy[T any](v *T) (*T, int, error) {
	out := new(T)
	var w walker
	if err := w.copy(reflect.ValueOf(out).Elem(), reflect.ValueOf(v).Elem(), false); err != nil {
		return nil, 0, err
	}
	return out, w.n, nil
}

// walker carries the replacement count of one Copy.
type walker struct {
	n int
}

// pathError is a Copy failure; the walk prepends the path segments as it
// returns, so a successful walk pays nothing for them.
type pathError struct {
	path []string
	msg  string
}

func (e *pathError) Error() string {
	return "redacting /" + strings.Join(e.path, "/") + ": " + e.msg
}

// at adds the segment seg in front of the path of err, when it is a
// *pathError.
func at(err error, seg string) error {
	if pe, ok := err.(*pathError); ok {
		pe.path = append([]string{strings.ReplaceAll(strings.ReplaceAll(seg, "~", "~0"), "/", "~1")}, pe.path...)
	}
	return err
}

var (
	marshalerType       = reflect.TypeFor[json.Marshaler]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// copy sets dst, a zero settable value of src's type, to the redacted
// copy of src. sensitive says src is the value of an object member with a
// sensitive key.
func (w *walker) copy(dst, src reflect.Value, sensitive bool) error {
	t := src.Type()
	if selfEncoding(t) {
		return w.roundTrip(dst, src, sensitive)
	}
	switch src.Kind() {
	case reflect.String:
		s := validString(src.String())
		if sensitive {
			if s != "" && !isMarker(s) {
				w.n++
				s = Redacted
			}
		} else {
			var k int
			s, k = redactString(s)
			w.n += k
		}
		dst.SetString(s)
	case reflect.Bool:
		dst.SetBool(src.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if sensitive {
			return cannotHold(t)
		}
		dst.SetInt(src.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if sensitive {
			return cannotHold(t)
		}
		dst.SetUint(src.Uint())
	case reflect.Float32, reflect.Float64:
		f := src.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return &pathError{msg: "unsupported value " + strconv.FormatFloat(f, 'g', -1, 64)}
		}
		if sensitive {
			return cannotHold(t)
		}
		dst.SetFloat(f)
	case reflect.Pointer:
		if src.IsNil() {
			return nil
		}
		p := reflect.New(t.Elem())
		if err := w.copy(p.Elem(), src.Elem(), sensitive); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Interface:
		if src.IsNil() {
			return nil
		}
		if t.NumMethod() != 0 {
			return &pathError{msg: "cannot decode into the interface type " + t.String()}
		}
		g, err := genericForm(src.Elem())
		if err != nil {
			return err
		}
		if sensitive {
			g = w.sensitiveValue(g)
		} else {
			g = value(g, &w.n)
		}
		if g != nil {
			dst.Set(reflect.ValueOf(g))
		}
	case reflect.Struct:
		if sensitive {
			return cannotHold(t)
		}
		return w.copyStruct(dst, src)
	case reflect.Slice:
		if src.IsNil() {
			return nil
		}
		if sensitive {
			return cannotHold(t)
		}
		dst.Set(reflect.MakeSlice(t, src.Len(), src.Len()))
		return w.copyElems(dst, src)
	case reflect.Array:
		if sensitive {
			return cannotHold(t)
		}
		return w.copyElems(dst, src)
	case reflect.Map:
		if src.IsNil() {
			return nil
		}
		if sensitive {
			return cannotHold(t)
		}
		return w.copyMap(dst, src)
	default:
		return &pathError{msg: "unsupported type " + t.String()}
	}
	return nil
}

// selfEncoding reports whether values of t take the JSON round trip:
// they encode or decode themselves, or encoding/json treats them
// specially. A pointer is followed to its element first.
func selfEncoding(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		return false
	}
	pt := reflect.PointerTo(t)
	for _, it := range []reflect.Type{marshalerType, textMarshalerType, unmarshalerType, textUnmarshalerType} {
		if t.Implements(it) || pt.Implements(it) {
			return true
		}
	}
	switch t.Kind() {
	case reflect.Slice:
		return t.Elem().Kind() == reflect.Uint8
	case reflect.Map:
		return t.Key().Kind() != reflect.String || reflect.PointerTo(t.Key()).Implements(textUnmarshalerType)
	case reflect.Struct:
		_, unusual := jsontext.Fields(t)
		return unusual
	}
	return false
}

func cannotHold(t reflect.Type) error {
	return &pathError{msg: "the member's key is sensitive, and a " + t.String() + " cannot hold " + strconv.Quote(Redacted)}
}

func (w *walker) copyElems(dst, src reflect.Value) error {
	for i := range src.Len() {
		if err := w.copy(dst.Index(i), src.Index(i), false); err != nil {
			return at(err, strconv.Itoa(i))
		}
	}
	return nil
}

func (w *walker) copyStruct(dst, src reflect.Value) error {
	fields, _ := jsontext.Fields(src.Type())
	for _, f := range fields {
		sv, ok := jsontext.FieldByIndex(src, f.Index)
		if !ok || (f.OmitEmpty && jsontext.IsEmpty(sv)) {
			continue
		}
		dv := fieldByIndexAlloc(dst, f.Index)
		if !dv.CanSet() {
			return &pathError{path: []string{f.Name}, msg: "the field is reached through an unexported embedded struct"}
		}
		if err := w.copy(dv, sv, SensitiveKey(f.Name)); err != nil {
			return at(err, f.Name)
		}
	}
	return nil
}

// copyMap copies a map with string keys as value copies a
// map[string]any: a key holding a secret is redacted, and keys that then
// collide get "~2", "~3", … in the order of the original keys.
func (w *walker) copyMap(dst, src reflect.Value) error {
	t := src.Type()
	keys := make([]string, 0, src.Len())
	for it := src.MapRange(); it.Next(); {
		k := it.Key().String()
		if !utf8.ValidString(k) {
			// Keys that become equal once repaired collapse in a way
			// the round trip decides.
			return w.roundTrip(dst, src, false)
		}
		keys = append(keys, k)
	}
	out := reflect.MakeMapWithSize(t, len(keys))
	taken := make(map[string]bool, len(keys))
	var renamed []string
	put := func(name, orig string) error {
		v := reflect.New(t.Elem()).Elem()
		if err := w.copy(v, src.MapIndex(reflect.ValueOf(orig).Convert(t.Key())), SensitiveKey(name)); err != nil {
			return at(err, name)
		}
		out.SetMapIndex(reflect.ValueOf(name).Convert(t.Key()), v)
		taken[name] = true
		return nil
	}
	for _, k := range keys {
		if _, ok := Secret(k); ok {
			renamed = append(renamed, k)
			continue
		}
		if err := put(k, k); err != nil {
			return err
		}
	}
	slices.Sort(renamed)
	for _, k := range renamed {
		rk, c := redactString(k)
		w.n += c
		for i := 2; taken[rk]; i++ {
			rk, _ = redactString(k)
			rk += "~" + strconv.Itoa(i)
		}
		if err := put(rk, k); err != nil {
			return err
		}
	}
	dst.Set(out)
	return nil
}

// roundTrip copies src into dst through JSON, as the round trip Copy
// stands for would.
func (w *walker) roundTrip(dst, src reflect.Value, sensitive bool) error {
	var v any
	if src.CanAddr() {
		v = src.Addr().Interface()
	} else {
		v = src.Interface()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return &pathError{msg: err.Error()}
	}
	g, err := decodeNumbers(b)
	if err != nil {
		return &pathError{msg: err.Error()}
	}
	if sensitive {
		g = w.sensitiveValue(g)
	} else {
		g = value(g, &w.n)
	}
	if b, err = json.Marshal(g); err != nil {
		return &pathError{msg: err.Error()}
	}
	p := reflect.New(dst.Type())
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(p.Interface()); err != nil {
		return &pathError{msg: err.Error()}
	}
	dst.Set(p.Elem())
	return nil
}

// sensitiveValue is what a value under a sensitive key becomes.
func (w *walker) sensitiveValue(v any) any {
	return field(sensitiveMarkerKey, v, &w.n)
}

// sensitiveMarkerKey is a key SensitiveKey accepts, to reuse field.
const sensitiveMarkerKey = "secret"

// genericForm returns v as decoding its JSON encoding with UseNumber
// gives it. Values already in that form (the common case: they were
// decoded that way) are returned as they are, to be copied by value.
func genericForm(v reflect.Value) (any, error) {
	x := v.Interface()
	if isGeneric(x) {
		return x, nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, &pathError{msg: err.Error()}
	}
	g, err := decodeNumbers(b)
	if err != nil {
		return nil, &pathError{msg: err.Error()}
	}
	return g, nil
}

// isGeneric reports whether v is made only of what a decode with
// UseNumber produces, with valid UTF-8 strings and keys.
func isGeneric(v any) bool {
	switch v := v.(type) {
	case nil, bool, json.Number:
		return true
	case string:
		return utf8.ValidString(v)
	case []any:
		for _, e := range v {
			if !isGeneric(e) {
				return false
			}
		}
		return v != nil
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) || !isGeneric(e) {
				return false
			}
		}
		return v != nil
	}
	return false
}

func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var g any
	err := d.Decode(&g)
	return g, err
}

// validString returns s with each byte that is not valid UTF-8 replaced
// by U+FFFD, as encoding/json writes it.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// fieldByIndexAlloc is v.FieldByIndex that allocates nil embedded
// pointers on the way.
func fieldByIndexAlloc(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}
