package source

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const (
	otelLogsClaude = "testdata/agents/otellogs/claude-code.jsonl"
	otelLogsCodex  = "testdata/agents/otellogs/codex.json"
	claudeLogsID   = "6e1f0a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
	codexLogsID    = "019a9f3e-7c1d-7a2b-9e8f-1d2c3b4a5f6e"
)

func TestOTLPLogsDetect(t *testing.T) {
	for _, file := range []string{otelLogsClaude, otelLogsCodex} {
		if a := detectSession(otelRecords(t, file)[0].Doc); a == nil || a.Name() != "otel-logs" {
			t.Errorf("detectSession(%s) = %v, want otel-logs", file, a)
		}
	}
	if a := detectSession(otelRecords(t, otelTestdata+"deploy.json")[0].Doc); a == nil || a.Name() != "otel" {
		t.Errorf("detectSession(spans) = %v, want otel", a)
	}
}

// TestOTLPLogsClaude reads Claude Code's telemetry events: the tool
// results after an api_request are its calls, a record delivered twice
// is one call, and the arguments come from tool_input, else from
// tool_parameters.
func TestOTLPLogsClaude(t *testing.T) {
	traces, skipped, err := OTLPLogs{}.DecodeSessions(otelRecords(t, otelLogsClaude), otelLogsClaude, normalize.Default())
	if err != nil {
		t.Fatalf("DecodeSessions: %v", err)
	}
	wantSkipped := []SkippedSession{{ID: "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d", Line: 3, Reason: ReasonNoToolCalls,
		Message: "claude-code session 9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d has no tool_result event in its 2 events"}}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(traces) != 1 {
		t.Fatalf("DecodeSessions = %d traces, want 1", len(traces))
	}
	tr := traces[0]
	wantMD := map[string]any{"agent": "claude-code", "session_id": claudeLogsID, "service": "claude-code",
		"model": "claude-sonnet-4-5", "goal": "Fix the off-by-one in the pager and commit it"}
	if diff := cmp.Diff(wantMD, tr.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	wantActs := []actionSummary{
		{"toolu_01R", "observation", "Read", false},
		{"toolu_01E", "file_mutation", "fs.edit", false},
		{"toolu_01B1", "tool_call", "go test", true},
		{"toolu_01B2", "tool_call", "go test", false},
		{"toolu_01B2.2", "tool_call", "git commit", false},
		{"toolu_01M", "tool_call", "mcp__github__create_pull_request", false},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	// Cache reads are input; each api_request's cost and duration go to
	// the first of the calls after it.
	wantCosts := []*trace.Cost{
		{Model: "claude-sonnet-4-5", ModelCalls: 1, InputTokens: 3000, OutputTokens: 120, WallMS: 1800, TotalCostUSD: 0.0123},
		{Model: "claude-sonnet-4-5", ModelCalls: 1, InputTokens: 3400, OutputTokens: 300, WallMS: 2500, TotalCostUSD: 0.02},
		{Model: "claude-sonnet-4-5", ModelCalls: 1, InputTokens: 3600, OutputTokens: 80, WallMS: 1200, TotalCostUSD: 0.01},
		{Model: "claude-sonnet-4-5", ModelCalls: 1, InputTokens: 1850, OutputTokens: 45, WallMS: 650, TotalCostUSD: 0.011},
		nil,
		{Model: "claude-sonnet-4-5", InputTokens: 1850, OutputTokens: 45, WallMS: 650},
	}
	var gotCosts []*trace.Cost
	for _, a := range tr.Actions {
		gotCosts = append(gotCosts, costOf(a))
	}
	if diff := cmp.Diff(wantCosts, gotCosts); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
	edit := tr.Actions[1]
	if edit.Parameters["old"] != "i <= n" || edit.Parameters["new"] != "i < n" {
		t.Errorf("edit parameters = %v, want tool_input's old and new strings", edit.Parameters)
	}
	failed := tr.Actions[2]
	if failed.Metadata["exit_code"] != 1 || failed.Output != "Exit code 1" || *failed.DurationMS != 900 {
		t.Errorf("failed Bash: metadata %v, output %v, duration %v", failed.Metadata, failed.Output, *failed.DurationMS)
	}
	if failed.Metadata["description"] != "Run the pager tests" || failed.Timestamp != "2025-11-20T09:13:31Z" {
		t.Errorf("failed Bash: description %v at %s", failed.Metadata["description"], failed.Timestamp)
	}
	wantUsage := &trace.Usage{ModelCalls: 4, InputTokens: 13700, OutputTokens: 590, TotalCostUSD: 0.0533,
		WallMS: 1800 + 2500 + 1200 + 1300 + 12 + 30 + 900 + 2100 + 300}
	if diff := cmp.Diff(wantUsage, tr.Usage, floatTolerance); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

var floatTolerance = cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })

// TestOTLPLogsCodex reads Codex's events: every value a string, no
// timeUnixNano, and the calls of a response before its
// response.completed event.
func TestOTLPLogsCodex(t *testing.T) {
	traces, skipped, err := OTLPLogs{}.DecodeSessions(otelRecords(t, otelLogsCodex), otelLogsCodex, normalize.Default())
	if err != nil || len(skipped) != 0 || len(traces) != 1 {
		t.Fatalf("DecodeSessions = %d traces, %v skipped, %v", len(traces), skipped, err)
	}
	tr := traces[0]
	if tr.ID != codexLogsID || tr.StartedAt != "2025-11-20T10:00:00Z" || tr.FinishedAt != "2025-11-20T10:00:12.5Z" {
		t.Errorf("trace %s, %s to %s", tr.ID, tr.StartedAt, tr.FinishedAt)
	}
	// A redacted prompt is no goal.
	wantMD := map[string]any{"agent": "codex", "session_id": codexLogsID, "service": "codex_cli_rs", "model": "gpt-5-codex"}
	if diff := cmp.Diff(wantMD, tr.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	wantActs := []actionSummary{
		{"call_a1", "tool_call", "cargo test", true},
		{"call_a2", "file_mutation", "fs.edit", false},
		{"call_a3", "tool_call", "cargo test", false},
		{"call_a3.2", "tool_call", "git commit", false},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if a := tr.Actions[0]; a.Metadata["exit_code"] != 101 || *a.DurationMS != 2400 || a.Metadata["cwd"] != "/work/limits" {
		t.Errorf("failed test: metadata %v, duration %v", a.Metadata, *a.DurationMS)
	}
	wantCosts := []*trace.Cost{
		{Model: "gpt-5-codex", ModelCalls: 1, InputTokens: 4200, OutputTokens: 150},
		{Model: "gpt-5-codex", ModelCalls: 1, InputTokens: 2400, OutputTokens: 105},
		{Model: "gpt-5-codex", InputTokens: 2400, OutputTokens: 105},
		nil,
	}
	var gotCosts []*trace.Cost
	for _, a := range tr.Actions {
		gotCosts = append(gotCosts, costOf(a))
	}
	if diff := cmp.Diff(wantCosts, gotCosts); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
	if got := tr.Actions[1].Parameters["path"]; got != "src/limits.rs" {
		t.Errorf("apply_patch path = %v", got)
	}
}

// logExport writes one OTLP/JSON logs export holding records, each given
// as its attributes' JSON, for the error cases.
func logExport(records ...string) string {
	var recs []string
	for _, r := range records {
		recs = append(recs, fmt.Sprintf(`{"timeUnixNano":"1763630000000000000","attributes":[%s]}`, r))
	}
	return `{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"logRecords":[` + strings.Join(recs, ",") + `]}]}]}`
}

func attr(k, v string) string { return fmt.Sprintf(`{"key":%q,"value":{"stringValue":%q}}`, k, v) }

func TestOTLPLogsErrors(t *testing.T) {
	const rec = `$.resourceLogs[0].scopeLogs[0].logRecords[0]`
	tool := func(extra ...string) string {
		return strings.Join(append([]string{attr("event.name", "codex.tool_result"), attr("conversation.id", "c1"),
			attr("tool_name", "shell"), attr("call_id", "call_1")}, extra...), ",")
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"no session", logExport(attr("event.name", "codex.tool_result") + "," + attr("tool_name", "shell")),
			[]string{`f.jsonl:1: ` + rec + `.attributes: codex.tool_result record names no session (session.id or conversation.id)`}},
		{"no tool", logExport(attr("event.name", "codex.tool_result") + "," + attr("conversation.id", "c1")),
			[]string{`f.jsonl:1: ` + rec + `.attributes: codex.tool_result event names no tool (tool_name)`}},
		{"duration", logExport(tool(attr("duration_ms", "soon"))),
			[]string{`f.jsonl:1: ` + rec + `.attributes[4].value: duration_ms: expected an integer, got "soon"`}},
		{"success", logExport(tool(attr("success", "maybe"))),
			[]string{`f.jsonl:1: ` + rec + `.attributes[4].value: success: expected true or false, got "maybe"`}},
		{"not an agent event", logExport(strings.Join([]string{attr("event.name", "tool_result"), attr("session.id", "s1"), attr("tool_name", "Bash"), attr("tool_input", "{command")}, ",")),
			nil},
		{"claude tool_input", strings.Replace(logExport(strings.Join([]string{attr("event.name", "tool_result"), attr("session.id", "s1"), attr("tool_name", "Bash"), attr("tool_input", "{command")}, ",")),
			`{"timeUnixNano"`, `{"body":{"stringValue":"claude_code.tool_result"},"timeUnixNano"`, 1),
			[]string{`f.jsonl:1: ` + rec + `.attributes[3].value: tool_input is not a JSON object`}},
		{"redelivered", logExport(tool(attr("output", "a"))) + "\n" + logExport(tool(attr("output", "b"))),
			[]string{`f.jsonl:2: ` + rec + `: codex.tool_result event sent again with different attributes (first at line 1, ` + rec + `)`}},
		{"gemini args", logExport(strings.Join([]string{attr("event.name", "gemini_cli.tool_call"), attr("session.id", "g1"), attr("function_name", "replace"), attr("function_args", "nope")}, ",")),
			[]string{`f.jsonl:1: ` + rec + `.attributes[3].value: function_args is not a JSON object`}},
		{"gemini no tool", logExport(strings.Join([]string{attr("event.name", "gemini_cli.tool_call"), attr("session.id", "g1")}, ",")),
			[]string{`f.jsonl:1: ` + rec + `.attributes: gemini_cli.tool_call event names no tool (function_name)`}},
		{"resourceLogs", `{"resourceLogs":{}}`, []string{`f.jsonl:1: $.resourceLogs: expected array, got object`}},
		{"record", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[3]}]}]}`, []string{`f.jsonl:1: ` + rec + `: expected object, got number`}},
		{"attribute value", logExport(tool(`{"key":"duration_ms","value":{"intValue":"1.5"}}`)),
			[]string{`f.jsonl:1: ` + rec + `.attributes[4].value.intValue: expected a 64-bit integer, got "1.5"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traces, _, err := decodeText(t, OTLPLogs{}, tc.text)
			if tc.want == nil {
				// A record that is not an agent's event (no known
				// prefix in its name or body) is passed over.
				if err != nil {
					t.Errorf("unexpected error %v", err)
				}
				return
			}
			if len(traces) != 0 {
				t.Errorf("%d traces from a session with a problem", len(traces))
			}
			if diff := cmp.Diff(tc.want, errorLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOTLPLogsTimestamp checks that an event without timeUnixNano is
// dated by its event.timestamp, and that a bad one is reported.
func TestOTLPLogsTimestamp(t *testing.T) {
	const text = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"0","attributes":[` +
		`{"key":"event.name","value":{"stringValue":"codex.tool_result"}},{"key":"event.timestamp","value":{"stringValue":"noon"}},` +
		`{"key":"conversation.id","value":{"stringValue":"c1"}},{"key":"tool_name","value":{"stringValue":"shell"}}]}]}]}]}`
	_, _, err := decodeText(t, OTLPLogs{}, text)
	want := []string{`f.jsonl:1: $.resourceLogs[0].scopeLogs[0].logRecords[0].attributes[1].value: invalid timestamp "noon": expected RFC 3339`}
	if diff := cmp.Diff(want, errorLines(err)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func FuzzOTLPLogs(f *testing.F) { fuzzSessions(f, "testdata/agents/otellogs/*.jsonl", OTLPLogs{}) }

// TestOTLPLogsSourceHash checks that two sessions exported in the same
// records have different source hashes, each covering only the records
// that hold its events.
func TestOTLPLogsSourceHash(t *testing.T) {
	rec := func(session, call string) string {
		return strings.Join([]string{attr("event.name", "codex.tool_result"), attr("conversation.id", session),
			attr("tool_name", "shell"), attr("call_id", call)}, ",")
	}
	text := logExport(rec("a", "call_1"), rec("b", "call_2")) + "\n" + logExport(rec("a", "call_3"))
	traces, _, err := decodeText(t, OTLPLogs{}, text)
	if err != nil || len(traces) != 2 {
		t.Fatalf("decode = %d traces, %v", len(traces), err)
	}
	lines := strings.Split(text, "\n")
	wantA := HashRecords([]Record{{Raw: []byte("a")}, {Raw: []byte(lines[0])}, {Raw: []byte(lines[1])}})
	wantB := HashRecords([]Record{{Raw: []byte("b")}, {Raw: []byte(lines[0])}})
	if traces[0].SourceHash != wantA || traces[1].SourceHash != wantB {
		t.Errorf("source hashes = %s, %s; want %s, %s", traces[0].SourceHash, traces[1].SourceHash, wantA, wantB)
	}
}

// TestOTLPMixedSignals loads a file in which a collector wrote the exports
// of every signal, as its file exporter does when one exporter serves the
// traces, logs and metrics pipelines: the spans and the log events both
// become traces and the metrics are passed over, whichever signal comes
// first.
func TestOTLPMixedSignals(t *testing.T) {
	read := func(file string) []string {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	spans := read(otelTestdata + "sessions.jsonl")
	logs := read(otelLogsClaude)[:2]
	const metrics = `{"resourceMetrics":[{"resource":{"attributes":[]},"scopeMetrics":[{"metrics":[{"name":"claude_code.cost.usage","sum":{"dataPoints":[{"asDouble":0.1}]}}]}]}]}`
	for _, tc := range []struct {
		name  string
		lines []string
	}{
		{"spans first", append(append(append([]string{}, spans...), metrics), logs...)},
		{"logs first", append(append(append([]string{}, logs...), metrics), spans...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "export.jsonl"), []byte(strings.Join(tc.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Load(context.Background(), dir, Options{})
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			var ids []string
			for _, tr := range res.Traces {
				ids = append(ids, tr.ID)
			}
			slices.Sort(ids)
			want := []string{"3e5a7c9b1d2f4a6c8e0b2d4f6a8c0e1f", claudeLogsID, "7d1c0b9e5f3a42e8b6d4c2a0e8f61357"}
			if diff := cmp.Diff(want, ids); diff != "" {
				t.Errorf("trace ids (-want +got):\n%s", diff)
			}
		})
	}
}

func BenchmarkOTLPLogs(b *testing.B) {
	for _, file := range []string{otelLogsClaude, otelLogsCodex} {
		recs := otelRecords(b, file)
		rules := normalize.Default()
		b.Run(filepath.Base(file), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := (OTLPLogs{}).DecodeSessions(recs, file, rules); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestOTLPLogsEventName checks that a record named by the eventName field
// of OTLP 1.5, with no event.name attribute, is read.
func TestOTLPLogsEventName(t *testing.T) {
	const text = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1763630000000000000","eventName":"claude_code.tool_result","attributes":[` +
		`{"key":"session.id","value":{"stringValue":"s1"}},{"key":"tool_name","value":{"stringValue":"Bash"}},` +
		`{"key":"tool_input","value":{"stringValue":"{\"command\":\"git tag v1\"}"}}]}]}]}]}`
	traces, _, err := decodeText(t, OTLPLogs{}, text)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decode = %d traces, %v", len(traces), err)
	}
	want := []actionSummary{{"s1.tool-1", "tool_call", "git tag", false}}
	if diff := cmp.Diff(want, summarizeActions(traces[0].Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// TestOTLPLogsGemini reads Gemini CLI's telemetry events: a tool_call
// names its tool in function_name and its arguments in function_args, and
// the api_response before it is its model call.
func TestOTLPLogsGemini(t *testing.T) {
	rec := func(sec int, attrs ...string) string {
		return fmt.Sprintf(`{"timeUnixNano":"%d","attributes":[%s]}`, 1763630000000000000+sec*1000000000, strings.Join(attrs, ","))
	}
	num := func(k string, v int) string { return fmt.Sprintf(`{"key":%q,"value":{"intValue":"%d"}}`, k, v) }
	boolean := func(k string, v bool) string { return fmt.Sprintf(`{"key":%q,"value":{"boolValue":%t}}`, k, v) }
	common := func(name string) []string {
		return []string{attr("event.name", name), attr("session.id", "g-1"), attr("prompt_id", "p-1")}
	}
	records := []string{
		rec(1, append(common("gemini_cli.user_prompt"), attr("prompt", "Tag the release"))...),
		rec(2, append(common("gemini_cli.api_response"), attr("model", "gemini-2.5-pro"), num("input_token_count", 900),
			num("output_token_count", 20), num("thoughts_token_count", 10), num("duration_ms", 1500))...),
		rec(3, append(common("gemini_cli.tool_call"), attr("function_name", "run_shell_command"),
			attr("function_args", `{"command":"git tag v2.0.0 && git push origin v2.0.0"}`), num("duration_ms", 800), boolean("success", true))...),
		rec(4, append(common("gemini_cli.tool_call"), attr("function_name", "write_file"),
			attr("function_args", `{"file_path":"NOTES.md","content":"v2.0.0"}`), num("duration_ms", 5), boolean("success", false), attr("error", "permission denied"))...),
	}
	text := `{"resourceLogs":[{"resource":{"attributes":[` + attr("service.name", "gemini-cli") + `]},"scopeLogs":[{"logRecords":[` + strings.Join(records, ",") + `]}]}]}`
	traces, _, err := decodeText(t, OTLPLogs{}, text)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decode = %d traces, %v", len(traces), err)
	}
	tr := traces[0]
	want := []actionSummary{
		{"g-1.tool-3", "tool_call", "git tag", false},
		{"g-1.tool-3.2", "tool_call", "git push", false},
		{"g-1.tool-4", "file_mutation", "fs.write", true},
	}
	if diff := cmp.Diff(want, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	wantCost := &trace.Cost{Model: "gemini-2.5-pro", ModelCalls: 1, InputTokens: 450, OutputTokens: 15, WallMS: 750}
	if diff := cmp.Diff(wantCost, costOf(tr.Actions[0])); diff != "" {
		t.Errorf("cost (-want +got):\n%s", diff)
	}
	if tr.Metadata["agent"] != "gemini-cli" || tr.Metadata["goal"] != "Tag the release" || tr.Actions[2].Output != "permission denied" {
		t.Errorf("metadata %v, failed write output %v", tr.Metadata, tr.Actions[2].Output)
	}
}
