package source

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const (
	geminiStream     = "testdata/agents/gemini/stream/runs.jsonl"
	geminiChatJSON   = "testdata/agents/gemini/tmp/3f9a1c7e/chats/session-2025-11-18T14-00-0a7e3c51.json"
	geminiChatJSONL  = "testdata/agents/gemini/tmp/3f9a1c7e/chats/session-2025-11-19T08-00-c4e8a2f6.jsonl"
	geminiStreamID   = "5f0c2a9e-1b7d-4c3e-9a6f-2d8e4b1c7a90"
	geminiChatJSONID = "0a7e3c51-6d2b-4f8a-9c1e-5b4d3a2f1e0d"
)

// TestGeminiDetect checks that the first record of each Gemini CLI file
// goes to its adapter and to no other, and that the look-alikes of other
// agents do not.
func TestGeminiDetect(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string
	}{
		{geminiStream, "gemini-cli"},
		{geminiChatJSON, "gemini-cli-chat"},
		{geminiChatJSONL, "gemini-cli-chat"},
	} {
		a := detectSession(otelRecords(t, tc.file)[0].Doc)
		if a == nil || a.Name() != tc.want {
			t.Errorf("detectSession(%s) = %v, want %s", tc.file, a, tc.want)
		}
	}
	for _, doc := range []map[string]any{
		// Claude Code's stream-json init.
		{"type": "system", "subtype": "init", "session_id": "s", "model": "claude"},
		{"type": "init", "subtype": "init", "session_id": "s", "model": "m"},
		{"type": "message", "role": "user", "content": "hi"},
		{"type": "tool_use", "id": "x", "name": "Bash"},
	} {
		if (Gemini{}).DetectRecord(doc) {
			t.Errorf("Gemini.DetectRecord(%v) = true", doc)
		}
	}
	for _, doc := range []map[string]any{
		{"type": "tool_use", "tool_id": "t", "tool_name": "read_file", "parameters": map[string]any{}},
		{"type": "tool_result", "tool_id": "t", "status": "success"},
	} {
		if !(Gemini{}).DetectRecord(doc) {
			t.Errorf("Gemini.DetectRecord(%v) = false", doc)
		}
	}
	if (GeminiChat{}).DetectRecord(map[string]any{"sessionId": "s", "type": "user"}) {
		t.Error("GeminiChat.DetectRecord(claude record) = true")
	}
}

// recordCalls decodes with an actions function that keeps the calls it is
// given, so that a test sees what the adapter made of the log.
func recordCalls(calls *[]normalize.Call) func(normalize.Call) []trace.Action {
	return func(c normalize.Call) []trace.Action {
		*calls = append(*calls, c)
		return normalize.Default().Actions(c)
	}
}

