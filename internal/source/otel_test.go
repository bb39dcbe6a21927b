package source

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const otelTestdata = "testdata/agents/otel/"

// otelRecords reads a file the way the loader hands it to a session
// adapter: a *.jsonl file one record per line, a *.json file one record
// at line 0.
func otelRecords(t testing.TB, file string) []Record {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(file, ".jsonl") {
		return []Record{otelRecord(t, data, file, 0)}
	}
	var recs []Record
	for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		recs = append(recs, otelRecord(t, line, file, i+1))
	}
	return recs
}

func otelRecord(t testing.TB, data []byte, file string, line int) Record {
	t.Helper()
	v, err := trace.ParseJSON(data, file, line)
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s:%d: not an object", file, line)
	}
	return Record{Line: line, Doc: doc, Raw: data}
}

// actionSummary is what the tests state about each action.
type actionSummary struct {
	ID, Kind, Name string
	Error          bool
}

func summarizeActions(acts []trace.Action) []actionSummary {
	var out []actionSummary
	for _, a := range acts {
		out = append(out, actionSummary{ID: a.ID, Kind: string(a.Kind), Name: a.Name, Error: a.Metadata["error"] == true})
	}
	return out
}

func costOf(a trace.Action) *trace.Cost {
	if a.Cost == nil {
		return nil
	}
	c := *a.Cost
	c.Extra = nil
	return &c
}

func TestOTLPDetect(t *testing.T) {
	for _, file := range []string{otelTestdata + "sessions.jsonl", otelTestdata + "deploy.json"} {
		if r := otelRecords(t, file)[0]; !(OTLP{}).DetectRecord(r.Doc) {
			t.Errorf("DetectRecord(%s) = false", file)
		}
	}
	if (OTLP{}).DetectRecord(map[string]any{"actions": []any{}}) {
		t.Error("DetectRecord(trace) = true")
	}
}

