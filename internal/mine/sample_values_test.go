package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestResultValueReadsThePath checks the value an example outside the
// sample is held to for a binding: the one at the binding's path of the
// field it names, found wherever it is in the output; none when the
// field was not recorded or has nothing at the path.
func TestResultValueReadsThePath(t *testing.T) {
	a := &trace.Action{
		Output:         decodeAny(`{"branch":"b1","items":[{"id":"first"},{"id":"second"}],"sha":"abc"}`),
		ObservedOutput: decodeAny(`{"branch":"seen"}`),
	}
	for _, tt := range []struct {
		field, path string
		want        string
		found       bool
	}{
		{"output", "$.branch", canonical("b1"), true},
		{"output", "$.items[0].id", canonical("first"), true},
		{"output", "$.sha", canonical("abc"), true},
		{"observed_output", "$.branch", canonical("seen"), true},
		{"output", "$.missing", "", false},
		{"observed_output", "$.sha", "", false},
	} {
		got, found := resultValue(a, tt.field, tt.path)
		if got != tt.want || found != tt.found {
			t.Errorf("%s %s: %q %v, want %q %v", tt.field, tt.path, got, found, tt.want, tt.found)
		}
	}
	if _, found := resultValue(&trace.Action{Output: decodeAny(`{"branch":"b1"}`)}, "observed_output", "$.branch"); found {
		t.Error("a field not recorded: found a value")
	}
}

// TestStringAtReadsTheParameter checks the value of a derived parameter
// an example outside the sample is checked with: the string at the
// parameter's source path in that example's step, and none for a path
// past the candidate's steps, a malformed path, or a value that is no
// string.
func TestStringAtReadsTheParameter(t *testing.T) {
	tr := mk("t", noise("n"),
		act("a", trace.KindToolCall, "tag", `{"version":"1.2.0","count":3}`),
		act("b", trace.KindToolCall, "push", `{"ref":"v1.2.0"}`))
	m := match{pos: []int32{1, 2}}
	for _, tt := range []struct {
		path  string
		want  string
		found bool
	}{
		{"steps[1].parameters.version", "1.2.0", true},
		{"steps[2].parameters.ref", "v1.2.0", true},
		{"steps[1].parameters.count", "", false},
		{"steps[3].parameters.ref", "", false},
		{"parameters.version", "", false},
	} {
		got, found := stringAt(tr, m, tt.path)
		if got != tt.want || found != tt.found {
			t.Errorf("%s: %q %v, want %q %v", tt.path, got, found, tt.want, tt.found)
		}
	}
}
