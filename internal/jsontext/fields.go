package jsontext

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Field is one member that encoding/json writes for a field of a struct:
// the field's index path (through embedded structs), its member name, and
// whether omitempty leaves it out when empty.
type Field struct {
	Index     []int
	Name      string
	OmitEmpty bool
}

// Fields describes how encoding/json writes a struct type, for the
// walkers that produce the same result without going through it (the
// canonical writer here, redact's Copy). Fields are in declaration order.
// Unusual says the type uses a rule these walkers do not follow (the
// string, omitzero or inline options, or names that embedded fields
// share, which follow Go's visibility rules): a walker must then hand the
// value to encoding/json itself.
func Fields(t reflect.Type) (fields []Field, unusual bool) {
	if p, ok := fieldPlans.Load(t); ok {
		p := p.(*fieldPlan)
		return p.fields, p.unusual
	}
	p := &fieldPlan{}
	seen := map[string]bool{}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			idx := append(slices.Clone(index), i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			omit := false
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					omit = true
				case "string", "omitzero", "inline":
					p.unusual = true
				}
			}
			if seen[name] {
				p.unusual = true
			}
			seen[name] = true
			p.fields = append(p.fields, Field{Index: idx, Name: name, OmitEmpty: omit})
		}
	}
	walk(t, nil)
	fieldPlans.Store(t, p)
	return p.fields, p.unusual
}

type fieldPlan struct {
	fields  []Field
	unusual bool
}

var fieldPlans sync.Map // reflect.Type → *fieldPlan

// FieldByIndex is v.FieldByIndex that reports a nil embedded pointer on
// the way (encoding/json then leaves the field out) instead of panicking.
func FieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// IsEmpty is encoding/json's test for omitempty.
func IsEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
