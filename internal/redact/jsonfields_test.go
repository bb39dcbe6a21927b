package redact

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

// TestJSONFields checks that JSONFields lists the members encoding/json
// writes, as it writes them: the fields of an embedded struct, through a
// pointer too, promoted with their index path; "-" and unexported fields
// left out; and a sensitive name marked, so Copy redacts what
// encoding/json would show. An option the walkers do not follow makes the
// type unusual, on every call, not only the first.
func TestJSONFields(t *testing.T) {
	want := []JSONField{
		{Index: []int{0, 0}, Name: "token", Sensitive: true},
		{Index: []int{0, 1}, Name: "note", OmitEmpty: true},
		{Index: []int{1}, Name: "name"},
	}
	for i := range 2 {
		fields, unusual := JSONFields(reflect.TypeFor[fieldsOuter]())
		if diff := cmp.Diff(want, fields); diff != "" || unusual {
			t.Errorf("JSONFields(fieldsOuter) call %d: unusual %v, fields (-want +got):\n%s", i+1, unusual, diff)
		}
	}
	_ = fieldsOuter{}.hidden
	for i := range 2 {
		if _, unusual := JSONFields(reflect.TypeFor[fieldsUnusual]()); !unusual {
			t.Errorf("JSONFields(fieldsUnusual) call %d: unusual = false, want true for the string option", i+1)
		}
	}
}
