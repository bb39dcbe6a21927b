package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestStepChecksOnlyForCode checks that only a step the workflow runs as
// code is checked before it runs: a fuzzy step, which stays a model call,
// and a person's approval have no capability or input checks, though
// they need the same capability and take parameters.
func TestStepChecksOnlyForCode(t *testing.T) {
	step := func(kind trace.Kind, segment candidate.Segment) *candidate.Step {
		return &candidate.Step{Index: 1, Kind: kind, Name: "deploy", Segment: segment, Capabilities: []string{"exec:kubectl"},
			Arguments: []candidate.Argument{{Key: "env", Kind: candidate.ArgParameter, Parameter: "env"}}}
	}
	v := stepView{index: 1, actions: []*trace.Action{{Name: "deploy"}, {Name: "deploy"}}}
	for _, tt := range []struct {
		name    string
		step    *candidate.Step
		checked bool
	}{
		{"code", step(trace.KindToolCall, candidate.Deterministic), true},
		{"fuzzy", step(trace.KindToolCall, candidate.Fuzzy), false},
		{"approval", step(trace.KindHumanApproval, candidate.Deterministic), false},
		{"model call", step(trace.KindModelCall, candidate.Deterministic), false},
	} {
		stepChecks(&candidate.Candidate{}, tt.step, v, []stepView{v})
		if got := len(tt.step.Checks) > 0; got != tt.checked {
			t.Errorf("%s step: checks %+v, want checked %v", tt.name, tt.step.Checks, tt.checked)
		}
	}
}
