package runner

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/jsontext"
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
		got, err := encodeTrace(tc, nil)
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

// TestAppendAction: appendAction writes what candidate.EncodeJSON writes
// for actions with every field set, none, typed nils and extra members.
func TestAppendAction(t *testing.T) {
	ms, yes, no := int64(12), true, false
	actions := []trace.Action{
		{},
		{ID: "a\xff", Kind: trace.KindModelCall, Name: "<n>", Inputs: map[string]any{"q": "&"}, Output: map[string]any(nil)},
		{
			ID: "a1", Kind: trace.KindToolCall, Name: "t", Timestamp: "2026-01-01T00:00:00Z",
			Parameters: map[string]any{}, Inputs: []any{1.5, json.Number("2")}, Output: "o\u2028", ObservedOutput: []any{},
			Capabilities: []string{}, SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "<a>", Metadata: map[string]any{"z": 1}}},
			RequiredSecrets: []string{"B", "A"}, Approval: &trace.Approval{Prompt: "ok?", Required: true},
			Cost: &trace.Cost{Model: "m", InputTokens: 3, TotalCostUSD: 1e-7}, DurationMS: &ms, Deterministic: &yes, Fuzzy: &no,
			Metadata: map[string]any{"argv": []any{"go", "<x>"}, "step": 1},
		},
		{ID: "x", Kind: trace.KindToolCall, Name: "e", Extra: map[string]any{"zz": 1, "id": "shadowed", "aa": []any{}}},
	}
	for i, a := range actions {
		want, err := candidate.EncodeJSON(&a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendAction(nil, &a, 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != string(want) {
			t.Errorf("action %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestAppendActionFields: appendAction writes every field of
// trace.Action; a field added there must be added to it.
func TestAppendActionFields(t *testing.T) {
	const known = 18 // the 17 fields of the format and Extra
	if n := reflect.TypeFor[trace.Action]().NumField(); n != known {
		t.Errorf("trace.Action has %d fields, appendAction knows %d: write the new ones in appendAction", n, known)
	}
}

// TestAppendReceipt: a receipt written from its fields is the canonical
// form of the generic value replay_run holds for it, for receipts with
// and without side effects, optional members, usage and hostile text;
// and a trace whose receipts are written from their fields is the trace
// that holds them as values.
func TestAppendReceipt(t *testing.T) {
	receipts := []Receipt{
		{ID: "r-01", Step: 1, Kind: "tool_call", Tool: "fs.read", Status: "ok", ArgumentsSHA256: "sha256:a", ResultSHA256: "sha256:b", DurationMS: 3},
		{ID: "r-02\u2028", Step: 12, Kind: "tool_call", Tool: "t<&>\"\\", Status: "error", ArgumentsSHA256: "", ResultSHA256: "\x00\xff",
			SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "a.txt", Capability: "fs.write"}, {Kind: "http", Target: ""}, {Kind: "db", Target: "t", Mutation: "insert"}}, DurationMS: -1},
		{ID: "r-03", Step: 3, Kind: "model_call", Tool: "m", Status: "ok", SideEffects: []trace.SideEffect{}, Usage: &ModelUsage{Model: "x", InputTokens: 5, OutputTokens: 7, CostUSD: 1.5e-7}},
	}
	generic := make([]any, len(receipts))
	for i := range receipts {
		rc := &receipts[i]
		generic[i] = receiptValue(rc)
		want, err := jsontext.AppendCanonical(nil, receiptValue(rc), 3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendReceipt(nil, rc, 3)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("receipt %d:\n got %s\nwant %s", i, got, want)
		}
	}
	values := &trace.Trace{ID: "t", ReplayRun: map[string]any{"run_id": "t", "effect_receipts": generic}}
	fields := &trace.Trace{ID: "t", ReplayRun: map[string]any{"run_id": "t", "effect_receipts": []any{}}}
	want, err := candidate.EncodeJSON(values)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeTrace(fields, receipts)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("trace with receipts from their fields:\n got %s\nwant %s", got, want)
	}
}

// TestClipRecordedShares: a value with nothing to clip is recorded as it
// is, and one with a long string is copied, the original left whole.
func TestClipRecordedShares(t *testing.T) {
	short := map[string]any{"a": "x", "b": []any{"y", map[string]any{"c": 1}}}
	if got := clipRecorded(short).(map[string]any); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", short) {
		t.Error("a value with nothing to clip was copied")
	}
	long := strings.Repeat("z", maxRecordedString+10)
	v := map[string]any{"a": "x", "b": []any{"y", map[string]any{"c": long}}}
	got := clipRecorded(v).(map[string]any)
	if s := got["b"].([]any)[1].(map[string]any)["c"].(string); !strings.HasSuffix(s, "…[10 more bytes not recorded]") {
		t.Errorf("the long string was not clipped: %d bytes", len(s))
	}
	if v["b"].([]any)[1].(map[string]any)["c"] != long {
		t.Error("clipping changed the original value")
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
