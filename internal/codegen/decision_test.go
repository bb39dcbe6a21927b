package codegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// A decision step's options must be what the runtime accepts: at least
// two, none empty, none repeated. Anything else is a candidate error, not
// a workflow that fails when it reaches the step.
func TestDecisionOptions(t *testing.T) {
	tests := []struct {
		options []string
		want    string // "" when the workflow renders
	}{
		{[]string{"a", "b"}, ""},
		{[]string{"a"}, "$.steps[0].options: 1 options; a decision needs at least 2"},
		{[]string{"a", "a"}, `$.steps[0].options[1]: option "a" is empty or repeats an earlier one`},
		{[]string{"a", " "}, `$.steps[0].options[1]: option " " is empty or repeats an earlier one`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.options), func(t *testing.T) {
			c := &candidate.Candidate{ID: "candidate_x", Name: "pick", Steps: []candidate.Step{{
				Index: 1, Kind: trace.KindHumanApproval, Name: "ask_user", Options: tt.options,
				Approval: &trace.Approval{Prompt: "Which?", Required: true, Boundary: "decision"},
			}}}
			src, err := Workflow(c, Options{})
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Workflow error = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := Check("pick.star", src, "pick"); err != nil {
				t.Fatalf("Check: %v\n%s", err, src)
			}
			if !strings.Contains(string(src), `step1 = ctx.request_decision("Which?", ["a", "b"])`) {
				t.Errorf("workflow does not ask for the decision:\n%s", src)
			}
			if strings.Contains(string(src), "ctx.approve(") {
				t.Errorf("a decision step also asks for an approval:\n%s", src)
			}
			if got := candidate.StepCall(c.Steps[0]); got != candidate.CallDecide {
				t.Errorf("candidate.StepCall = %q, want %q", got, candidate.CallDecide)
			}
		})
	}
}
