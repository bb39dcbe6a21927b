package bundle

import (
	"errors"
	"reflect"
	"testing"
)

// unencodable is a value whose JSON encoding fails.
type unencodable struct{}

var errUnencodable = errors.New("cannot encode")

func (unencodable) MarshalJSON() ([]byte, error) { return nil, errUnencodable }

// TestAnonymizeHomesEncodingFails checks that a value that cannot be
// encoded fails the home-directory anonymization wherever it sits (a
// field, a slice element, a map value, behind a pointer): a value the
// walk could not check may hold a home directory, so it is an error,
// never passed over.
func TestAnonymizeHomesEncodingFails(t *testing.T) {
	type holder struct {
		Field unencodable `json:"field"`
	}
	for name, v := range map[string]any{
		"field":     &holder{},
		"slice":     &[]unencodable{{}},
		"map value": &map[string]unencodable{"k": {}},
		"pointer":   &struct{ P *unencodable }{P: &unencodable{}},
	} {
		if _, err := anonymizeHomesTyped(reflect.ValueOf(v).Elem()); !errors.Is(err, errUnencodable) {
			t.Errorf("%s: anonymizeHomesTyped = %v, want %v", name, err, errUnencodable)
		}
	}
}

// TestAnonymizeHomesInInterfaces checks that a home directory in a string
// held by an interface (a parameter's example values) is anonymized in
// the bundle's report, and counted, as one in a typed string field is.
func TestAnonymizeHomesInInterfaces(t *testing.T) {
	r := benchReport(1, 1)
	r.Candidates[0].Parameters[0].Examples = []any{"/home/zed/src/app", "plain"}
	got, _, err := bundleReport(r)
	if err != nil {
		t.Fatal(err)
	}
	if ex := got.Candidates[0].Parameters[0].Examples; len(ex) != 2 || ex[0] != "~/src/app" || ex[1] != "plain" {
		t.Errorf("examples %v, want [~/src/app plain]", ex)
	}
	if r.Candidates[0].Parameters[0].Examples[0] != "/home/zed/src/app" {
		t.Error("bundleReport changed the report it was given")
	}
}

// TestAnonymizeHomesNilEmbedded checks that a struct embedding a nil
// pointer is walked as encoding/json writes it, skipping the embedded
// fields, without a panic, and that its other fields are anonymized.
func TestAnonymizeHomesNilEmbedded(t *testing.T) {
	type Inner struct {
		Where string `json:"where"`
	}
	type outer struct {
		*Inner
		Path string `json:"path"`
		Note string `json:"note,omitempty"`
	}
	v := &outer{Path: "/home/zed/x"}
	n, err := anonymizeHomesTyped(reflect.ValueOf(v).Elem())
	if err != nil || n != 1 || v.Path != "~/x" || v.Inner != nil {
		t.Errorf("anonymizeHomesTyped = %d, %v; value %+v; want 1 replacement, path ~/x", n, err, v)
	}
	w := &outer{Inner: &Inner{Where: "/Users/amy/y"}}
	if n, err := anonymizeHomesTyped(reflect.ValueOf(w).Elem()); err != nil || n != 1 || w.Where != "~/y" {
		t.Errorf("anonymizeHomesTyped = %d, %v; value %+v; want the embedded field anonymized", n, err, w)
	}
}
