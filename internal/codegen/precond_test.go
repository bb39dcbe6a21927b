package codegen

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

func TestCheckKnowsCtxCheck(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"every kind", `def wf(ctx, b, r):
    ctx.check("capability", capability = "exec:git")
    ctx.check("inputs_bound", b = b)
    ctx.check("file_exists", path = "go.mod")
    ctx.check("branch_absent", branch = b)
    ctx.check("program_on_path", program = "git")
    ctx.check("output_shape", value = r, step = 1, shape = {"branch": "string"})
`, ""},
		{"unknown kind", "def wf(ctx):\n    ctx.check(\"branch_present\", branch = \"x\")\n", `w.star:2:15: ctx.check: unknown kind "branch_present", want one of capability, inputs_bound`},
		{"kind not a literal", "def wf(ctx, k):\n    ctx.check(k)\n", "w.star:2:15: ctx.check: the kind must be a string literal"},
		{"no kind", "def wf(ctx):\n    ctx.check()\n", "w.star:2:5: ctx.check: the kind must be a string literal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Check("w.star", []byte(tc.src), "wf")
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestWorkflowCheckErrors(t *testing.T) {
	c := &candidate.Candidate{
		ID: "candidate_0000000000000000",
		Steps: []candidate.Step{{
			Index: 1, Kind: "tool_call", Name: "git checkout", Segment: candidate.Deterministic,
			Arguments: []candidate.Argument{{Key: "b", Kind: candidate.ArgConstant, Value: "x"}},
			Checks: []candidate.Check{
				{Kind: "branch_absent", From: "branch"},
				{Kind: "moon_phase"},
				{Kind: "inputs_bound", Inputs: []string{"b", "c"}},
			},
		}},
	}
	_, err := Workflow(c, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`$.steps[0].checks[0].from: the step has no argument "branch"`,
		`$.steps[0].checks[1].kind: unknown check kind "moon_phase"`,
		`$.steps[0].checks[2].inputs: the step has no argument "c"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}
