package trace

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Duplicates returns an error for every object member of data whose name
// an earlier member of the same object has, at the line of the duplicate
// and with its JSON path: `a.json:7: $.actions[0].name: duplicate key
// "name"`. data must be valid JSON (Duplicates stops at the first syntax
// error without reporting it); line is the line data starts on, as for
// ParseJSON.
//
// encoding/json, and so every decoder built on it, keeps the last of two
// members with the same name. A reviewer reading the first one would then
// approve a different value from the one that is used; inputs that are
// reviewed or run (traces, plans, bundle manifests) refuse them instead.
//
// Duplicates is CheckNames for a document decoded into generic values,
// whose member names are map keys and so compared exactly.
func Duplicates(data []byte, file string, line int) ErrorList {
	return CheckNames(data, file, line, nil)
}

// CheckNames returns an error for every object member of data that
// encoding/json would decode differently from how a person reading the
// text takes it, at the member's line and with its JSON path:
//
//   - a name an earlier member of the same object has (see Duplicates):
//     `a.json:7: $.promotion.status: duplicate key "status"`;
//   - a name that no field of the Go struct the object is decoded into
//     has, but that equals a field's name under Unicode case folding:
//     `a.json:9: $.workflow.Path: key "Path" is not "path": names are
//     case-sensitive`.
//
// into is the value data is decoded into (a pointer to it, or the value
// itself; only its type is used); nil checks duplicates alone, for a
// document read as generic values.
//
// encoding/json matches member names to struct fields case-insensitively,
// with the folding of strings.EqualFold, which goes beyond ASCII: "ſha256"
// (U+017F, long s) is "sha256" to it, and "Kind" with a Kelvin sign is
// "kind". With the last member winning, a manifest holding "path" for the
// reviewer and "Path" further down would run the file the reviewer never
// read. Refusing such names makes every decode built on CheckNames exact
// (a member either names a field byte for byte or is unknown to it),
// without a second JSON decoder: encoding/json has no case-sensitive mode.
//
// The fields of a struct are found as encoding/json finds them: exported
// fields by their json tag's name or their Go name, "-" skipped, the
// fields of an untagged embedded struct promoted. A type with its own
// UnmarshalJSON (or UnmarshalText) decodes its value itself and is not
// looked into; map keys are exact to encoding/json and are not checked,
// but map values, slice and array elements are, by their Go type.
func CheckNames(data []byte, file string, line int, into any) ErrorList {
	if line <= 0 {
		line = 1
	}
	type frame struct {
		obj       bool
		path      string       // the path of the object or array itself
		typ       reflect.Type // what it decodes into; nil when generic
		key       string       // the current member's name
		child     reflect.Type // what the current member or element decodes into
		index     int          // the current element's index
		expectKey bool
		seen      map[string]bool
	}
	var (
		stack  []*frame
		errs   ErrorList
		fields = map[reflect.Type]map[string]reflect.Type{}
		root   reflect.Type
	)
	if into != nil {
		root = reflect.TypeOf(into)
	}
	// here returns the path of the value about to be read, and childType
	// the Go type it decodes into.
	here := func() string {
		if len(stack) == 0 {
			return "$"
		}
		top := stack[len(stack)-1]
		if top.obj {
			return Member(top.path, top.key)
		}
		return Element(top.path, top.index)
	}
	childType := func() reflect.Type {
		if len(stack) == 0 {
			return decodedType(root)
		}
		return decodedType(stack[len(stack)-1].child)
	}
	// done moves the innermost frame past the value just read.
	done := func() {
		if len(stack) == 0 {
			return
		}
		top := stack[len(stack)-1]
		if top.obj {
			top.expectKey = true
		} else {
			top.index++
		}
	}
	at := func(dec *json.Decoder) int {
		end := int(dec.InputOffset())
		return line + bytes.Count(data[:min(end, len(data))], []byte{'\n'})
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].expectKey {
			top := stack[n-1]
			if k, ok := tok.(string); ok {
				if top.seen[k] {
					errs = append(errs, &Error{File: file, Line: at(dec), Path: Member(top.path, k), Msg: fmt.Sprintf("duplicate key %q", k)})
				}
				top.seen[k] = true
				top.key, top.expectKey, top.child = k, false, nil
				switch t := top.typ; {
				case t == nil:
				case t.Kind() == reflect.Map:
					top.child = t.Elem()
				case t.Kind() == reflect.Struct:
					fs, ok := fields[t]
					if !ok {
						fs = jsonFields(t)
						fields[t] = fs
					}
					if ft, ok := fs[k]; ok {
						top.child = ft
						break
					}
					if name, ok := foldedField(fs, k); ok {
						errs = append(errs, &Error{File: file, Line: at(dec), Path: Member(top.path, k),
							Msg: fmt.Sprintf("key %s is not %q: names are case-sensitive", quoteName(k), name)})
						// Look inside as encoding/json would decode it, so
						// that what it hides is reported too.
						top.child = fs[name]
					}
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			t := childType()
			if t != nil && t.Kind() != reflect.Struct && t.Kind() != reflect.Map {
				t = nil
			}
			stack = append(stack, &frame{obj: true, path: here(), typ: t, expectKey: true, seen: map[string]bool{}})
		case json.Delim('['):
			f := &frame{path: here()}
			if t := childType(); t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				f.typ, f.child = t, t.Elem()
			}
			stack = append(stack, f)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			done()
		default:
			done()
		}
	}
	return errs
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodedType is the type whose member names matter for a value that
// encoding/json decodes into t: t without its pointers, or nil when the
// names are not matched against fields (nil, an interface, a type that
// decodes itself).
func decodedType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface {
		return nil
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	return t
}

// jsonFields returns the JSON names of the fields of struct t with their
// types, as encoding/json names them: a field of an untagged embedded
// struct is promoted unless a field nearer the top has its name. (Two
// promoted fields at one depth with one name are both dropped by
// encoding/json; keeping either here only makes the check stricter.)
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	type level struct {
		typ   reflect.Type
		depth int
	}
	depth := map[string]int{}
	queue := []level{{t, 0}}
	visited := map[reflect.Type]bool{}
	for len(queue) > 0 {
		l := queue[0]
		queue = queue[1:]
		if visited[l.typ] {
			continue
		}
		visited[l.typ] = true
		for i := range l.typ.NumField() {
			f := l.typ.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				queue = append(queue, level{ft, l.depth + 1})
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if d, ok := depth[name]; ok && d <= l.depth {
				continue
			}
			depth[name] = l.depth
			out[name] = f.Type
		}
	}
	return out
}

// foldedField returns the name among fs's that k equals under the case
// folding encoding/json matches names with, choosing the least name when
// several do, so that the message does not depend on map order.
func foldedField(fs map[string]reflect.Type, k string) (string, bool) {
	best, found := "", false
	for name := range fs {
		if strings.EqualFold(name, k) && (!found || name < best) {
			best, found = name, true
		}
	}
	return best, found
}

// quoteName quotes a member name for a message, with \u escapes for what
// is not ASCII: "ſha256" and "sha256" look alike, "\u017fha256" does not.
func quoteName(k string) string {
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			return strconv.QuoteToASCII(k)
		}
	}
	return strconv.Quote(k)
}
