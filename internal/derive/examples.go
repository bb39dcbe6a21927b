package derive

import (
	"encoding/json"
	"errors"
)

// ErrExamples is wrapped by DecodeExamples' errors.
var ErrExamples = errors.New("want a list of objects of strings")

// DecodeExamples reads the examples a derivation works on, as a caller
// writes them: a JSON list with one object per run, whose members are the
// run's parameters and their string values. A value of another type, or
// a document of another shape, is an error wrapping ErrExamples that
// says what was found; the caller names the file.
func DecodeExamples(data []byte) ([]map[string]string, error) {
	var examples []map[string]string
	if err := json.Unmarshal(data, &examples); err != nil {
		return nil, &examplesError{err}
	}
	return examples, nil
}

type examplesError struct{ err error }

func (e *examplesError) Error() string   { return ErrExamples.Error() + ": " + e.err.Error() }
func (e *examplesError) Unwrap() []error { return []error{ErrExamples, e.err} }
