package synth

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// decoder fills a struct from a generic document (what encoding/json with
// UseNumber or BurntSushi/toml decode into map[string]any) and reports
// every problem with its key path: a key the struct does not have, a value
// of the wrong type, a number out of range. Both formats go through it so
// an experiment.toml and a spec.json are held to the same rules, and the
// error names the file, the line where it is known and the key path.
//
// Struct fields are matched by their `key` tag; a field without one is not
// decoded. Supported field types: string, bool, int, float64, *float64,
// []string, []struct, struct, map[string]any.
type decoder struct {
	file string
	// root is the first element of every path: "$" for JSON documents,
	// "" for TOML, whose key paths read spec.properties[0].metric.
	root string
	// line finds the line of a key path; nil when lines are not known.
	line func(path string) int
	errs trace.ErrorList
}

func (d *decoder) errorf(path, format string, args ...any) {
	e := &trace.Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if d.line != nil {
		e.Line = d.line(path)
	}
	d.errs = append(d.errs, e)
}

func (d *decoder) join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// object decodes m into the struct pointed to by dst.
func (d *decoder) object(path string, m map[string]any, dst reflect.Value) {
	t := dst.Type()
	fields := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		if k := t.Field(i).Tag.Get("key"); k != "" {
			fields[k] = i
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := d.join(path, k)
		i, ok := fields[k]
		if !ok {
			d.errorf(p, "unknown key %q", k)
			continue
		}
		d.value(p, m[k], dst.Field(i))
	}
}

var anyMapType = reflect.TypeOf(map[string]any{})

func (d *decoder) value(path string, v any, dst reflect.Value) {
	switch dst.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			d.errorf(path, "expected string, got %s", typeName(v))
			return
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			d.errorf(path, "expected boolean, got %s", typeName(v))
			return
		}
		dst.SetBool(b)
	case reflect.Int:
		n, ok := asInt(v)
		if !ok {
			d.errorf(path, "expected integer, got %s", typeName(v))
			return
		}
		dst.SetInt(n)
	case reflect.Float64:
		f, ok := asFloat(v)
		if !ok {
			d.errorf(path, "expected number, got %s", typeName(v))
			return
		}
		dst.SetFloat(f)
	case reflect.Pointer:
		elem := reflect.New(dst.Type().Elem())
		n := len(d.errs)
		d.value(path, v, elem.Elem())
		if len(d.errs) == n {
			dst.Set(elem)
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			d.errorf(path, "expected table, got %s", typeName(v))
			return
		}
		d.object(path, m, dst)
	case reflect.Slice:
		list, ok := asList(v)
		if !ok {
			d.errorf(path, "expected array, got %s", typeName(v))
			return
		}
		out := reflect.MakeSlice(dst.Type(), len(list), len(list))
		for i, x := range list {
			d.value(fmt.Sprintf("%s[%d]", path, i), x, out.Index(i))
		}
		dst.Set(out)
	case reflect.Map:
		if dst.Type() != anyMapType {
			panic("synth: decoder: unsupported map type " + dst.Type().String())
		}
		m, ok := v.(map[string]any)
		if !ok {
			d.errorf(path, "expected table, got %s", typeName(v))
			return
		}
		dst.Set(reflect.ValueOf(normalize(m)))
	case reflect.Interface:
		dst.Set(reflect.ValueOf(normalize(v)))
	default:
		panic("synth: decoder: unsupported field type " + dst.Type().String())
	}
}

// asList accepts []any and the []map[string]any BurntSushi/toml gives for
// arrays of tables.
func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []map[string]any:
		out := make([]any, len(l))
		for i, m := range l {
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case json.Number:
		i, err := strconv.ParseInt(string(n), 10, 64)
		return i, err == nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return int64(n), true
		}
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// normalize turns a decoded document into the value model of this package:
// nil, bool, string, int64, float64, []any and map[string]any. JSON numbers
// written without a fraction or exponent become int64, so that sum([1, 2])
// is 3, not 3.0, in a capsule as in the data file.
func normalize(v any) any {
	switch x := v.(type) {
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
				return i
			}
		}
		f, _ := x.Float64()
		return f
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

// typeName names the type of a generic value as a user reads it.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64, int, json.Number, float64:
		return "number"
	case []any, []map[string]any:
		return "array"
	case map[string]any:
		return "table"
	}
	return fmt.Sprintf("%T", v)
}
