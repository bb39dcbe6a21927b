package serve

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// TestResultIsRunSummary: a tool call's structured content is the run's
// runner.Summary, the object `crystallize run --json` prints, key for
// key and value for value; a suspended run adds "approval" and "resume"
// and nothing else.
func TestResultIsRunSummary(t *testing.T) {
	base := func() *runner.Result {
		return &runner.Result{
			RunID: "run-1", Workflow: "release", Dir: "state/runs/run-1",
			Steps: 3, ToolCalls: 2, ModelCalls: 1, TokensUsed: 40, CostUSD: 0.25,
			Receipts: []runner.Receipt{{}}, Duration: 1500 * time.Millisecond,
			Refusals: []runner.Refusal{{Step: 2, Tool: "git.push", Reason: "not granted"}},
		}
	}
	completed := base()
	completed.Status, completed.Output = runstate.StatusCompleted, map[string]any{"tag": "v1"}
	failed := base()
	failed.Status, failed.Error = runstate.StatusFailed, "step 2: boom"
	pending := base()
	pending.Status = runstate.StatusPendingApproval
	pending.Pending = &runstate.Pending{Step: 3, Boundary: "publish", Prompt: "Publish?"}

	for _, tc := range []struct {
		name  string
		r     *runner.Result
		extra map[string]any
	}{
		{"completed", completed, nil},
		{"failed", failed, nil},
		{"pending", pending, map[string]any{
			"approval": map[string]any{"step": float64(3), "boundary": "publish", "prompt": "Publish?"},
			"resume":   runner.ResumeCommand("state", "run-1") + " --approve publish",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decode(t, result(tc.r, "state").StructuredContent)
			want := decode(t, tc.r.Summary())
			for k, v := range tc.extra {
				want[k] = v
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("structured content (-run summary +got):\n%s", diff)
			}
		})
	}
}

func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
