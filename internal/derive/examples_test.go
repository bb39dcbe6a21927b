package derive

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeExamples: a list of objects of strings is read as it is;
// any other shape is refused with ErrExamples and what was found.
func TestDecodeExamples(t *testing.T) {
	got, err := DecodeExamples([]byte(`[{"module": "go.starlark.net", "version": "v0.0.1"}, {}]`))
	if err != nil || len(got) != 2 || got[0]["module"] != "go.starlark.net" || got[0]["version"] != "v0.0.1" || len(got[1]) != 0 {
		t.Errorf("DecodeExamples = %v, %v", got, err)
	}
	for _, tc := range []struct{ in, found string }{
		{`{"module": "x"}`, "cannot unmarshal object"},
		{`[{"n": 1}]`, "cannot unmarshal number"},
		{`[["a"]]`, "cannot unmarshal array"},
		{`[{"a": "b"}`, "unexpected end of JSON input"},
	} {
		_, err := DecodeExamples([]byte(tc.in))
		if !errors.Is(err, ErrExamples) || !strings.HasPrefix(err.Error(), "want a list of objects of strings: ") || !strings.Contains(err.Error(), tc.found) {
			t.Errorf("DecodeExamples(%s) error = %v, want ErrExamples saying %q", tc.in, err, tc.found)
		}
	}
}
