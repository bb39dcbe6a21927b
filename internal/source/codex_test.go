package source

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const codexFeature = "testdata/agents/codex/2025/11/03/rollout-2025-11-03T09-12-44-019a4b2c-7d1e-7f30-9a8b-2c4d6e8f0a1b.jsonl"

// TestCodexSession checks the long rollout: one call per function_call and
// custom_tool_call, arguments parsed from their JSON string, outputs with
// their exit codes and durations, the goal past the preambles, and the
// tokens of each response divided over the calls it made, a repeated
// token_count counted once.
func TestCodexSession(t *testing.T) {
	var rec recorder
	traces, skipped, err := decodeCodex(readRecords(t, codexFeature), "r.jsonl", rec.actions)
	if err != nil || len(skipped) != 0 || len(traces) != 1 {
		t.Fatalf("decodeCodex = %d traces, %v skipped, %v", len(traces), skipped, err)
	}
	tr := traces[0]
	want := []string{"call_A1", "call_A2", "call_A3", "call_A4", "call_A5", "call_A6", "call_A7", "call_A8"}
	if diff := cmp.Diff(want, ids(rec.calls)); diff != "" {
		t.Errorf("call ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, callIDs(tr)); diff != "" {
		t.Errorf("action call ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"shell", "shell", "update_plan", "apply_patch", "shell", "apply_patch", "shell", "shell"}, tools(rec.calls)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	wantMeta := map[string]any{
		"agent":           "codex",
		"session_id":      "019a4b2c-7d1e-7f30-9a8b-2c4d6e8f0a1b",
		"goal":            "Add a --json flag to the report command, and make sure the tests pass.",
		"cwd":             "/home/dev/tool",
		"git_branch":      "main",
		"git_commit":      "8d2f4a1c0b9e7d6c5b4a39281706f5e4d3c2b1a0",
		"git_repository":  "git@github.com:example/tool.git",
		"agent_version":   "0.53.0",
		"originator":      "codex_cli_rs",
		"model":           "gpt-5-codex",
		"approval_policy": "on-request",
		"prompts": []any{map[string]any{"timestamp": "2025-11-03T09:12:45.211Z",
			"text": "Add a --json flag to the report command, and make sure the tests pass."}},
	}
	if diff := cmp.Diff(wantMeta, tr.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}

	commit := rec.call(t, "call_A8")
	if diff := cmp.Diff([]any{"bash", "-lc", `git add cmd/report.go cmd/testdata/report_help.golden && git commit -m "report: add --json"`}, commit.Args["command"]); diff != "" {
		t.Errorf("call_A8 command (-want +got):\n%s", diff)
	}
	failed := rec.call(t, "call_A5")
	if !failed.IsError || failed.ExitCode == nil || *failed.ExitCode != 1 || failed.DurationMS == nil || *failed.DurationMS != 10800 || !strings.HasPrefix(failed.Result.(string), "--- FAIL") {
		t.Errorf("call_A5 = %v %v %v %q, want a failure with exit code 1 in 10800 ms", failed.IsError, failed.ExitCode, failed.DurationMS, failed.Result)
	}
	patch := rec.call(t, "call_A4")
	if in, _ := patch.Args["input"].(string); !strings.HasPrefix(in, "*** Begin Patch\n*** Update File: cmd/report.go") || patch.IsError || *patch.ExitCode != 0 {
		t.Errorf("call_A4 = %v", patch)
	}
	if patch.Cwd != "/home/dev/tool" {
		t.Errorf("call_A4 cwd = %q, want the session's /home/dev/tool, which its files are named below", patch.Cwd)
	}
	if plan := rec.call(t, "call_A3"); plan.Result != "Plan updated" || plan.ExitCode != nil {
		t.Errorf("call_A3 = %q, exit %v; want the plain text output", plan.Result, plan.ExitCode)
	}

	// The first response: 8120 in (4060 of them cached), 210 out, 3844 ms
	// after the prompt.
	if diff := cmp.Diff(&trace.Cost{Model: "gpt-5-codex", ModelCalls: 1, InputTokens: 8120, OutputTokens: 210, CacheReadTokens: 4060, WallMS: 3844}, rec.calls[0].Cost); diff != "" {
		t.Errorf("call_A1 cost (-want +got):\n%s", diff)
	}
	// The second made two calls.
	if diff := cmp.Diff([]*trace.Cost{
		{Model: "gpt-5-codex", ModelCalls: 1, InputTokens: 4495, OutputTokens: 167, CacheReadTokens: 2248, WallMS: 1817},
		{Model: "gpt-5-codex", ModelCalls: 0, InputTokens: 4495, OutputTokens: 166, CacheReadTokens: 2247, WallMS: 1816},
	}, []*trace.Cost{rec.calls[1].Cost, rec.calls[2].Cost}); diff != "" {
		t.Errorf("second response (-want +got):\n%s", diff)
	}
	// Seven responses made calls; the last one answered.
	if diff := cmp.Diff(trace.Cost{ModelCalls: 7, InputTokens: 81580 - 11700, OutputTokens: 1943 - 60}, costSum(rec.calls)); diff != "" {
		t.Errorf("cost of the calls (-want +got):\n%s", diff)
	}
	if u := tr.Usage; u.ModelCalls != 8 || u.InputTokens != 81580 || u.OutputTokens != 1943 {
		t.Errorf("usage = %+v, want 8 model calls, 81580 in, 1943 out", u)
	}
}

// TestCodexLocalShell reads local_shell_call items: the argv is the command.
func TestCodexLocalShell(t *testing.T) {
	var rec recorder
	traces, _, err := decodeCodex(readRecords(t, "testdata/agents/codex/2025/11/04/rollout-2025-11-04T10-02-11-019a5077-3e2f-7a10-8c9d-0e1f2a3b4c5d.jsonl"), "r.jsonl", rec.actions)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decodeCodex = %d traces, %v", len(traces), err)
	}
	if diff := cmp.Diff([]string{"local_shell_call", "local_shell_call"}, tools(rec.calls)); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"command": []any{"git", "checkout", "-b", "fix/212-report-totals"}, "workdir": "/home/dev/tool"}, rec.calls[1].Args); diff != "" {
		t.Errorf("call_L2 args (-want +got):\n%s", diff)
	}
	if g := traces[0].Metadata["goal"]; g != "Start a branch for issue 212." {
		t.Errorf("goal = %v", g)
	}
	if c := rec.calls[1]; c.ExitCode == nil || *c.ExitCode != 0 || c.Cost.InputTokens != 5300 {
		t.Errorf("call_L2 = %+v", c)
	}
}

