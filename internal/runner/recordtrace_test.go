package runner

import (
	"fmt"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestEncodeTrace: a run's trace, its actions encoded one by one and
// spliced in, is candidate.EncodeJSON's encoding of the whole trace.
func TestEncodeTrace(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    for v in [\"<x>\", \"a\\nb\", {\"k\": [1, 2.5]}, None]:\n        ctx.tool(\"echo\", v = v, s = \"\\u2028&\")\n    ctx.log(\"done <ok>\")\n")
	o := opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	res, err := Run(t.Context(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	tr := readTrace(t, res)
	usage := &trace.Trace{ID: "usage", ReplayRun: map[string]any{"run_id": "u", "effect_receipts": []any{
		map[string]any{"step": 1, "duration_ms": int64(3), "side_effects": []any{}, "usage": map[string]any{"cost_usd": 1e-7, "input_tokens": int64(10), "model": "m<1>"}},
		map[string]any{"step": 2, "side_effects": []any{map[string]any{"kind": "file_write", "target": "a&b"}}, "usage": map[string]any{"cost_usd": 0.25}},
	}}}
	for _, tc := range []*trace.Trace{tr, {ID: "empty"}, usage} {
		want, err := candidate.EncodeJSON(tc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := runrecord.EncodeTrace(tc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("trace %s:\n got %s\nwant %s", tc.ID, got, want)
		}
	}
	if len(tr.Actions) != 4 {
		t.Errorf("the trace has %d actions, want 4", len(tr.Actions))
	}
}

// TestRecordID: a step's record ids pad the step to two digits.
func TestRecordID(t *testing.T) {
	for step, want := range map[int]string{0: "r-a00", 7: "r-a07", 10: "r-a10", 123: "r-a123"} {
		if got := recordID("r", "-a", step); got != want || got != fmt.Sprintf("%s-a%02d", "r", step) {
			t.Errorf("recordID(%d) = %q, want %q", step, got, want)
		}
	}
}
