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
