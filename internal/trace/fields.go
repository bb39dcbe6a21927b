package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Fields reads the members of JSON objects parsed by ParseJSON, checking
// each member's type and recording every problem as an Error at the
// member's JSON path, positioned in File and Line. Decode is built on it;
// it is exported so that importers of other formats (run records, session
// logs, captures) check their input the same way and report problems in
// the same words.
//
// The Opt*, ReqString, Count and Amount readers take the enclosing
// object, the JSON path of that object ("$" for the document,
// "$.actions[2]" for an action) and the member's key; the member's path is
// built only when a problem is reported, so a well-formed document costs
// no path strings. Int and Float convert a value already in hand. Absent members and members
// whose value is null read as unset: producers that serialize optional
// fields as null (Python's None, Rust's Option) mean "not set", and
// refusing them would reject most of their output.
type Fields struct {
	File string    // file name to put in errors
	Line int       // line of a JSON Lines record, or 0
	Errs ErrorList // problems found so far, in the order found
}

// Errorf records a problem at path.
func (d *Fields) Errorf(path, format string, args ...any) {
	d.Errs = append(d.Errs, &Error{File: d.File, Line: d.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// TypeError records that the value at path is not of the JSON type want,
// as "expected want, got <type of v>".
func (d *Fields) TypeError(path, want string, v any) {
	d.Errorf(path, "expected %s, got %s", want, TypeName(v))
}

// Err returns the recorded problems as an error, or nil if there are none.
func (d *Fields) Err() error { return d.Errs.Err() }

// TypeName names the JSON type of a generic value: null, boolean, string,
// number, array or object.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, int, int64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Member returns the path of member key of the object at path p: p.key,
// or p["key"] when key is not an identifier.
func Member(p, key string) string {
	if isIdent(key) {
		return p + "." + key
	}
	return p + "[" + strconv.Quote(key) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Element returns the path of element i of the array at path p.
func Element(p string, i int) string { return p + "[" + strconv.Itoa(i) + "]" }

// get returns obj[key], treating null like an absent member.
func get(obj map[string]any, key string) (any, bool) {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil, false
	}
	return v, true
}

// OptString reads an optional string member; unset is "".
func (d *Fields) OptString(obj map[string]any, p, key string) string {
	v, ok := get(obj, key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.TypeError(Member(p, key), "string", v)
	}
	return s
}

// ReqString reads a required, non-empty string member. Absent is
// "missing required field"; null or another type is a type error; "" is
// "empty <key>".
func (d *Fields) ReqString(obj map[string]any, p, key string) string {
	v, present := obj[key]
	if !present {
		d.Errorf(Member(p, key), "missing required field")
		return ""
	}
	s, ok := v.(string)
	if !ok {
		d.TypeError(Member(p, key), "string", v)
		return ""
	}
	if s == "" {
		d.Errorf(Member(p, key), "empty %s", key)
	}
	return s
}

// OptBool reads an optional boolean member; unset is nil.
func (d *Fields) OptBool(obj map[string]any, p, key string) *bool {
	v, ok := get(obj, key)
	if !ok {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		d.TypeError(Member(p, key), "boolean", v)
		return nil
	}
	return &b
}

// OptObject reads an optional object member; unset is nil.
func (d *Fields) OptObject(obj map[string]any, p, key string) map[string]any {
	v, ok := get(obj, key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		d.TypeError(Member(p, key), "object", v)
	}
	return m
}

// OptStrings reads an optional array of strings, reporting each bad
// element at its own path; unset is nil.
func (d *Fields) OptStrings(obj map[string]any, p, key string) []string {
	v, ok := get(obj, key)
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		d.TypeError(Member(p, key), "array", v)
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			d.TypeError(Element(Member(p, key), i), "string", e)
			continue
		}
		out = append(out, s)
	}
	return out
}

// OptArray reads an optional array member, whose elements the caller
// checks; ok is false when the member is unset or not an array.
func (d *Fields) OptArray(obj map[string]any, p, key string) (arr []any, ok bool) {
	v, present := get(obj, key)
	if !present {
		return nil, false
	}
	arr, ok = v.([]any)
	if !ok {
		d.TypeError(Member(p, key), "array", v)
		return nil, false
	}
	return arr, true
}

// OptInt reads an optional non-negative integer member; unset is nil.
func (d *Fields) OptInt(obj map[string]any, p, key string) *int64 {
	v, ok := get(obj, key)
	if !ok {
		return nil
	}
	n, ok := d.count(v, p, key)
	if !ok {
		return nil
	}
	return &n
}

// Count reads an optional non-negative integer member; unset is 0.
func (d *Fields) Count(obj map[string]any, p, key string) int64 {
	v, ok := get(obj, key)
	if !ok {
		return 0
	}
	n, _ := d.count(v, p, key)
	return n
}

// count converts a count member's value. The common case, a plain
// non-negative integer literal, is decided without building the member's
// path, which Int needs only to report a problem; on a large load the
// paths of every counter of every action would be most of the garbage.
func (d *Fields) count(v any, p, key string) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil && i >= 0 {
			return i, true
		}
	}
	return d.Int(v, Member(p, key), true)
}

// Amount reads an optional non-negative number member; unset is 0.
func (d *Fields) Amount(obj map[string]any, p, key string) float64 {
	v, ok := get(obj, key)
	if !ok {
		return 0
	}
	if n, ok := v.(json.Number); ok {
		if f, err := strconv.ParseFloat(string(n), 64); err == nil && f >= 0 {
			return f // the common case, without building the path
		}
	}
	f, ok := d.Float(v, Member(p, key))
	if ok && f < 0 {
		d.Errorf(Member(p, key), "expected non-negative number, got %s", numberText(v))
		return 0
	}
	return f
}

// maxExact is the largest magnitude up to which every integer is a float64.
const maxExact = 1 << 53

// Int converts the JSON number v, found at path p, to int64. Integral
// values in float form (30.0, 1e3) are accepted because JSON does not
// distinguish them and JSON Schema's "integer" accepts them too; our
// schemas and decoders must agree.
func (d *Fields) Int(v any, p string, nonNegative bool) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err == nil {
			n = i
			break
		}
		f, ferr := strconv.ParseFloat(string(x), 64)
		if ferr != nil && !errors.Is(ferr, strconv.ErrRange) {
			d.TypeError(p, "integer", v)
			return 0, false
		}
		if f != math.Trunc(f) {
			d.Errorf(p, "expected integer, got %s", x)
			return 0, false
		}
		if math.Abs(f) > maxExact {
			d.Errorf(p, "integer %s out of range", x)
			return 0, false
		}
		n = int64(f)
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxExact {
			d.Errorf(p, "expected integer, got %v", x)
			return 0, false
		}
		n = int64(x)
	case int:
		n = int64(x)
	case int64:
		n = x
	default:
		d.TypeError(p, "integer", v)
		return 0, false
	}
	if nonNegative && n < 0 {
		d.Errorf(p, "expected non-negative integer, got %d", n)
		return 0, false
	}
	return n, true
}

// Float converts the JSON number v, found at path p, to float64.
func (d *Fields) Float(v any, p string) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			// Only a range error is possible for a number the JSON
			// parser accepted; ±Inf could not be written back.
			d.Errorf(p, "number %s out of range", x)
			return 0, false
		}
		return f, true
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	d.TypeError(p, "number", v)
	return 0, false
}

func numberText(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return fmt.Sprint(v)
}