func TestGeminiStream(t *testing.T) {
	var calls []normalize.Call
	traces, skipped, err := decodeGeminiStream(otelRecords(t, geminiStream), geminiStream, recordCalls(&calls))
	if err != nil {
		t.Fatalf("decodeGeminiStream: %v", err)
	}
	wantSkipped := []SkippedSession{{ID: "8b3d6f21-0c4a-4e5b-b7d8-9f1e2a3c4b5d", Line: 20, Reason: ReasonNoToolCalls,
		Message: "gemini cli run 8b3d6f21-0c4a-4e5b-b7d8-9f1e2a3c4b5d has no tool call in its 4 events"}}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(traces) != 1 {
		t.Fatalf("decodeGeminiStream = %d traces, want 1", len(traces))
	}
	tr := traces[0]
	if tr.ID != geminiStreamID || tr.Origin.Line != 1 || tr.StartedAt != "2025-11-20T09:00:00.000Z" || tr.FinishedAt != "2025-11-20T09:00:30.000Z" {
		t.Errorf("trace %s at line %d, %s to %s", tr.ID, tr.Origin.Line, tr.StartedAt, tr.FinishedAt)
	}
	// The one model named in the result's stats is the model that ran,
	// not the "auto" alias of the init event.
	wantMD := map[string]any{"agent": "gemini-cli", "session_id": geminiStreamID, "model": "gemini-2.5-pro",
		"goal": "Bump the version to 1.4.0, note it in the changelog and commit",
		// Every prompt, with its time, describes the procedure that
		// follows it (see mine's describe).
		trace.MetaPrompts: []any{map[string]any{"timestamp": "2025-11-20T09:00:00.000Z", "text": "Bump the version to 1.4.0, note it in the changelog and commit"}}}
	if diff := cmp.Diff(wantMD, tr.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	wantActs := []actionSummary{
		{"read_file-1763629203000-a1", "observation", "read_file", false},
		{"replace-1763629206000-b2", "file_mutation", "fs.edit", false},
		{"write_file-1763629206000-c3", "file_mutation", "fs.write", false},
		{"run_shell_command-1763629210000-d4", "tool_call", "go test", true},
		{"run_shell_command-1763629218000-e5", "tool_call", "go test", false},
		{"run_shell_command-1763629218000-e5.2", "tool_call", "git add", false},
		{"run_shell_command-1763629218000-e5.3", "tool_call", "git commit", false},
		{"google_web_search-1763629227000-f6", "observation", "google_web_search", true},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	// Each model turn is one model call on its first tool call, with the
	// time from the previous event; the run's tokens are divided over all
	// calls and add up to the result's totals.
	type share [4]int64 // model calls, wall ms, input and output tokens
	var got []share
	var in, out int64
	for _, c := range calls {
		got = append(got, share{c.Cost.ModelCalls, c.Cost.WallMS, c.Cost.InputTokens, c.Cost.OutputTokens})
		in += c.Cost.InputTokens
		out += c.Cost.OutputTokens
	}
	want := []share{{1, 3000, 4138, 54}, {1, 3000, 4133, 50}, {0, 0, 4133, 50}, {1, 3000, 4133, 50}, {1, 4000, 4133, 50}, {1, 2000, 4133, 50}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
	if in != 24803 || out != 304 {
		t.Errorf("calls carry %d input and %d output tokens, want the run's 24803 and 304", in, out)
	}
	wantUsage := &trace.Usage{ModelCalls: 6, InputTokens: 24803, OutputTokens: 304, WallMS: 15000 + 14000}
	if diff := cmp.Diff(wantUsage, tr.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	// The shell tool's exit code is read from its output; a failed call's
	// error message is its result.
	if c := calls[3]; c.ExitCode == nil || *c.ExitCode != 1 || c.IsError {
		t.Errorf("failing go test: exit %v, error %v; want exit 1 from the output", c.ExitCode, c.IsError)
	}
	if c := calls[4]; c.ExitCode == nil || *c.ExitCode != 0 || *c.DurationMS != 7000 {
		t.Errorf("commit: exit %v, duration %v; want 0 and 7000", c.ExitCode, c.DurationMS)
	}
	if c := calls[5]; !c.IsError || c.Result != "search quota exhausted" {
		t.Errorf("failed search: error %v, result %q", c.IsError, c.Result)
	}
	if a := tr.Actions[1]; a.Parameters["new"] != "1.4.0" {
		t.Errorf("replace parameters = %v, want its old and new strings", a.Parameters)
	}
}

func TestGeminiChatJSON(t *testing.T) {
	var calls []normalize.Call
	traces, skipped, err := decodeGeminiChat(otelRecords(t, geminiChatJSON), geminiChatJSON, recordCalls(&calls))
	if err != nil || len(skipped) != 0 || len(traces) != 1 {
		t.Fatalf("decodeGeminiChat = %d traces, %v skipped, %v", len(traces), skipped, err)
	}
	tr := traces[0]
	if tr.ID != geminiChatJSONID || tr.StartedAt != "2025-11-18T14:00:05.000Z" || tr.FinishedAt != "2025-11-18T14:03:10.000Z" {
		t.Errorf("trace %s, %s to %s", tr.ID, tr.StartedAt, tr.FinishedAt)
	}
	wantActs := []actionSummary{
		{"run_shell_command-1763474409000-1", "observation", "git status", false},
		{"read_file-1763474409000-2", "observation", "read_file", false},
		{"replace-1763474490000-3", "file_mutation", "fs.edit", false},
		{"run_shell_command-1763474490000-4", "tool_call", "git commit", false},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if tr.Metadata["goal"] != "Fix the typo in the README and commit it" {
		t.Errorf("goal = %v", tr.Metadata["goal"])
	}
	wantPrompts := []any{map[string]any{"timestamp": "2025-11-18T14:00:05.000Z", "text": "Fix the typo in the README and commit it"}}
	if diff := cmp.Diff(wantPrompts, tr.Metadata[trace.MetaPrompts]); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	// Thoughts are billed as output: 61+40 over two calls, 90+10 over two.
	var got [][3]int64
	for _, c := range calls {
		got = append(got, [3]int64{c.Cost.ModelCalls, c.Cost.InputTokens, c.Cost.OutputTokens})
	}
	want := [][3]int64{{1, 2560, 51}, {0, 2560, 50}, {1, 2800, 50}, {0, 2800, 50}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("costs (-want +got):\n%s", diff)
	}
	wantUsage := &trace.Usage{ModelCalls: 3, InputTokens: 16520, OutputTokens: 213, WallMS: 4000 + 81000 + 100000}
	if diff := cmp.Diff(wantUsage, tr.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	if c := calls[3]; c.ExitCode == nil || *c.ExitCode != 0 || !strings.Contains(c.Result.(string), "Fix README typo") {
		t.Errorf("commit: exit %v, result %v", c.ExitCode, c.Result)
	}
}

// TestGeminiChatJSONL checks the rules of the append-only layout: a
// message written again replaces its first copy, a rewind drops the
// messages from its target on (and says how many calls it dropped), and
// $set updates the session.
func TestGeminiChatJSONL(t *testing.T) {
	var calls []normalize.Call
	traces, _, err := decodeGeminiChat(otelRecords(t, geminiChatJSONL), geminiChatJSONL, recordCalls(&calls))
	if err != nil || len(traces) != 1 {
		t.Fatalf("decodeGeminiChat = %d traces, %v", len(traces), err)
	}
	tr := traces[0]
	wantActs := []actionSummary{
		{"run_shell_command-1763539204000-1", "tool_call", "git checkout", false},
		{"write_file-1763539260000-3", "file_mutation", "fs.write", false},
		{"run_shell_command-1763539260000-4", "tool_call", "git commit", false},
	}
	if diff := cmp.Diff(wantActs, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if _, pending := tr.Actions[0].Metadata["no_result"]; pending || calls[0].Cost.InputTokens != 3000 {
		t.Errorf("updated message: metadata %v, cost %+v; want the finished copy", tr.Actions[0].Metadata, calls[0].Cost)
	}
	for k, want := range map[string]any{"rewound_tool_calls": 1, "summary": "Cut the 2.0 release branch", "goal": "Cut the 2.0 release branch and bump the version"} {
		if got := tr.Metadata[k]; got != want {
			t.Errorf("metadata %s = %v, want %v", k, got, want)
		}
	}
	if tr.FinishedAt != "2025-11-19T08:01:05.000Z" {
		t.Errorf("FinishedAt = %s, want the lastUpdated of the last $set", tr.FinishedAt)
	}
}

// decodeText decodes JSON Lines given as text with adapter a.
func decodeText(t *testing.T, a SessionAdapter, text string) ([]*trace.Trace, []SkippedSession, error) {
	t.Helper()
	var recs []Record
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		recs = append(recs, otelRecord(t, []byte(line), "f.jsonl", i+1))
	}
	return a.DecodeSessions(recs, "f.jsonl", normalize.Default())
}

func TestGeminiStreamErrors(t *testing.T) {
	const init = `{"type":"init","timestamp":"2025-11-20T09:00:00Z","session_id":"s1","model":"m"}`
	const use = `{"type":"tool_use","timestamp":"2025-11-20T09:00:01Z","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}`
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"before init", use + "\n" + init, []string{`f.jsonl:1: $.type: "tool_use" event before the init event that starts a stream-json run`}},
		{"no tool_id", init + "\n" + `{"type":"tool_use","timestamp":"2025-11-20T09:00:01Z","tool_name":"x","parameters":{}}`,
			[]string{`f.jsonl:2: $.tool_id: missing required field`}},
		{"duplicate", init + "\n" + use + "\n" + use, []string{`f.jsonl:3: $.tool_id: duplicate tool_id "t1" (first at line 2)`}},
		{"parameters", init + "\n" + `{"type":"tool_use","timestamp":"2025-11-20T09:00:01Z","tool_name":"x","tool_id":"t","parameters":"ls"}`,
			[]string{`f.jsonl:2: $.parameters: expected object, got string`}},
		{"status", init + "\n" + use + "\n" + `{"type":"tool_result","timestamp":"2025-11-20T09:00:02Z","tool_id":"t1","status":"ok"}`,
			[]string{`f.jsonl:3: $.status: unknown status "ok": expected "success" or "error"`}},
		{"timestamp", init + "\n" + `{"type":"tool_use","timestamp":"yesterday","tool_name":"x","tool_id":"t","parameters":{}}`,
			[]string{`f.jsonl:2: $.timestamp: invalid timestamp "yesterday": expected RFC 3339`}},
		{"unknown type", init + "\n" + `{"type":"tool_call","timestamp":"2025-11-20T09:00:01Z","tool_id":"t"}`,
			[]string{`f.jsonl:2: $.type: unknown event type "tool_call" holds a tool_id`}},
		{"stats", init + "\n" + use + "\n" + `{"type":"result","timestamp":"2025-11-20T09:00:02Z","status":"success","stats":{"input_tokens":"many"}}`,
			[]string{`f.jsonl:3: $.stats.input_tokens: expected integer, got string`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traces, _, err := decodeText(t, Gemini{}, tc.text)
			if len(traces) != 0 {
				t.Errorf("%d traces from a run with a problem", len(traces))
			}
			if diff := cmp.Diff(tc.want, errorLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGeminiChatErrors(t *testing.T) {
	const head = `{"sessionId":"s1","projectHash":"p","startTime":"2025-11-19T08:00:00Z"}`
	msg := func(calls string) string {
		return `{"id":"g","timestamp":"2025-11-19T08:00:01Z","type":"gemini","toolCalls":[` + calls + `]}`
	}
	const call = `{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"status":"success","timestamp":"2025-11-19T08:00:01Z"}`
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"no name", head + "\n" + msg(`{"id":"c1","args":{}}`), []string{`f.jsonl:2: $.toolCalls[0].name: missing required field`}},
		{"not an object", head + "\n" + msg(`"ls"`), []string{`f.jsonl:2: $.toolCalls[0]: expected object, got string`}},
		{"duplicate", head + "\n" + msg(call+","+call), []string{`f.jsonl:2: $.toolCalls[1].id: duplicate tool call id "c1" (first at line 2, $.toolCalls[0])`}},
		{"args", head + "\n" + msg(`{"id":"c1","name":"x","args":"ls"}`), []string{`f.jsonl:2: $.toolCalls[0].args: expected object, got string`}},
		{"unknown record", head + "\n" + `{"note":"x"}`, []string{`f.jsonl:2: $: record is neither a message (id), a session header (sessionId, projectHash), $set nor $rewindTo`}},
		{"set", head + "\n" + `{"$set":"x"}`, []string{`f.jsonl:2: $["$set"]: expected object, got string`}},
		{"messages", head + "\n" + `{"$set":{"messages":[1]}}`, []string{`f.jsonl:2: $["$set"].messages[0]: expected object, got number`}},
		{"type", head + "\n" + `{"id":"g","timestamp":"2025-11-19T08:00:01Z","type":3,"toolCalls":[` + call + `]}`,
			[]string{`f.jsonl:2: $.type: expected string, got number`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			traces, _, err := decodeText(t, GeminiChat{}, tc.text)
			if len(traces) != 0 {
				t.Errorf("%d traces from a chat with a problem", len(traces))
			}
			if diff := cmp.Diff(tc.want, errorLines(err)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGeminiChatFork checks that a chat written by a fork of Gemini CLI,
// which names the model's messages after itself, is read like Gemini's,
// and that a message of an unknown type that is not the model's is passed
// over.
func TestGeminiChatFork(t *testing.T) {
	const text = `{"sessionId":"s1","projectHash":"p","startTime":"2025-11-19T08:00:00Z"}
{"id":"u","timestamp":"2025-11-19T08:00:00Z","type":"user","content":"List the routes"}
{"id":"n","timestamp":"2025-11-19T08:00:00Z","type":"notice","content":"Checkpoint saved"}
{"id":"g","timestamp":"2025-11-19T08:00:03Z","type":"bob-shell","model":"premium","tokens":{"input":900,"output":30},"toolCalls":[{"id":"tool-1","name":"run_shell_command","args":{"command":"git tag v1.0.0"},"status":"success","timestamp":"2025-11-19T08:00:03Z"}]}`
	traces, _, err := decodeText(t, GeminiChat{}, text)
	if err != nil || len(traces) != 1 {
		t.Fatalf("decode = %d traces, %v", len(traces), err)
	}
	tr := traces[0]
	want := []actionSummary{{"tool-1", "tool_call", "git tag", false}}
	if diff := cmp.Diff(want, summarizeActions(tr.Actions)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	wantUsage := &trace.Usage{ModelCalls: 1, InputTokens: 900, OutputTokens: 30, WallMS: 3000}
	if diff := cmp.Diff(wantUsage, tr.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestGeminiChatSubagent checks that a subagent's chat, which Gemini CLI
// keeps in a directory named after its parent session, is marked as a
// side chain of that session.
func TestGeminiChatSubagent(t *testing.T) {
	const file = "tmp/p/chats/0a7e3c51-parent/5d1e-sub.jsonl"
	text := `{"sessionId":"5d1e-sub","projectHash":"p","startTime":"2025-11-19T08:00:00Z","kind":"subagent"}
{"id":"g","timestamp":"2025-11-19T08:00:03Z","type":"gemini","toolCalls":[{"id":"t","name":"glob","args":{"pattern":"**/*.go"},"status":"success"}]}`
	var recs []Record
	for i, line := range strings.Split(text, "\n") {
		recs = append(recs, otelRecord(t, []byte(line), file, i+1))
	}
	traces, _, err := GeminiChat{}.DecodeSessions(recs, file, normalize.Default())
	if err != nil || len(traces) != 1 {
		t.Fatalf("decode = %d traces, %v", len(traces), err)
	}
	md := traces[0].Metadata
	if md["sidechain"] != true || md["parent_session_id"] != "0a7e3c51-parent" {
		t.Errorf("metadata = %v, want sidechain of 0a7e3c51-parent", md)
	}
}

// errorLines returns the messages of a trace.ErrorList, one per problem.
func errorLines(err error) []string {
	if err == nil {
		return nil
	}
	list, ok := err.(trace.ErrorList)
	if !ok {
		return []string{"not an ErrorList: " + err.Error()}
	}
	var out []string
	for _, e := range list {
		out = append(out, e.Error())
	}
	return out
}

func FuzzGemini(f *testing.F) { fuzzSessions(f, "testdata/agents/gemini/stream/*.jsonl", Gemini{}) }

func FuzzGeminiChat(f *testing.F) {
	fuzzSessions(f, "testdata/agents/gemini/tmp/*/chats/*.jsonl", GeminiChat{})
}

func BenchmarkGemini(b *testing.B) {
	for _, tc := range []struct {
		file string
		a    SessionAdapter
	}{{geminiStream, Gemini{}}, {geminiChatJSON, GeminiChat{}}, {geminiChatJSONL, GeminiChat{}}} {
		recs := otelRecords(b, tc.file)
		rules := normalize.Default()
		b.Run(tc.a.Name()+"/"+tc.file[strings.LastIndex(tc.file, ".")+1:], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := tc.a.DecodeSessions(recs, tc.file, rules); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
