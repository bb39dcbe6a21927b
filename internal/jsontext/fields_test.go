package jsontext

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type fieldsInner struct {
	Token string `json:"token"`
	Note  string `json:"note,omitempty"`
}

type fieldsOuter struct {
	*fieldsInner
	Name    string `json:"name"`
	Skipped string `json:"-"`
	hidden  string
}

type fieldsUnusual struct {
	Count int `json:"count,string"`
}

// TestFields checks that Fields lists the members encoding/json writes,
// as it writes them: the fields of an embedded struct, through a pointer
// too, promoted with their index path; "-" and unexported fields left
// out. An option the walkers do not follow makes the type unusual, on
// every call, not only the first (the plan is cached).
func TestFields(t *testing.T) {
	want := []Field{
		{Index: []int{0, 0}, Name: "token"},
		{Index: []int{0, 1}, Name: "note", OmitEmpty: true},
		{Index: []int{1}, Name: "name"},
	}
	for i := range 2 {
		fields, unusual := Fields(reflect.TypeFor[fieldsOuter]())
		if diff := cmp.Diff(want, fields); diff != "" || unusual {
			t.Errorf("Fields(fieldsOuter) call %d: unusual %v, fields (-want +got):\n%s", i+1, unusual, diff)
		}
	}
	_ = fieldsOuter{}.hidden
	for i := range 2 {
		if _, unusual := Fields(reflect.TypeFor[fieldsUnusual]()); !unusual {
			t.Errorf("Fields(fieldsUnusual) call %d: unusual = false, want true for the string option", i+1)
		}
	}
}
