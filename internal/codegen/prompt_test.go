package codegen

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// promptCandidate is a release whose approval step asks about the version
// step 1 set: its prompt template reads step 2's own version argument.
func promptCandidate(template ...candidate.PromptPart) *candidate.Candidate {
	version := candidate.Argument{Key: "version", Kind: candidate.ArgParameter, Parameter: "version"}
	return &candidate.Candidate{
		ID:         "candidate_prompt",
		Parameters: []candidate.Parameter{{Name: "version", Key: "version", Required: true, Type: "string"}},
		Steps: []candidate.Step{
			{Index: 1, Kind: trace.KindToolCall, Name: "cargo.set_version", Arguments: []candidate.Argument{version},
				ResultUsed: true},
			{Index: 2, Kind: trace.KindHumanApproval, Name: "confirm_release", Arguments: []candidate.Argument{version},
				Approval:       &trace.Approval{Required: true, Boundary: "publish", Prompt: "Publish 0.1.1 to crates.io?"},
				PromptTemplate: template},
		},
	}
}

// TestPromptTemplate: the approver is asked about this run's values, not
// the first example's, and a template that reaches outside the step's
// arguments and the parameters (a later step, a secret) is refused.
func TestPromptTemplate(t *testing.T) {
	wf, err := Workflow(promptCandidate(
		candidate.PromptPart{Text: "Publish "},
		candidate.PromptPart{Step: 2, Key: "version"},
		candidate.PromptPart{Text: " to crates.io?"},
	), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `ctx.approve("publish", prompt = "Publish " + version + " to crates.io?")`; !strings.Contains(string(wf), want) {
		t.Errorf("workflow lacks %s:\n%s", want, wf)
	}
	if strings.Contains(string(wf), "0.1.1") {
		t.Errorf("the first example's version is still in the workflow:\n%s", wf)
	}

	wf, err = Workflow(promptCandidate(candidate.PromptPart{Parameter: "version"}), Options{})
	if err != nil || !strings.Contains(string(wf), `ctx.approve("publish", prompt = version)`) {
		t.Errorf("parameter prompt: %v\n%s", err, wf)
	}

	c := promptCandidate(
		candidate.PromptPart{Step: 3, Key: "version"},
		candidate.PromptPart{Step: 1, Key: "token"},
		candidate.PromptPart{Text: "x", Parameter: "version"},
	)
	c.Steps[0].Arguments = append(c.Steps[0].Arguments, candidate.Argument{Key: "token", Kind: candidate.ArgSecret, Secret: "TOKEN"})
	_, err = Workflow(c, Options{})
	want := "candidate candidate_prompt: $.steps[1].prompt_template[0]: a part is text, an argument of this or an earlier step, or a parameter\n" +
		`candidate candidate_prompt: $.steps[1].prompt_template[1].key: argument "token" of step 1 is a secret` + "\n" +
		"candidate candidate_prompt: $.steps[1].prompt_template[2]: a part is text, an argument of this or an earlier step, or a parameter"
	if err == nil || err.Error() != want {
		t.Errorf("forged template: err = %v\nwant %s", err, want)
	}
}
