package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const claudeShop = "testdata/agents/claude/-home-dev-shop/5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10.jsonl"

// TestClaudeSession checks what the long session makes of its 33 records:
// one call per tool_use in order, the results, errors and exit codes, the
// sidechain marking, the goal past the meta and command records, the
// summary, and the cost of each model turn divided over its calls.
func TestClaudeSession(t *testing.T) {
	var rec recorder
	traces, skipped, err := decodeClaude(readRecords(t, claudeShop), "s.jsonl", rec.actions)
	if err != nil || len(skipped) != 0 || len(traces) != 1 {
		t.Fatalf("decodeClaude = %d traces, %v skipped, %v", len(traces), skipped, err)
	}
	tr := traces[0]
	wantIDs := []string{"toolu_01", "toolu_02", "toolu_03", "toolu_04", "toolu_05", "toolu_06", "toolu_07", "toolu_08", "toolu_09", "toolu_s1", "toolu_10"}
	if diff := cmp.Diff(wantIDs, ids(rec.calls)); diff != "" {
		t.Errorf("call ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantIDs, callIDs(tr)); diff != "" {
		t.Errorf("action call ids (-want +got):\n%s", diff)
	}
	wantTools := []string{"Read", "Grep", "TodoWrite", "Bash", "Bash", "Read", "Edit", "Bash", "Task", "Bash", "Bash"}
	if diff := cmp.Diff(wantTools, tools(rec.calls)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantMeta := map[string]any{
		"agent":         "claude-code",
		"session_id":    "5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10",
		"goal":          "Bump golang.org/x/text to v0.21.0, make sure the tests still pass, and commit it.",
		"summary":       "Bump golang.org/x/text and commit",
		"cwd":           "/home/dev/shop",
		"git_branch":    "main",
		"agent_version": "2.0.14",
		"model":         "claude-sonnet-4-5-20250929",
		"prompts": []any{map[string]any{"timestamp": "2025-10-14T09:30:02.274Z",
			"text": "Bump golang.org/x/text to v0.21.0, make sure the tests still pass, and commit it."}},
	}
	if diff := cmp.Diff(wantMeta, tr.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if tr.StartedAt != "2025-10-14T09:30:01.137Z" || tr.FinishedAt != "2025-10-14T09:31:20.960Z" {
		t.Errorf("started %s, finished %s", tr.StartedAt, tr.FinishedAt)
	}

	failed := rec.call(t, "toolu_05")
	if !failed.IsError || failed.ExitCode == nil || *failed.ExitCode != 1 || !strings.HasPrefix(failed.Result.(string), "Exit code 1\n--- FAIL") {
		t.Errorf("toolu_05 = error %v, exit %v, result %q; want a failure with exit code 1", failed.IsError, failed.ExitCode, failed.Result)
	}
	if ok := rec.call(t, "toolu_08"); ok.IsError || ok.ExitCode == nil || *ok.ExitCode != 0 || ok.DurationMS == nil || *ok.DurationMS != 8096 {
		t.Errorf("toolu_08 = error %v, exit %v, duration %v; want exit code 0 in 8096 ms", ok.IsError, ok.ExitCode, ok.DurationMS)
	}
	// A Read has no exit status.
	if read := rec.call(t, "toolu_01"); read.ExitCode != nil {
		t.Errorf("toolu_01 exit code = %d, want none", *read.ExitCode)
	}
	if task := rec.call(t, "toolu_09"); task.Result != "Only golang.org/x/text moved, from v0.14.0 to v0.21.0; go.sum has the matching hashes." || task.DurationMS == nil || *task.DurationMS != 10234 {
		t.Errorf("toolu_09 = %q in %v ms; want the text blocks joined, and toolUseResult.totalDurationMs", task.Result, task.DurationMS)
	}
	if edit := rec.call(t, "toolu_07"); edit.Args["file_path"] != "/home/dev/shop/internal/i18n/format_test.go" {
		t.Errorf("toolu_07 args = %v", edit.Args)
	}
	for _, c := range rec.calls {
		side := c.Metadata["sidechain"] == true
		if side != (c.ID == "toolu_s1") {
			t.Errorf("%s: sidechain = %v", c.ID, side)
		}
	}

	// msg_01: 12 + 2040 + 10500 input (2040 written to the cache, 10500
	// read from it), 187 output, 4548 ms since the prompt, over two calls.
	if diff := cmp.Diff([]*trace.Cost{
		{Model: "claude-sonnet-4-5-20250929", ModelCalls: 1, InputTokens: 6276, OutputTokens: 94, CacheReadTokens: 5250, CacheWriteTokens: 1020, WallMS: 2274},
		{Model: "claude-sonnet-4-5-20250929", ModelCalls: 0, InputTokens: 6276, OutputTokens: 93, CacheReadTokens: 5250, CacheWriteTokens: 1020, WallMS: 2274},
	}, []*trace.Cost{rec.calls[0].Cost, rec.calls[1].Cost}); diff != "" {
		t.Errorf("msg_01 shares (-want +got):\n%s", diff)
	}
	// Ten turns produced calls; two (the subagent's answer and the
	// final one) did not, and count only in the trace's usage.
	if diff := cmp.Diff(trace.Cost{ModelCalls: 10, InputTokens: 159204 - 5323 - 16384, OutputTokens: 1167 - 31 - 39}, costSum(rec.calls)); diff != "" {
		t.Errorf("cost of the calls (-want +got):\n%s", diff)
	}
	if u := tr.Usage; u.ModelCalls != 12 || u.InputTokens != 159204 || u.OutputTokens != 1167 {
		t.Errorf("usage = %+v, want 12 model calls, 159204 input and 1167 output tokens", u)
	}
}

// TestClaudeTwoSessions reads the file that holds two sessions: a lint
// fix, and a resumed session whose last call was interrupted.
func TestClaudeTwoSessions(t *testing.T) {
	var rec recorder
	traces, _, err := decodeClaude(readRecords(t, "testdata/agents/claude/-home-dev-api/3a7c9b2e-1d4f-4c6a-8e0b-5f2d1c3b4a59.jsonl"), "f.jsonl", rec.actions)
	if err != nil || len(traces) != 2 {
		t.Fatalf("decodeClaude = %d traces, %v", len(traces), err)
	}
	if diff := cmp.Diff([]string{"toolu_l1", "toolu_l2", "toolu_l3", "toolu_p1", "toolu_p2"}, ids(rec.calls)); diff != "" {
		t.Errorf("call ids (-want +got):\n%s", diff)
	}
	if g := traces[1].Metadata["goal"]; g != "Open a pull request for the lint fix." {
		t.Errorf("goal = %v", g)
	}
	p2 := rec.call(t, "toolu_p2")
	if p2.Metadata["no_result"] != true || p2.Result != nil {
		t.Errorf("toolu_p2 = %v, %v; want no result", p2.Metadata, p2.Result)
	}
	if l1 := rec.call(t, "toolu_l1"); !l1.IsError || l1.ExitCode == nil || *l1.ExitCode != 1 {
		t.Errorf("toolu_l1: want a failure with exit code 1")
	}
	if l3 := rec.call(t, "toolu_l3"); l3.IsError || l3.Result != "" || l3.Metadata != nil {
		t.Errorf("toolu_l3 = %+v, want an empty success", l3)
	}
}

// TestClaudeSubagentFile reads a subagent's own log: all sidechain, with
// the parent's session id.
func TestClaudeSubagentFile(t *testing.T) {
	var rec recorder
	traces, _, err := decodeClaude(readRecords(t, "testdata/agents/claude/-home-dev-shop/agent-a1b2c3d4.jsonl"), "a.jsonl", rec.actions)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decodeClaude = %d traces, %v", len(traces), err)
	}
	tr := traces[0]
	if tr.ID != "5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10.agent-a1b2c3d4" || tr.Metadata["parent_session_id"] != "5b0c6e0e-2f7d-4a51-9d0e-6c1f8a3b2d10" || tr.Metadata["sidechain"] != true {
		t.Errorf("trace %s, metadata %v", tr.ID, tr.Metadata)
	}
	if tr.Metadata["goal"] != "Find every place that formats money." {
		t.Errorf("goal = %v", tr.Metadata["goal"])
	}
	if diff := cmp.Diff([]string{"Glob", "Grep"}, tools(rec.calls)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// TestClaudeBadInput lists the problems of malformed records, each at its
// line and path, every one of them.
func TestClaudeBadInput(t *testing.T) {
	const ok = `{"type":"user","sessionId":"s","message":{"role":"user","content":"go"}}`
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"no session id", `{"type":"user","message":{"role":"user","content":"go"}}`, []string{
			"f.jsonl:1: $.sessionId: missing required field"}},
		{"message not an object", ok + "\n" + `{"type":"assistant","sessionId":"s","message":"hi"}`, []string{
			"f.jsonl:2: $.message: expected object, got string"}},
		{"no message", ok + "\n" + `{"type":"assistant","sessionId":"s"}`, []string{
			"f.jsonl:2: $.message: missing required field"}},
		{"content a number", ok + "\n" + `{"type":"assistant","sessionId":"s","message":{"content":3}}`, []string{
			"f.jsonl:2: $.message.content: expected string or array, got number"}},
		{"tool_use without id and name, input an array", ok + "\n" + `{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","input":[]}]}}`, []string{
			"f.jsonl:2: $.message.content[0].id: missing required field",
			"f.jsonl:2: $.message.content[0].name: missing required field",
			"f.jsonl:2: $.message.content[0].input: expected object, got array"}},
		{"duplicate tool_use id with different content", ok + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls"}}]}}` + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"rm -r build"}}]}}`, []string{
			`f.jsonl:3: $.message.content[0].id: duplicate tool_use id "t" with different content (first at line 2)`}},
		{"duplicate tool_use id under another name", ok + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}` + "\n" +
			`{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Read","input":{}}]}}`, []string{
			`f.jsonl:3: $.message.content[0].id: duplicate tool_use id "t" with different content (first at line 2)`}},
		{"unknown record type with a tool_use and no session", ok + "\n" +
			`{"type":"replayed-turn","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}`, []string{
			`f.jsonl:2: $.type: unknown record type "replayed-turn" holds tool_use blocks`}},
		{"bad timestamp and usage", ok + "\n" + `{"type":"assistant","sessionId":"s","timestamp":"yesterday","message":{"id":"m","usage":{"input_tokens":-1,"output_tokens":"2"},"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}`, []string{
			`f.jsonl:2: $.timestamp: invalid timestamp "yesterday": expected RFC 3339`,
			"f.jsonl:2: $.message.usage.input_tokens: expected non-negative integer, got -1",
			"f.jsonl:2: $.message.usage.output_tokens: expected integer, got string"}},
		{"tool_result without id, is_error a string", ok + "\n" + `{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","is_error":"yes"}]}}`, []string{
			"f.jsonl:2: $.message.content[0].tool_use_id: missing required field",
			"f.jsonl:2: $.message.content[0].is_error: expected boolean, got string"}},
		{"block not an object", ok + "\n" + `{"type":"user","sessionId":"s","message":{"content":["text"]}}`, []string{
			"f.jsonl:2: $.message.content[0]: expected object, got string"}},
		{"unknown record with tool calls", ok + "\n" + `{"type":"assistant_v2","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}`, []string{
			`f.jsonl:2: $.type: unknown record type "assistant_v2" holds tool_use blocks`}},
		{"type not a string", `{"type":5,"sessionId":"s"}`, []string{
			"f.jsonl:1: $.type: expected string, got number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := parseLines(t, tt.in)
			_, _, err := Claude{}.DecodeSessions(recs, "f.jsonl", normalize.Default())
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClaudeQuietRecords: bookkeeping and unknown records without tool
// calls are no problem and no action.
func TestClaudeQuietRecords(t *testing.T) {
	in := `{"type":"file-history-snapshot","messageId":"m","snapshot":{}}
{"type":"queue-operation","operation":"enqueue","sessionId":"s","timestamp":"2025-10-14T09:00:00Z","content":"x"}
{"type":"user","sessionId":"s","message":{"role":"user","content":"go"}}
{"type":"progress","sessionId":"s","data":{"type":"hook_progress"}}
{"type":"brand-new-kind","sessionId":"s","message":{"content":[{"type":"text","text":"hi"}]}}
{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"mcp__github__create_issue","input":{"title":"x"}}]}}
{"type":"summary","summary":"Elsewhere","leafUuid":"not-here"}`
	var rec recorder
	traces, _, err := decodeClaude(parseLines(t, in), "f.jsonl", rec.actions)
	if err != nil || len(traces) != 1 || len(rec.calls) != 1 {
		t.Fatalf("decodeClaude = %d traces, %d calls, %v", len(traces), len(rec.calls), err)
	}
	if _, ok := traces[0].Metadata["summary"]; ok {
		t.Errorf("a summary of another conversation was kept")
	}
	if rec.calls[0].Metadata["no_result"] != true {
		t.Errorf("metadata = %v, want no_result", rec.calls[0].Metadata)
	}
}

// TestClaudeCallCwd: a call is given the directory the session started
// in, its project, even after the shell moved to a subdirectory, so that
// a file of the project is named relative to the project.
func TestClaudeCallCwd(t *testing.T) {
	in := `{"type":"user","sessionId":"s","cwd":"/home/dev/app","message":{"role":"user","content":"go"}}
{"type":"assistant","sessionId":"s","cwd":"/home/dev/app/sub","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"/home/dev/app/NOTES.md","content":"x"}}]}}`
	var rec recorder
	traces, _, err := decodeClaude(parseLines(t, in), "f.jsonl", rec.actions)
	if err != nil || len(traces) != 1 || len(rec.calls) != 1 {
		t.Fatalf("decodeClaude = %d traces, %d calls, %v", len(traces), len(rec.calls), err)
	}
	if got := rec.calls[0].Cwd; got != "/home/dev/app" {
		t.Errorf("call cwd = %q, want the session's /home/dev/app", got)
	}
	if a := traces[0].Actions[0]; a.Parameters["path"] != "NOTES.md" {
		t.Errorf("Write of the project's NOTES.md has path %v, want NOTES.md", a.Parameters["path"])
	}
}

func parseLines(t testing.TB, in string) []Record {
	t.Helper()
	var recs []Record
	for i, line := range strings.Split(in, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		v, err := trace.ParseJSON([]byte(line), "f.jsonl", i+1)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, Record{Line: i + 1, Doc: v.(map[string]any), Raw: []byte(line)})
	}
	return recs
}

// fuzzSessions runs a session decoder on arbitrary files: it may report
// problems, never panic, and every problem names its line.
func fuzzSessions(f *testing.F, glob string, a SessionAdapter) {
	paths, _ := filepath.Glob(glob)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []Record
		for i, line := range strings.Split(string(data), "\n") {
			v, err := trace.ParseJSON([]byte(line), "f.jsonl", i+1)
			if doc, ok := v.(map[string]any); ok && err == nil {
				recs = append(recs, Record{Line: i + 1, Doc: doc, Raw: []byte(line)})
			}
		}
		traces, skipped, err := a.DecodeSessions(recs, "f.jsonl", normalize.Default())
		if err != nil {
			list, ok := err.(trace.ErrorList)
			if !ok || len(list) == 0 {
				t.Fatalf("error %T %v, want a trace.ErrorList", err, err)
			}
			for _, e := range list {
				if e.Line == 0 || e.File != "f.jsonl" {
					t.Errorf("error without its line: %v", e)
				}
			}
		}
		for _, tr := range traces {
			if tr.ID == "" || len(tr.Actions) == 0 {
				t.Errorf("trace %q with %d actions", tr.ID, len(tr.Actions))
			}
		}
		for _, s := range skipped {
			if s.Reason != ReasonNoToolCalls {
				t.Errorf("skipped %+v", s)
			}
		}
	})
}

func FuzzClaude(f *testing.F) { fuzzSessions(f, "testdata/agents/claude/*/*.jsonl", Claude{}) }

// TestClaudePrompts: every prompt the person typed is logged with its
// time, in order; what Claude Code, the IDE or a background task put in
// the user's turn (a task notification, an opened file, the summary that
// continues a compacted session) is neither a prompt nor the goal.
func TestClaudePrompts(t *testing.T) {
	in := `{"type":"user","sessionId":"s","timestamp":"2026-01-02T10:00:00Z","message":{"role":"user","content":"This session is being continued from a previous conversation that ran out of context."}}
{"type":"user","sessionId":"s","timestamp":"2026-01-02T10:00:01Z","message":{"role":"user","content":[{"type":"text","text":"<ide_opened_file>The user opened main.go</ide_opened_file>"}]}}
{"type":"user","sessionId":"s","timestamp":"2026-01-02T10:00:02Z","message":{"role":"user","content":"fix the flaky test"}}
{"type":"assistant","sessionId":"s","timestamp":"2026-01-02T10:00:03Z","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"go test ./..."}}]}}
{"type":"user","sessionId":"s","timestamp":"2026-01-02T10:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}
{"type":"user","sessionId":"s","timestamp":"2026-01-02T10:00:05Z","message":{"role":"user","content":"<task-notification><task-id>x</task-id></task-notification>"}}
{"type":"user","sessionId":"s","timestamp":"2026-01-02T10:00:06Z","message":{"role":"user","content":[{"type":"text","text":"now commit and push"}]}}`
	var rec recorder
	traces, _, err := decodeClaude(parseLines(t, in), "f.jsonl", rec.actions)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decodeClaude = %d traces, %v", len(traces), err)
	}
	md := traces[0].Metadata
	if md["goal"] != "fix the flaky test" {
		t.Errorf("goal = %q, want the first prompt the person typed", md["goal"])
	}
	want := []any{
		map[string]any{"timestamp": "2026-01-02T10:00:02Z", "text": "fix the flaky test"},
		map[string]any{"timestamp": "2026-01-02T10:00:06Z", "text": "now commit and push"},
	}
	if diff := cmp.Diff(want, md[trace.MetaPrompts]); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
}