// TestCodexOutputs reads the forms an output takes: JSON with metadata,
// the plain-text headers of shell_command and exec_command, content items,
// and {content, success}; and a local_shell_call without a call_id.
func TestCodexOutputs(t *testing.T) {
	const meta = `{"timestamp":"2025-11-03T09:00:00Z","type":"session_meta","payload":{"id":"s"}}`
	call := func(id string) string {
		return `{"type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"make\"}","call_id":"` + id + `"}}`
	}
	out := func(id, output string) string {
		return `{"type":"response_item","payload":{"type":"function_call_output","call_id":"` + id + `","output":` + output + `}}`
	}
	in := strings.Join([]string{meta,
		call("a"), out("a", `"Exit code: 2\nWall time: 0.4 seconds\nOutput:\nmake: *** [all] Error 2\n"`),
		call("b"), out("b", `"Chunk ID: 1f\nWall time: 1.0 seconds\nProcess exited with code 0\nOutput:\nExit code: 9\n"`),
		call("c"), out("c", `[{"type":"input_text","text":"created"},{"type":"input_text","text":"#58"}]`),
		call("d"), out("d", `[{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]`),
		call("e"), out("e", `{"content":"denied","success":false}`),
		`{"type":"response_item","payload":{"type":"local_shell_call","status":"completed","action":{"type":"exec","command":["ls"]}}}`,
	}, "\n")
	var rec recorder
	traces, _, err := decodeCodex(parseLines(t, in), "f.jsonl", rec.actions)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decodeCodex = %d traces, %v", len(traces), err)
	}
	type got struct {
		ID      string
		Exit    *int
		IsError bool
		Result  any
	}
	var all []got
	for _, c := range rec.calls {
		all = append(all, got{c.ID, c.ExitCode, c.IsError, c.Result})
	}
	want := []got{
		{"a", ptr(2), true, "Exit code: 2\nWall time: 0.4 seconds\nOutput:\nmake: *** [all] Error 2\n"},
		{"b", ptr(0), false, "Chunk ID: 1f\nWall time: 1.0 seconds\nProcess exited with code 0\nOutput:\nExit code: 9\n"},
		{"c", nil, false, "created\n#58"},
		{"d", nil, false, []any{map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}}},
		{"e", nil, true, "denied"},
		{"local_shell_call@12", nil, false, nil},
	}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestCodexOlderLayout reads a rollout from before the envelope.
