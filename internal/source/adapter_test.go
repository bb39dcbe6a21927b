package source

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestRunRecord(t *testing.T) {
	data, err := os.ReadFile("testdata/run_record.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDocument(data, "testdata/run_record.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := &trace.Trace{
		Version:    1,
		ID:         "run_docs_42",
		WorkflowID: "docs_site_deploy",
		StartedAt:  "2025-03-04T09:15:00Z",
		FinishedAt: "2025-03-04T09:17:00Z",
		Actions: []trace.Action{
			{
				ID: "stage_plan", Kind: trace.KindStage, Name: "plan", Timestamp: "2025-03-04T09:15:01Z",
				Output: "build, then publish", ObservedOutput: "build, then publish",
				Cost: &trace.Cost{
					Model: "small-model", ModelCalls: 2, InputTokens: 900, OutputTokens: 120, TotalCostUSD: 0.003, WallMS: 4100,
					Extra: map[string]any{"models": []any{"small-model", "large-model"}},
				},
				Deterministic: ptr(false), Fuzzy: ptr(true),
				Extra: map[string]any{"status": "done"},
			},
			{
				ID: "tu_1", Kind: trace.KindToolCall, Name: "mkdocs.build", Timestamp: "2025-03-04T09:15:10Z",
				Parameters:    map[string]any{"site_dir": "site", "strict": true},
				Output:        "ok",
				DurationMS:    ptr(int64(52000)),
				Deterministic: ptr(true),
				Metadata:      map[string]any{"args_hash": "h1", "iteration": json.Number("1"), "is_rejected": false},
			},
			{
				ID: "q_1", Kind: trace.KindHumanApproval, Name: "docs-agent", Timestamp: "2025-03-04T09:16:00Z",
				Approval:      &trace.Approval{Prompt: "Publish?", Required: true, Boundary: "hitl"},
				Deterministic: ptr(false),
				Metadata:      map[string]any{"trace_id": "tr_9"},
			},
			{
				// Same time as tu_2: stages come before tool calls.
				ID: "stage_publish", Kind: trace.KindStage, Name: "publish", Timestamp: "2025-03-04T09:16:30Z",
				Deterministic: ptr(true), Fuzzy: ptr(false),
				Metadata: map[string]any{"attempt": json.Number("1")},
			},
			{
				ID: "tu_2", Kind: trace.KindToolCall, Name: "cdn.upload", Timestamp: "2025-03-04T09:16:30Z",
				Parameters:    map[string]any{"bucket": "docs-prod"},
				Output:        map[string]any{"etag": "e-1"},
				Deterministic: ptr(false),
				Metadata:      map[string]any{"iteration": json.Number("2"), "is_rejected": true},
			},
		},
		ReplayAllowlist: []trace.AllowlistRule{{Path: "/run_id", Reason: "run ids are allocated per execution"}},
		Usage: &trace.Usage{
			ModelCalls: 2, InputTokens: 900, OutputTokens: 120, TotalCostUSD: 0.003, WallMS: 4100,
			Extra: map[string]any{"models": []any{"small-model"}},
		},
		Metadata: map[string]any{"trigger": "schedule"},
		Extra:    map[string]any{"status": "completed", "transcript": map[string]any{"turns": json.Number("3")}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DecodeDocument(run_record.json) (-want +got):\n%s", diff)
	}

	// The converted trace is a valid crystallization trace that
	// round-trips through the trace codec.
	enc, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	again, err := DecodeDocument(enc, "run_record.json", 0)
	if err != nil {
		t.Fatalf("re-decoding the converted record: %v\n%s", err, enc)
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("converted record round trip (-first +second):\n%s", diff)
	}
}

func TestRunRecordOrder(t *testing.T) {
	// Offsets are compared as instants; missing times sort first; other
	// text sorts after every RFC 3339 time; ties keep stages, tools,
	// questions, each in record order.
	doc := `{"id": "r", "stages": [
		{"id": "s1", "node_id": "n", "started_at": "2025-01-01T10:00:00+02:00"},
		{"id": "s2", "node_id": "n", "started_at": "2025-01-01T09:00:00Z"},
		{"id": "s3", "node_id": "n"},
		{"id": "s4", "node_id": "n", "started_at": "yesterday"}
	], "tool_recordings": [
		{"tool_use_id": "t1", "tool_name": "x", "timestamp": "2025-01-01T08:00:00Z"},
		{"tool_use_id": "t2", "tool_name": "x", "timestamp": "2025-01-01T09:00:00Z"},
		{"tool_name": "x"}
	], "hitl_questions": [
		{"request_id": "q1", "asked_at": "2025-01-01T09:00:00.000Z"},
		{"request_id": "q2", "asked_at": "earlier"}
	]}`
	tr, err := DecodeDocument([]byte(doc), "r.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range tr.Actions {
		ids = append(ids, a.ID)
	}
	want := []string{"s3", "action_2", "s1", "t1", "s2", "t2", "q1", "q2", "s4"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("merged order (-want +got):\n%s", diff)
	}
	if tr.Actions[7].Name != "human_approval" {
		t.Errorf("question without agent named %q, want human_approval", tr.Actions[7].Name)
	}
}

func TestDecodeDocumentErrors(t *testing.T) {
	tests := []struct {
		name string
		line int
		in   string
		want string
	}{
		{"syntax", 0, "{\n\"actions\": [,]}", "f.json:2:13: invalid JSON: invalid character ',' looking for beginning of value"},
		{"not an object", 0, `"actions"`, "f.json: $: expected object, got string"},
		{"neither format", 0, `{"id": "x", "steps": []}`, `f.json: $: neither a crystallization trace (no "actions"), a workflow run record (no "stages") nor a composition report (no "run" and "calls"), and the file is no session log of claude-code, codex, otel, otel-logs, gemini-cli, gemini-cli-chat (by its first records)`},
		{"neither format, JSON Lines", 7, `{}`, `f.json:7: $: neither a crystallization trace (no "actions"), a workflow run record (no "stages") nor a composition report (no "run" and "calls"), and the file is no session log of claude-code, codex, otel, otel-logs, gemini-cli, gemini-cli-chat (by its first records)`},
		{"trace errors", 0, `{"actions": [{"kind": "tool_call"}]}`, "f.json: $.actions[0].name: missing required field"},
		{"record by _type", 0, `{"_type": "workflow_run", "id": 3}`, "f.json: $.id: expected string, got number"},
		{"record errors", 0, `{"stages": [{"kind": "stage"}, 4], "tool_recordings": [{"tool_name": "x", "args": "a=1", "duration_ms": -1, "iteration": "one", "is_rejected": "no"}], "hitl_questions": {}}`,
			strings.Join([]string{
				"f.json: $.stages[0].node_id: missing required field",
				"f.json: $.stages[1]: expected object, got number",
				"f.json: $.tool_recordings[0].duration_ms: expected non-negative integer, got -1",
				"f.json: $.tool_recordings[0].args: expected object, got string",
				"f.json: $.tool_recordings[0].iteration: expected integer, got string",
				"f.json: $.tool_recordings[0].is_rejected: expected boolean, got string",
				"f.json: $.hitl_questions: expected array, got object",
			}, "\n")},
		{"record nested types", 0, `{"stages": [{"node_id": "n", "visible_text": 5, "usage": {"call_count": "2", "models": [1]}}], "usage": {"total_cost": -1}}`,
			strings.Join([]string{
				"f.json: $.usage.total_cost: expected non-negative number, got -1",
				"f.json: $.stages[0].visible_text: expected string, got number",
				"f.json: $.stages[0].usage.call_count: expected integer, got string",
				"f.json: $.stages[0].usage.models[0]: expected string, got number",
			}, "\n")},
		{"record duplicate ids", 0, `{"stages": [{"id": "x", "node_id": "n", "started_at": "2025-01-01T00:00:00Z"}], "tool_recordings": [{"tool_use_id": "x", "tool_name": "t", "timestamp": "2025-01-01T00:00:01Z"}]}`,
			`f.json: $.tool_recordings[0].tool_use_id: duplicate action id "x" (first at $.stages[0].id)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := DecodeDocument([]byte(tt.in), "f.json", tt.line)
			if err == nil {
				t.Fatalf("DecodeDocument(%s) = %+v, want error", tt.in, tr)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("DecodeDocument(%s) error:\n%s\nwant:\n%s", tt.in, got, tt.want)
			}
			var list trace.ErrorList
			if !errors.As(err, &list) {
				t.Errorf("error %T is not a trace.ErrorList", err)
			}
		})
	}
}

func TestDecodeDocumentBOM(t *testing.T) {
	tr, err := DecodeDocument([]byte("\xEF\xBB\xBF{\"actions\": []}"), "runs/win.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != "runs/win" {
		t.Errorf("id = %q, want runs/win", tr.ID)
	}
}

func TestAdapters(t *testing.T) {
	a := Adapters()
	var names []string
	for _, ad := range a {
		names = append(names, ad.Name())
	}
	if diff := cmp.Diff([]string{"crystallization_trace.v1", "workflow_run", "composition_report.v1"}, names); diff != "" {
		t.Errorf("Adapters() (-want +got):\n%s", diff)
	}
	a[0] = nil
	if Adapters()[0] == nil {
		t.Error("modifying the result of Adapters changed the registry")
	}
	detect := []struct {
		doc  string
		want string
	}{
		{`{"actions": []}`, "crystallization_trace.v1"},
		{`{"actions": [], "stages": []}`, "crystallization_trace.v1"},
		{`{"stages": null}`, "workflow_run"},
		{`{"_type": "workflow_run"}`, "workflow_run"},
		{`{"_type": "other"}`, ""},
		{`{"run": {}, "calls": []}`, "composition_report.v1"},
		{`{"run": {}}`, ""},
	}
	for _, tt := range detect {
		var doc map[string]any
		if err := json.Unmarshal([]byte(tt.doc), &doc); err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, ad := range Adapters() {
			if ad.Detect(doc) {
				got = ad.Name()
				break
			}
		}
		if got != tt.want {
			t.Errorf("detect(%s) = %q, want %q", tt.doc, got, tt.want)
		}
	}
}

// FuzzDecodeDocument checks that no input makes adapter detection or
// conversion panic, that failures are trace.ErrorLists, and that every
// trace produced, whatever its source format, round-trips through the
// trace codec.
func FuzzDecodeDocument(f *testing.F) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := DecodeDocument(data, "fuzz.json", 0)
		if err != nil {
			var list trace.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T %v is not a non-empty trace.ErrorList", err, err)
			}
			return
		}
		trace.Normalize(tr)
		enc, err := json.Marshal(tr)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := trace.Decode(enc, "fuzz.json", 0)
		if err != nil {
			t.Fatalf("Decode(Marshal(DecodeDocument(%q))): %v\n%s", data, err, enc)
		}
		if diff := cmp.Diff(tr, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}

func TestRunRecordLeftovers(t *testing.T) {
	doc := `{"stages": [], "source": "elsewhere", "flow": 1, "owner": "ops",
		"tool_recordings": [{"tool_use_id": "t", "tool_name": "x", "metadata": {"iteration": "mine", "host": "h"}, "iteration": 3, "output": "shadow", "extra_field": true}],
		"hitl_questions": [{"request_id": "q", "metadata": {"channel": "#ops"}, "trace_id": "tr"}]}`
	tr, err := DecodeDocument([]byte(doc), "r.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"owner": "ops"}, tr.Extra); diff != "" {
		t.Errorf("trace Extra (-want +got):\n%s", diff)
	}
	tool, question := tr.Actions[0], tr.Actions[1]
	if diff := cmp.Diff(map[string]any{"iteration": json.Number("3"), "host": "h"}, tool.Metadata); diff != "" {
		t.Errorf("tool metadata (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"extra_field": true}, tool.Extra); diff != "" {
		t.Errorf("tool Extra (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"channel": "#ops", "trace_id": "tr"}, question.Metadata); diff != "" {
		t.Errorf("question metadata (-want +got):\n%s", diff)
	}
	if tr.ID != "r" {
		t.Errorf("id = %q, want the file-derived r", tr.ID)
	}
}
