package runrecord

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

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
		generic[i] = ReceiptValue(rc)
		want, err := jsontext.AppendCanonical(nil, ReceiptValue(rc), 3)
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
	got, err := EncodeTrace(fields, receipts)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("trace with receipts from their fields:\n got %s\nwant %s", got, want)
	}
}