func TestOTLPSessions(t *testing.T) {
	file := otelTestdata + "sessions.jsonl"
	traces, skipped, err := OTLP{}.DecodeSessions(otelRecords(t, file), file, normalize.Default())
	if err != nil {
		t.Fatalf("DecodeSessions: %v", err)
	}
	wantSkipped := []SkippedSession{{ID: "9c4f1e2d3b5a67788990aabbccddeeff", Line: 2, Reason: "no_tool_calls",
		Message: "trace 9c4f1e2d3b5a67788990aabbccddeeff has no execute_tool span"}}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(traces) != 2 {
		t.Fatalf("DecodeSessions = %d traces, want 2", len(traces))
	}

	// The release trace is split over both lines of the file.
	rel := traces[0]
	if rel.ID != "7d1c0b9e5f3a42e8b6d4c2a0e8f61357" || rel.Origin != (trace.Origin{Path: file, Line: 1}) {
		t.Errorf("trace 0 = %s at %v", rel.ID, rel.Origin)
	}
	wantMD := map[string]any{
		"agent": "otel", "goal": "Bump golang.org/x/mod to v0.20.0 and open a pull request",
		"model": "gpt-4.1-2025-04-14", "session_id": "conv-rel-1", "service": "release-bot",
	}
	if diff := cmp.Diff(wantMD, rel.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	wantActs := []actionSummary{
		{"call_r1", "observation", "read_file", false},
		{"call_s1", "tool_call", "go get", false},
		{"call_s1.2", "tool_call", "go mod tidy", false},
		{"call_s2", "tool_call", "go test", true},
		{"call_e1", "file_mutation", "fs.write", false},
		{"call_s3", "tool_call", "go test", false},
		{"call_s3.2", "tool_call", "git add", false},
		{"call_s3.3", "tool_call", "git commit", false},
		{"call_p1", "tool_call", "mcp__github__create_pull_request", false},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(rel.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	spansSeen := map[any]bool{}
	for _, a := range rel.Actions {
		spansSeen[a.Metadata["span_id"]] = true
	}
	if len(spansSeen) != 6 {
		t.Errorf("actions come from %d spans, want the 6 execute_tool spans", len(spansSeen))
	}
	// Five chat turns; the invoke_agent span's own usage is the sum of
	// its children and is not counted again.
	wantUsage := &trace.Usage{ModelCalls: 5, InputTokens: 11100, OutputTokens: 340, WallMS: 4800}
	if diff := cmp.Diff(wantUsage, rel.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	const model = "gpt-4.1-2025-04-14"
	wantCosts := []*trace.Cost{
		{Model: model, ModelCalls: 1, InputTokens: 600, OutputTokens: 45, WallMS: 600}, // read_file, first of turn 1
		{Model: model, ModelCalls: 0, InputTokens: 600, OutputTokens: 45, WallMS: 600}, // go get, second of turn 1
		nil, // go mod tidy: the call's cost is on its first part
		{Model: model, ModelCalls: 1, InputTokens: 2100, OutputTokens: 60, WallMS: 900},
		{Model: model, ModelCalls: 1, InputTokens: 1250, OutputTokens: 60, WallMS: 750},
		{Model: model, ModelCalls: 0, InputTokens: 1250, OutputTokens: 60, WallMS: 750},
		nil, nil,
		// The pull request's span is a child of its chat span.
		{Model: model, ModelCalls: 1, InputTokens: 2600, OutputTokens: 40, WallMS: 800},
	}
	var gotCosts []*trace.Cost
	for _, a := range rel.Actions {
		gotCosts = append(gotCosts, costOf(a))
	}
	if diff := cmp.Diff(wantCosts, gotCosts); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
	failed := rel.Actions[3]
	if failed.Metadata["exit_code"] != 1 || failed.Metadata["error_type"] != "exit_status" ||
		failed.Output != "--- FAIL: TestVersion (0.00s)\nFAIL" {
		t.Errorf("failed go test: metadata %v output %q", failed.Metadata, failed.Output)
	}
	base := time.Unix(1763980000, 0).UTC()
	if want := base.Add(1400 * time.Millisecond).Format(time.RFC3339Nano); rel.Actions[0].Timestamp != want {
		t.Errorf("timestamp = %q, want %q", rel.Actions[0].Timestamp, want)
	}
	if d := rel.Actions[1].DurationMS; d == nil || *d != 8000 {
		t.Errorf("go get duration = %v, want 8000", d)
	}
	if rel.StartedAt != base.Format(time.RFC3339Nano) || rel.FinishedAt != base.Add(60*time.Second).Format(time.RFC3339Nano) {
		t.Errorf("trace runs %s to %s", rel.StartedAt, rel.FinishedAt)
	}
	if p := rel.Actions[4].Parameters; !cmp.Equal(p, map[string]any{"path": "internal/mod/version_test.go", "content": "package mod\n"}) {
		t.Errorf("edit_file parameters = %v", p)
	}
	if p := rel.Actions[1].Parameters; !cmp.Equal(p, map[string]any{"module": "golang.org/x/mod", "version": "v0.20.0"}) {
		t.Errorf("go get parameters = %v", p)
	}

	triage := traces[1]
	if triage.ID != "3e5a7c9b1d2f4a6c8e0b2d4f6a8c0e1f" || triage.Metadata["goal"] != "Triage issue #512: crash on empty config" ||
		triage.Metadata["service"] != "triage-bot" || triage.Metadata["model"] != "claude-sonnet-4-5-2025-04-14" {
		t.Errorf("triage trace %s metadata %v", triage.ID, triage.Metadata)
	}
	wantActs = []actionSummary{
		{"call_t1", "observation", "gh issue view", false},
		{"call_t2", "tool_call", "gh issue edit", true},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(triage.Actions)); diff != "" {
		t.Errorf("triage actions (-want +got):\n%s", diff)
	}
	if p := triage.Actions[1].Parameters; !cmp.Equal(p, map[string]any{"number": "512", "add_label": "bug"}) {
		t.Errorf("gh issue edit parameters = %v", p)
	}
	for _, tr := range traces {
		if _, err := json.Marshal(tr); err != nil {
			t.Errorf("trace %s does not encode: %v", tr.ID, err)
		}
	}
}

func TestOTLPRedelivered(t *testing.T) {
	file := otelTestdata + "sessions.jsonl"
	recs := otelRecords(t, file)
	once, _, err := OTLP{}.DecodeSessions(recs, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	again := append(append([]Record{}, recs...), Record{Line: 3, Doc: recs[1].Doc, Raw: recs[1].Raw})
	twice, _, err := OTLP{}.DecodeSessions(again, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(once) != len(twice) || len(once[0].Actions) != len(twice[0].Actions) || !cmp.Equal(once[0].Usage, twice[0].Usage) {
		t.Errorf("a record delivered twice changes the traces: %d actions, usage %v; want %d, %v",
			len(twice[0].Actions), twice[0].Usage, len(once[0].Actions), once[0].Usage)
	}
}

func TestOTLPOlderConventions(t *testing.T) {
	file := otelTestdata + "deploy.json"
	traces, skipped, err := OTLP{}.DecodeSessions(otelRecords(t, file), file, nil)
	if err != nil || len(skipped) != 0 || len(traces) != 1 {
		t.Fatalf("DecodeSessions = %d traces, %v skipped, %v", len(traces), skipped, err)
	}
	tr := traces[0]
	if tr.Metadata["goal"] != "Deploy api v1.4.0 to staging" || tr.Metadata["model"] != "gpt-4o" {
		t.Errorf("metadata = %v", tr.Metadata)
	}
	wantActs := []actionSummary{
		{"d000000000000002", "tool_call", "deploy_service", false},
		{"d000000000000003", "tool_call", "kubectl rollout status", false},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	wantParams := map[string]any{"service": "api", "version": "v1.4.0", "replicas": json.Number("3")}
	if diff := cmp.Diff(wantParams, tr.Actions[0].Parameters); diff != "" {
		t.Errorf("kvlist arguments (-want +got):\n%s", diff)
	}
	wantCosts := []*trace.Cost{
		{Model: "gpt-4o", ModelCalls: 1, InputTokens: 350, OutputTokens: 23, WallMS: 1000},
		{Model: "gpt-4o", ModelCalls: 0, InputTokens: 350, OutputTokens: 22, WallMS: 1000},
	}
	if diff := cmp.Diff(wantCosts, []*trace.Cost{costOf(tr.Actions[0]), costOf(tr.Actions[1])}); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
}

func TestOTLPErrors(t *testing.T) {
	const file = "export.jsonl"
	lines := []string{
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz","spanId":"a000000000000001","startTimeUnixNano":12.5,` +
			`"attributes":[{"key":"k","value":{"intValue":"1.5"}},{"value":{"stringValue":"x"}},{"key":"z","value":{"fooValue":1}},` +
			`{"key":"two","value":{"stringValue":"a","boolValue":true}}],"status":{"code":"BAD"}}, 7]}]}]}`,
		`{"resourceSpans":{}}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"11111111111111111111111111111111","spanId":"b000000000000001",` +
			`"name":"execute_tool run_shell","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"run_shell"}},` +
			`{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{not json"}}]}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"22222222222222222222222222222222","spanId":"c000000000000001",` +
			`"parentSpanId":"short","endTimeUnixNano":"5","startTimeUnixNano":"9","name":"execute_tool x"}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"33333333333333333333333333333333","spanId":"d000000000000001",` +
			`"name":"execute_tool","attributes":[]}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"44444444444444444444444444444444","spanId":"e000000000000001",` +
			`"name":"execute_tool run_shell","attributes":[{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"command\":\"ls\"}"}}]}]}]}]}`,
	}
	var recs []Record
	for i, l := range lines {
		recs = append(recs, otelRecord(t, []byte(l), file, i+1))
	}
	traces, _, err := OTLP{}.DecodeSessions(recs, file, nil)
	want := []string{
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hex digits, got "xyz"`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: expected Unix nanoseconds as decimal digits, got "12.5"`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.intValue: expected a 64-bit integer, got "1.5"`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[1].key: missing required field`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[2].value.fooValue: unknown value type "fooValue"`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[3].value: expected one value type, got 2`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].status.code: unknown status code "BAD"`,
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[1]: expected object, got number`,
		`export.jsonl:2: $.resourceSpans: expected array, got object`,
		`export.jsonl:3: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[1].value: gen_ai.tool.call.arguments is not JSON`,
		`export.jsonl:4: $.resourceSpans[0].scopeSpans[0].spans[0].parentSpanId: expected 16 hex digits, got "short"`,
		`export.jsonl:4: $.resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: end 5 is before start 9`,
		`export.jsonl:5: $.resourceSpans[0].scopeSpans[0].spans[0].attributes: execute_tool span names no tool (gen_ai.tool.name)`,
	}
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("DecodeSessions error = %v, want a trace.ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	// The one trace without a problem is still returned.
	if len(traces) != 1 || traces[0].ID != "44444444444444444444444444444444" || traces[0].Actions[0].Name != "ls" {
		t.Errorf("traces = %v, want the one good trace", traces)
	}
}

func FuzzOTLP(f *testing.F) {
	for _, file := range []string{otelTestdata + "sessions.jsonl", otelTestdata + "deploy.json"} {
		for _, r := range otelRecords(f, file) {
			f.Add(r.Raw)
		}
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"11111111111111111111111111111111","spanId":"1111111111111111","parentSpanId":"1111111111111111","name":"execute_tool t","attributes":[{"key":"gen_ai.tool.call.result","value":{"doubleValue":"NaN"}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := trace.ParseJSON(data, "f.jsonl", 1)
		if err != nil {
			return
		}
		doc, ok := v.(map[string]any)
		if !ok {
			return
		}
		// The same record twice: a trace split over two lines.
		recs := []Record{{Line: 1, Doc: doc, Raw: data}, {Line: 2, Doc: doc, Raw: data}}
		traces, _, err := OTLP{}.DecodeSessions(recs, "f.jsonl", nil)
		if err != nil {
			var list trace.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error %T %v is not a non-empty ErrorList", err, err)
			}
		}
		for _, tr := range traces {
			if len(tr.Actions) == 0 {
				t.Fatalf("trace %s has no action", tr.ID)
			}
			if _, err := json.Marshal(tr); err != nil {
				t.Fatalf("trace %s does not encode: %v", tr.ID, err)
			}
		}
	})
}

func BenchmarkOTLP(b *testing.B) {
	file := otelTestdata + "sessions.jsonl"
	recs := otelRecords(b, file)
	rules := normalize.Default()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := (OTLP{}).DecodeSessions(recs, file, rules); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFirstUserText checks the message conventions the OTel goal is read
// from, as a JSON string or as a structured value, and the texts that give
// no goal.
func TestFirstUserText(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"parts", `[{"role":"system","content":"be brief"},{"role":"user","parts":[{"type":"text","content":"fix"},{"type":"image","content":"x.png"},{"type":"text","content":"the build"}]}]`, "fix\nthe build"},
		{"plain content", `[{"role":"user","content":"bump go"}]`, "bump go"},
		{"structured", []any{map[string]any{"role": "user", "content": "tag it"}}, "tag it"},
		{"first user wins", `[{"role":"user","content":"one"},{"role":"user","content":"two"}]`, "one"},
		{"no user", `[{"role":"assistant","content":"done"}]`, ""},
		{"empty user skipped", `[{"role":"user","content":""},{"role":"user","parts":[{"type":"text","content":"next"}]}]`, "next"},
		{"not json", `fix the build`, ""},
		{"trailing garbage", `[{"role":"user","content":"a"}] x`, ""},
		{"not a list", `{"role":"user","content":"a"}`, ""},
		{"not a string or list", 42, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, errs := firstUserText(tt.in, "f.jsonl", 3, "$.x"); got != tt.want || errs != nil {
				t.Errorf("firstUserText = %q, %v; want %q", got, errs, tt.want)
			}
		})
	}
}

// TestOTLPRedeliveredChanged checks that a span sent again with other
// content is an error naming both copies, not a redelivery that keeps one.
func TestOTLPRedeliveredChanged(t *testing.T) {
	file := otelTestdata + "sessions.jsonl"
	recs := otelRecords(t, file)
	v, err := trace.ParseJSON(recs[1].Raw, file, 2)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(map[string]any)
	span := doc["resourceSpans"].([]any)[0].(map[string]any)["scopeSpans"].([]any)[0].(map[string]any)["spans"].([]any)[0].(map[string]any)
	span["name"] = span["name"].(string) + " changed"
	again := append(append([]Record{}, recs...), Record{Line: 3, Doc: doc, Raw: recs[1].Raw})
	traces, _, err := OTLP{}.DecodeSessions(again, file, nil)
	want := "$.resourceSpans[0].scopeSpans[0].spans[0]: span "
	if err == nil || !strings.Contains(err.Error(), file+":3: "+want) || !strings.Contains(err.Error(), "sent again with different content (first at line 2, $.resourceSpans[0].scopeSpans[0].spans[0])") {
		t.Fatalf("DecodeSessions with a changed span sent again: error %v, want one at line 3 naming line 2", err)
	}
	for _, tr := range traces {
		if tr.ID == span["traceId"] {
			t.Errorf("the trace of the changed span was kept: %s", tr.ID)
		}
	}
}

// TestOTLPDuplicateKeysInText: tool-call arguments and message lists
// written as JSON strings are refused when an object in them repeats a
// member name (encoding/json would keep the last one), naming the
// attribute and the member inside the text.
func TestOTLPDuplicateKeysInText(t *testing.T) {
	const file = "export.jsonl"
	span := func(traceID, attrs string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + traceID + `","spanId":"a000000000000001",` +
			`"name":"execute_tool run_shell","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"run_shell"}}` + attrs + `]}]}]}]}`
	}
	agent := func(traceID, attrs, events string) string {
		return `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"` + traceID + `","spanId":"b000000000000001",` +
			`"name":"invoke_agent","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"invoke_agent"}}` + attrs + `],"events":[` + events + `]},` +
			`{"traceId":"` + traceID + `","spanId":"b000000000000002","parentSpanId":"b000000000000001","name":"execute_tool ls",` +
			`"attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"ls"}}]}]}]}]}`
	}
	lines := []string{
		span("11111111111111111111111111111111", `,{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"command\":\"ls\",\"command\":\"rm -rf /\"}"}}`),
		agent("22222222222222222222222222222222", `,{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"user\",\"content\":\"a\",\"content\":\"b\"}]"}}`, ``),
		agent("33333333333333333333333333333333", ``, `{"name":"gen_ai.client.inference.operation.details","attributes":[{"key":"gen_ai.input.messages","value":{"stringValue":"[{\"role\":\"user\",\"role\":\"system\",\"content\":\"c\"}]"}}]}`),
		span("44444444444444444444444444444444", `,{"key":"gen_ai.tool.call.arguments","value":{"stringValue":"{\"command\":\"ls\"}"}}`),
	}
	var recs []Record
	for i, l := range lines {
		recs = append(recs, otelRecord(t, []byte(l), file, i+1))
	}
	traces, _, err := OTLP{}.DecodeSessions(recs, file, nil)
	want := []string{
		`export.jsonl:1: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[1].value: JSON text $.command: duplicate key "command"`,
		`export.jsonl:2: $.resourceSpans[0].scopeSpans[0].spans[0].attributes[1].value: JSON text $[0].content: duplicate key "content"`,
		`export.jsonl:3: $.resourceSpans[0].scopeSpans[0].spans[0].events[0].attributes: JSON text $[0].role: duplicate key "role"`,
	}
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("DecodeSessions error = %v, want a trace.ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if len(traces) != 1 || traces[0].ID != "44444444444444444444444444444444" {
		t.Errorf("traces = %v, want the one good trace", traces)
	}
}