func TestCodexOlderLayout(t *testing.T) {
	var rec recorder
	traces, _, err := decodeCodex(readRecords(t, "testdata/agents/codex/2025/05/20/rollout-2025-05-20T14-03-11-c0ffee00-1111-4222-8333-944455556666.jsonl"), "r.jsonl", rec.actions)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decodeCodex = %d traces, %v", len(traces), err)
	}
	tr := traces[0]
	if tr.ID != "c0ffee00-1111-4222-8333-944455556666" || tr.Metadata["goal"] != "List the Go files in cmd." || tr.Metadata["git_branch"] != "main" {
		t.Errorf("trace %s, metadata %v", tr.ID, tr.Metadata)
	}
	if diff := cmp.Diff([]string{"call_O1"}, ids(rec.calls)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if rec.calls[0].Result != "cmd/main.go\ncmd/report.go\n" {
		t.Errorf("result = %q", rec.calls[0].Result)
	}
}

// TestCodexBadInput lists the problems of malformed records at their line
// and path, every one of them.
func TestCodexBadInput(t *testing.T) {
	const meta = `{"timestamp":"2025-11-03T09:00:00Z","type":"session_meta","payload":{"id":"s"}}`
	item := func(p string) string {
		return `{"timestamp":"2025-11-03T09:00:01Z","type":"response_item","payload":` + p + `}`
	}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"no session_meta first", item(`{"type":"message","role":"user","content":[]}`), []string{
			"f.jsonl:1: $.type: response_item record before the session_meta record that starts a rollout"}},
		{"session without id", `{"type":"session_meta","payload":{}}` + "\n" + item(`{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}`), []string{
			"f.jsonl:1: $.payload.id: missing required field"}},
		{"payload not an object", meta + "\n" + `{"type":"response_item","payload":[]}`, []string{
			"f.jsonl:2: $.payload: expected object, got array"}},
		{"arguments not JSON", meta + "\n" + item(`{"type":"function_call","name":"shell","arguments":"{\"command\":","call_id":"c"}`), []string{
			"f.jsonl:2: $.payload.arguments: invalid JSON in arguments: unexpected EOF"}},
		{"arguments an array", meta + "\n" + item(`{"type":"function_call","name":"shell","arguments":"[1]","call_id":"c"}`), []string{
			"f.jsonl:2: $.payload.arguments: expected a JSON object in arguments, got array"}},
		{"call without call_id and name", meta + "\n" + item(`{"type":"function_call","arguments":"{}"}`), []string{
			"f.jsonl:2: $.payload.call_id: missing required field"}},
		{"duplicate call_id", meta + "\n" + item(`{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}`) + "\n" + item(`{"type":"custom_tool_call","name":"apply_patch","input":"x","call_id":"c"}`), []string{
			`f.jsonl:3: $.payload.call_id: duplicate call_id "c" (first at line 2)`}},
		{"local shell without command", meta + "\n" + item(`{"type":"local_shell_call","call_id":"c","action":{"type":"exec","command":[1]}}`), []string{
			"f.jsonl:2: $.payload.action.command[0]: expected string, got number"}},
		{"output of the wrong type, exit code a string", meta + "\n" + item(`{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}`) + "\n" +
			item(`{"type":"function_call_output","call_id":"c","output":"{\"output\":\"\",\"metadata\":{\"exit_code\":\"1\"}}"}`) + "\n" +
			item(`{"type":"function_call","name":"shell","arguments":"{}","call_id":"d"}`) + "\n" +
			item(`{"type":"function_call_output","call_id":"d","output":7}`), []string{
			"f.jsonl:3: $.payload.output: in its JSON: $.payload.output.metadata.exit_code: expected integer, got string",
			"f.jsonl:5: $.payload.output: expected string, array or object, got number"}},
		{"token counts", meta + "\n" + `{"timestamp":"2025-11-03T09:00:02Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1.5}}}}`, []string{
			"f.jsonl:2: $.payload.info.last_token_usage.input_tokens: expected integer, got 1.5"}},
		{"unknown tool call type", meta + "\n" + item(`{"type":"image_generation_call","id":"c"}`), []string{
			`f.jsonl:2: $.payload.type: unknown response item type "image_generation_call": a tool call this version cannot read`}},
		{"bad timestamp", `{"timestamp":"noon","type":"session_meta","payload":{"id":"s"}}`, []string{
			`f.jsonl:1: $.timestamp: invalid timestamp "noon": expected RFC 3339`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Codex{}.DecodeSessions(parseLines(t, tt.in), "f.jsonl", normalize.Default())
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

// TestDetectRecord pins which first records claim a file for a session
// format, and that the document formats are left alone.
func TestDetectRecord(t *testing.T) {
	tests := []struct {
		doc  string
		want string
	}{
		{`{"type":"user","sessionId":"s"}`, "claude-code"},
		{`{"type":"summary","summary":"x","leafUuid":"u"}`, "claude-code"},
		{`{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`, "claude-code"},
		{`{"type":"session_meta","payload":{"id":"s"}}`, "codex"},
		{`{"timestamp":"t","type":"response_item","payload":{}}`, "codex"},
		{`{"id":"s","timestamp":"t","instructions":null}`, "codex"},
		{`{"id":"t","actions":[]}`, ""},
		{`{"type":"user"}`, ""},
		{`{"type":"session_meta"}`, ""},
		{`{"id":"r","stages":[]}`, ""},
	}
	for _, tt := range tests {
		v, err := trace.ParseJSON([]byte(tt.doc), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if a := detectSession(v.(map[string]any)); a != nil {
			got = a.Name()
		}
		if got != tt.want {
			t.Errorf("detectSession(%s) = %q, want %q", tt.doc, got, tt.want)
		}
	}
}

func FuzzCodex(f *testing.F) { fuzzSessions(f, "testdata/agents/codex/*/*/*/*.jsonl", Codex{}) }

// TestCodexJSONText checks the arguments and outputs that the fast parser
// leaves to encoding/json: they read as encoding/json reads them, except
// that a duplicate key, which encoding/json would resolve by keeping the
// last member, is refused at the text's path, naming the member.
func TestCodexJSONText(t *testing.T) {
	for _, tt := range []struct {
		args string
		want map[string]any
		err  string
	}{
		{`{"cmd": ["ls"], "n": 1.50}`, map[string]any{"cmd": []any{"ls"}, "n": json.Number("1.50")}, ""},
		{` {"a": 1, "a": 2} `, nil, `f:1: $.payload.arguments: JSON text $.a: duplicate key "a"`},
		{`{"a": {"b": 1, "c": [{"b": 2, "b": 3}]}}`, nil, `f:1: $.payload.arguments: JSON text $.a.c[0].b: duplicate key "b"`},
		{`[1]`, nil, "f:1: $.payload.arguments: expected a JSON object in arguments, got array"},
		{`{"a": 1} {"b": 2}`, nil, "f:1: $.payload.arguments: invalid JSON in arguments: data after the object"},
		{`{"a": tru}`, nil, "f:1: $.payload.arguments: invalid JSON in arguments: invalid character '}' in literal true (expecting 'e')"},
		{``, nil, "f:1: $.payload.arguments: invalid JSON in arguments: EOF"},
	} {
		d := &trace.Fields{File: "f", Line: 1}
		got := codexArguments(d, map[string]any{"arguments": tt.args}, "$.payload")
		if diff := cmp.Diff(tt.want, got); diff != "" || fmt.Sprint(d.Errs) != fmt.Sprint(errList(tt.err)) {
			t.Errorf("codexArguments(%q) = %v, %v; want %v, %v (-want +got):\n%s", tt.args, got, d.Errs, tt.want, tt.err, diff)
		}
	}
	for _, tt := range []struct {
		output string
		result string
		exit   int // -1: none
	}{
		{`{"output": "ok\n", "metadata": {"exit_code": 0, "duration_seconds": 0.5}}`, "ok\n", 0},
		{`{"output": "x", "metadata": {"exit_code": 1}} }`, "x", 1},
		{`{"output": "x"} trailing`, `{"output": "x"} trailing`, -1},
		{`{not json`, `{not json`, -1},
		{`{"other": 1}`, `{"other": 1}`, -1},
	} {
		var d trace.Fields
		var c normalize.Call
		codexOutput(&d, map[string]any{"output": tt.output}, "$.payload", &c)
		exit := -1
		if c.ExitCode != nil {
			exit = *c.ExitCode
		}
		if c.Result != tt.result || exit != tt.exit || len(d.Errs) > 0 {
			t.Errorf("codexOutput(%q) = %q, exit %d, %v; want %q, exit %d", tt.output, c.Result, exit, d.Errs, tt.result, tt.exit)
		}
	}
	// A shell call's output object with a duplicate key is refused; text
	// that is not such an object is kept as written, duplicates and all.
	for _, tt := range []struct{ output, err string }{
		{` {"output": "a", "output": "b", "metadata": {"exit_code": 2}} `, `f:4: $.payload.output: JSON text $.output: duplicate key "output"`},
		{`{"output": "a", "metadata": {"exit_code": 0, "exit_code": 1}}`, `f:4: $.payload.output: JSON text $.metadata.exit_code: duplicate key "exit_code"`},
		{`{"other": 1, "other": 2}`, ``},
	} {
		d := trace.Fields{File: "f", Line: 4}
		var c normalize.Call
		codexOutput(&d, map[string]any{"output": tt.output}, "$.payload", &c)
		if got := fmt.Sprint(d.Errs); got != fmt.Sprint(errList4(tt.err)) {
			t.Errorf("codexOutput(%q): errors %s, want %q", tt.output, got, tt.err)
		}
	}
}

// errList4 is errList for a record on line 4.
func errList4(msg string) trace.ErrorList {
	if msg == "" {
		return nil
	}
	file, rest, _ := strings.Cut(msg, ":4: ")
	path, m, _ := strings.Cut(rest, ": ")
	return trace.ErrorList{{File: file, Line: 4, Path: path, Msg: m}}
}

func errList(msg string) trace.ErrorList {
	if msg == "" {
		return nil
	}
	file, rest, _ := strings.Cut(msg, ":1: ")
	path, m, _ := strings.Cut(rest, ": ")
	return trace.ErrorList{{File: file, Line: 1, Path: path, Msg: m}}
}
