package runner

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestDryRunDataFlow checks that a dry run of a workflow whose later
// steps read an earlier step's result goes through every step: with
// nothing recorded, the answer is a placeholder object with the members
// the workflow reads, each saying it is a placeholder; with a candidate
// whose traces agreed on the output, the answer is that output.
func TestDryRunDataFlow(t *testing.T) {
	const src = `def wf(ctx):
    s1 = ctx.tool("git.create_branch", branch = "deps/x")
    ctx.tool("gh.open_pr", branch = s1["branch"], id = s1["meta"]["id"])
    return {"status": "ok"}
`
	cfg := &runconfig.Config{Tools: map[string]runconfig.ToolBinding{
		"git.create_branch": {Command: []string{os.Args[0]}, Env: map[string]string{"RUNTIME_TEST_HELPER": "argv"}},
		"gh.open_pr":        {Command: []string{os.Args[0]}, Env: map[string]string{"RUNTIME_TEST_HELPER": "argv"}},
	}}
	type call struct {
		Tool      string
		Arguments map[string]any
		Answer    any
		Source    string
	}
	calls := func(res *Result) []call {
		var out []call
		for _, c := range res.DryRunCalls {
			out = append(out, call{c.Tool, c.Arguments, c.Answer, c.Source})
		}
		return out
	}

	w := workflow(t, src)
	o := opts(t, cfg)
	o.DryRun = true
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	want := []call{
		{"git.create_branch", map[string]any{"branch": "deps/x"},
			map[string]any{"branch": "<dry-run: step 1 branch>", "meta": map[string]any{"id": "<dry-run: step 1 meta id>"}}, AnswerPlaceholder},
		{"gh.open_pr", map[string]any{"branch": "<dry-run: step 1 branch>", "id": "<dry-run: step 1 meta id>"},
			nil, AnswerNothing},
	}
	if diff := cmp.Diff(want, calls(res)); diff != "" {
		t.Errorf("dry-run calls (-want +got):\n%s", diff)
	}
	if res.Steps != 2 || res.Status != runstate.StatusCompleted {
		t.Errorf("steps %d, status %s; want 2, completed", res.Steps, res.Status)
	}

	// The candidate's expected output wins over any placeholder.
	w = workflow(t, src)
	w.Candidate = &candidate.Candidate{Steps: []candidate.Step{
		{Index: 1, Kind: trace.KindToolCall, Name: "git.create_branch", ExpectedOutput: map[string]any{"branch": "deps/x", "meta": map[string]any{"id": "7"}}},
		{Index: 2, Kind: trace.KindExternalAPICall, Name: "gh.open_pr"},
	}}
	o = opts(t, cfg)
	o.DryRun = true
	res, err = Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatalf("dry run with a candidate: %v", err)
	}
	got := calls(res)
	if len(got) != 2 || got[0].Source != AnswerExpected || got[1].Arguments["branch"] != "deps/x" || got[1].Arguments["id"] != "7" {
		t.Errorf("dry-run calls = %+v; want step 1 answered with the expected output and step 2 receiving it", got)
	}
}
