package source

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// testdata/wild/home holds an agent user's home directories as real
// agents leave them, with invented content: a ~/.claude with settings,
// prompt history, todos and caches beside the project logs, a session
// log that starts with bookkeeping records and writes records twice, a
// compaction and a side question that replay it and a Task worker that
// does its own calls; a ~/.codex with its configuration and history
// beside a rollout with a web search, a rollout forked from it and an
// older copy of it in a backup directory; and a ~/.gemini whose project
// directory holds the prompts typed (logs.json), an early snapshot of a
// chat whose whole file is in another project directory, the chat the
// session went on in once the user cleared the first, and an empty chat.
const wildHome = "testdata/wild/home"

const (
	wildClaude = "5f0c1e2d-0000-4a00-8000-00000000a11c"
	wildParent = "019b0000-0000-7000-8000-00000000c0de"
	wildFork   = "019b0000-0000-7000-8000-00000000f0c5"
	wildGemini = "6e0c5a11-0000-4000-8000-00000000ce11"
	// wildGeminiDir is the project directory of ~/.gemini/tmp that
	// holds the snapshot, the second chat and the empty one.
	wildGeminiDir = ".gemini/tmp/7e3a91c0d2b4f6a8c0e2d4f6a8b0c2e4d6f8a0b2c4e6d8f0a2b4c6e8d0f2a4b6"
)

// actionIDs returns each trace's id and the ids of its actions.
func actionIDs(traces []*trace.Trace) map[string][]string {
	out := map[string][]string{}
	for _, t := range traces {
		ids := []string{}
		for _, a := range t.Actions {
			ids = append(ids, a.ID)
		}
		out[t.ID] = ids
	}
	return out
}

// notesOf returns the notes of res with the given code, as "path:line
// detail" relative to dir.
func notesOf(res *Result, dir, code string) []string {
	var out []string
	for _, n := range res.Notes {
		if n.Code == code {
			rel, _ := filepath.Rel(dir, n.Path)
			out = append(out, trace.Origin{Path: filepath.ToSlash(rel), Line: n.Line}.String()+" "+n.Detail)
		}
	}
	return out
}

// TestLoadAgentHomes loads the two homes as "--from ~" would: every
// session is read, each call once, and everything passed over is noted.
func TestLoadAgentHomes(t *testing.T) {
	res, err := Load(context.Background(), wildHome, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		wildClaude:                   {"toolu_wild_make", "toolu_wild_test", "toolu_wild_lint"},
		wildClaude + ".agent-a7b8c9": {"toolu_wild_grep", "toolu_wild_read"},
		wildParent:                   {"web_search_call@" + wildParent + ":3", "call_wild_grep"},
		wildFork:                     {"call_wild_make"},
		wildGemini:                   {"run_shell_command-wild-1", "read_file-wild-2"},
		wildGemini + ".part-2":       {"run_shell_command-wild-3"},
	}
	if diff := cmp.Diff(want, actionIDs(res.Traces)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if len(res.Skipped) != 0 {
		t.Errorf("skipped = %v", res.Skipped)
	}
	// Files of the homes that are not session logs are named, each
	// once; config.toml is not JSON and not looked at.
	wantNot := []string{
		".claude/history.jsonl Claude Code", ".claude/settings.json Claude Code",
		".claude/statsig/evaluations.json Claude Code", ".claude/todos/aaaa-agent-aaaa.json Claude Code",
		".codex/auth.json Codex", ".codex/history.jsonl Codex", ".codex/version.json Codex",
		".gemini/settings.json Gemini CLI", wildGeminiDir + "/logs.json Gemini CLI",
	}
	if diff := cmp.Diff(wantNot, notesOf(res, wildHome, NoteNotSessionLog)); diff != "" {
		t.Errorf("files that are not session logs (-want +got):\n%s", diff)
	}
	for _, n := range res.Notes {
		if n.Code == NoteNotSessionLog && !strings.HasPrefix(n.Message, "not a session log: ") {
			t.Errorf("note %q does not say it is not a session log", n.Message)
		}
	}
}

// TestLoadHomeRootsOnly: a directory with a "projects" subdirectory that
// is not named like a home and holds nothing else a home holds is a
// project, and every file in it is read.
func TestLoadHomeRootsOnly(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"projects/a.json": `{"id": "a", "actions": [{"kind": "tool_call", "name": "x"}]}`,
		"notes.json":      `{"id": "b", "actions": [{"kind": "tool_call", "name": "y"}]}`,
	})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Traces) != 2 || len(res.Notes) != 0 {
		t.Errorf("Load = %d traces, notes %v; want 2 traces, no note", len(res.Traces), res.Notes)
	}
}

// TestLoadBookkeepingFirst: a Claude Code log whose first records are of
// the bookkeeping types the current version starts a log with is a
// session log, and a record of a type no version is known to write is
// noted by type, not refused.
func TestLoadBookkeepingFirst(t *testing.T) {
	dir := filepath.Join(wildHome, ".claude/projects/-home-dev-app")
	res, err := Load(context.Background(), filepath.Join(dir, wildClaude+".jsonl"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{wildClaude}, traceIDs(res)); diff != "" {
		t.Errorf("traces (-want +got):\n%s", diff)
	}
	wantUnknown := []string{wildClaude + ".jsonl:6 mystery-record", wildClaude + ".jsonl:18 mystery-record"}
	if diff := cmp.Diff(wantUnknown, notesOf(res, dir, NoteUnknownRecord)); diff != "" {
		t.Errorf("unknown records (-want +got):\n%s", diff)
	}
}

// TestDetectLines: a file is told by any of its first records, and a
// document of the trace format among them decides it is no session log.
func TestDetectLines(t *testing.T) {
	user := `{"type":"user","sessionId":"s","message":{"role":"user","content":"go"}}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"session record first", []string{user}, "claude-code"},
		{"after bookkeeping of unknown types", []string{`{"type":"new-kind","sessionId":"s"}`, `not json`, `[1]`, user}, "claude-code"},
		{"bookkeeping alone", []string{`{"type":"permission-mode","permissionMode":"default","sessionId":"s"}`}, "claude-code"},
		{"codex envelope", []string{`{"timestamp":"2026-01-02T10:00:00Z","type":"session_meta","payload":{"id":"x"}}`}, "codex"},
		{"trace line first", []string{`{"id":"t","actions":[]}`, user}, ""},
		{"past the first records", append(slicesRepeat(`{"type":"new-kind"}`, detectRecords), user), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := 0
			var p trace.Parser
			a := detectLines(&p, "f.jsonl", func() ([]byte, int, bool) {
				if i == len(tt.lines) {
					return nil, 0, false
				}
				i++
				return []byte(tt.lines[i-1]), i, true
			})
			got := ""
			if a != nil {
				got = a.Name()
			}
			if got != tt.want {
				t.Errorf("detectLines = %q, want %q", got, tt.want)
			}
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestClaudeRepeatedRecords: a record written twice (one uuid) and a
// tool_use written again in a record of its own are one call each, and
// their results pair with it (no unpaired result).
func TestClaudeRepeatedRecords(t *testing.T) {
	path := filepath.Join(wildHome, ".claude/projects/-home-dev-app", wildClaude+".jsonl")
	var r recorder
	traces, _, err := decodeClaude(readRecords(t, path), "s.jsonl", r.actions)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range r.calls {
		ids = append(ids, c.ID)
	}
	if diff := cmp.Diff([]string{"toolu_wild_make", "toolu_wild_test", "toolu_wild_lint"}, ids); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if n, ok := traces[0].Metadata["unpaired_tool_results"]; ok {
		t.Errorf("unpaired_tool_results = %v, want none", n)
	}
	if got := traces[0].Usage.ModelCalls; got != 3 {
		t.Errorf("model calls = %d, want 3 (a repeated record is one response)", got)
	}
}

// TestClaudeRepeatedUUID: a record written twice is one event, also
// when its message carries no id to tell its model call by.
func TestClaudeRepeatedUUID(t *testing.T) {
	rec := `{"type":"assistant","sessionId":"s","uuid":"u1","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}],"usage":{"input_tokens":7,"output_tokens":3}}}`
	var recs []Record
	for i := range 2 {
		v, err := trace.ParseJSON([]byte(rec), "s.jsonl", i+1)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, Record{Line: i + 1, Doc: v.(map[string]any), Raw: []byte(rec)})
	}
	traces, _, err := decodeClaude(recs, "s.jsonl", normalize.Default().Actions)
	if err != nil {
		t.Fatal(err)
	}
	if u := traces[0].Usage; u.ModelCalls != 1 || u.InputTokens != 7 {
		t.Errorf("usage = %d model calls, %d input tokens; want 1, 7", u.ModelCalls, u.InputTokens)
	}
}

// TestCodexWebSearch: a web search without call_id or id, as most Codex
// versions write it, is an observation, not a refused rollout.
func TestCodexWebSearch(t *testing.T) {
	path := filepath.Join(wildHome, ".codex/sessions/2026/01/02/rollout-2026-01-02T10-00-00-"+wildParent+".jsonl")
	traces, _, err := decodeCodex(readRecords(t, path), "r.jsonl", normalize.Default().Actions)
	if err != nil {
		t.Fatal(err)
	}
	a := traces[0].Actions[0]
	if a.Kind != trace.KindObservation || a.Name != "web_search" {
		t.Errorf("first action = %s %s, want an observation web_search", a.Kind, a.Name)
	}
}

// TestCodexFork: a forked rollout, which repeats its parent's
// session_meta, is one session, its own, and says which it was forked
// from; read alone it keeps the calls it inherited.
func TestCodexFork(t *testing.T) {
	path := filepath.Join(wildHome, ".codex/sessions/2026/01/02/rollout-2026-01-02T11-00-00-"+wildFork+".jsonl")
	traces, _, err := decodeCodex(readRecords(t, path), "r.jsonl", normalize.Default().Actions)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || traces[0].ID != wildFork || traces[0].Metadata["forked_from"] != wildParent {
		t.Fatalf("traces = %v, want one, %s forked from %s", traceList(traces), wildFork, wildParent)
	}
	if n := len(traces[0].Actions); n != 3 {
		t.Errorf("actions = %d, want 3 (2 inherited, 1 its own)", n)
	}
}

func traceList(ts []*trace.Trace) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

// TestLoadCopies: the compaction and the side question replay their
// session's calls and are dropped as its copies, the fork keeps only
// the calls it made, an older copy of a rollout kept in a backup
// directory of the home (it was cut short: it has the session's id, not
// its bytes) is dropped, and the Task worker, whose calls are its own,
// stays a trace. Each copy is a note naming the session it repeats.
func TestLoadCopies(t *testing.T) {
	res, err := Load(context.Background(), wildHome, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		".claude/projects/-home-dev-app/" + wildClaude + "/subagents/agent-acompact-1a2b3c.jsonl:1 " + wildClaude,
		".claude/projects/-home-dev-app/" + wildClaude + "/subagents/agent-aside_question-4d5e6f.jsonl:1 " + wildClaude,
		".codex/backup/sessions/2026/01/02/rollout-2026-01-02T10-00-00-" + wildParent + ".jsonl:1 " + wildParent,
		wildGeminiDir + "/chats/session-2026-01-03T09-00-6e0c5a11.json " + wildGemini,
	}
	if diff := cmp.Diff(want, notesOf(res, wildHome, NoteCopy)); diff != "" {
		t.Errorf("copies (-want +got):\n%s", diff)
	}
	wantRepeats := []string{".codex/sessions/2026/01/02/rollout-2026-01-02T11-00-00-" + wildFork + ".jsonl:1 " + wildParent}
	if diff := cmp.Diff(wantRepeats, notesOf(res, wildHome, NoteRepeats)); diff != "" {
		t.Errorf("sessions that repeat calls (-want +got):\n%s", diff)
	}
	seen := map[string]string{}
	for _, tr := range res.Traces {
		for _, a := range tr.Actions {
			if first, dup := seen[a.ID]; dup {
				t.Errorf("action %s counted in %s and %s", a.ID, first, tr.ID)
			}
			seen[a.ID] = tr.ID
		}
	}
}

// TestLoadSessionInvalidLine: a line of a session log that is not JSON
// is passed over and listed in Skipped, without SkipInvalid, and the
// rest of its file is read.
func TestLoadSessionInvalidLine(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"s.jsonl": `{"type":"user","sessionId":"s","message":{"role":"user","content":"go"}}
{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}
{"type":"assistant","sessionId":"s","mess
{"type":"assistant","sessionId":"s","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"make"}}]}}
`})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string][]string{"s": {"t1", "t2"}}, actionIDs(res.Traces)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Line != 3 || !strings.Contains(res.Skipped[0].Errors[0], "s.jsonl:3:") {
		t.Errorf("skipped = %v, want line 3", res.Skipped)
	}
}

// TestLoadNothingToRead: an empty log, and a Claude Code log of
// summaries only, are no error and are noted.
func TestLoadNothingToRead(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"empty.jsonl":   "\n\n",
		"summary.jsonl": `{"type":"summary","summary":"Fix the build","leafUuid":"u9"}` + "\n",
		"session.jsonl": `{"type":"assistant","sessionId":"s","message":{"id":"m","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]}}` + "\n",
	})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"empty.jsonl ", "summary.jsonl:1 "}
	if diff := cmp.Diff(want, notesOf(res, dir, NoteEmpty)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestCodexUnknownItems: a response item of a type Codex is not read for
// is noted by type; one named like a call is refused (TestCodexBadInput).
func TestCodexUnknownItems(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"r.jsonl": `{"timestamp":"2026-01-02T10:00:00Z","type":"session_meta","payload":{"id":"x"}}
{"timestamp":"2026-01-02T10:00:01Z","type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{}}}
{"timestamp":"2026-01-02T10:00:02Z","type":"response_item","payload":{"type":"image_generation","result":""}}
{"timestamp":"2026-01-02T10:00:03Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}
{"timestamp":"2026-01-02T10:00:04Z","type":"world_state","payload":{}}
`})
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"r.jsonl:3 response_item image_generation", "r.jsonl:5 world_state"}
	if diff := cmp.Diff(want, notesOf(res, dir, NoteUnknownRecord)); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// TestLoadGeminiHome loads a ~/.gemini as "--from ~/.gemini" would: the
// prompt log beside the chats (a JSON array) and the settings are not
// session logs, the empty chat is noted, the early snapshot of a chat is
// dropped as a copy of the whole one, which is kept wherever the walk
// meets it first, and the chat the session went on in after a clear, which
// shares no call with the first, is a part of the session of its own.
func TestLoadGeminiHome(t *testing.T) {
	dir := filepath.Join(wildHome, ".gemini")
	res, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		wildGemini:             {"run_shell_command-wild-1", "read_file-wild-2"},
		wildGemini + ".part-2": {"run_shell_command-wild-3"},
	}
	if diff := cmp.Diff(want, actionIDs(res.Traces)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	hashDir := strings.TrimPrefix(wildGeminiDir, ".gemini/")
	notes := map[string][]string{
		NoteNotSessionLog: {"settings.json Gemini CLI", hashDir + "/logs.json Gemini CLI"},
		NoteEmpty:         {hashDir + "/chats/session-2026-01-03T09-20-6e0c5a11.json "},
		NoteCopy:          {hashDir + "/chats/session-2026-01-03T09-00-6e0c5a11.json " + wildGemini},
	}
	for code, want := range notes {
		if diff := cmp.Diff(want, notesOf(res, dir, code)); diff != "" {
			t.Errorf("%s notes (-want +got):\n%s", code, diff)
		}
	}
	for _, n := range res.Notes {
		if n.Code == NoteCopy && !strings.Contains(n.Message, filepath.Join(dir, "tmp/wild-app/chats/session-2026-01-03T09-00-6e0c5a11.json")) {
			t.Errorf("copy note %q does not name the chat kept", n.Message)
		}
	}
	for _, tr := range res.Traces {
		if tr.ID == wildGemini+".part-2" {
			if got := tr.Metadata["parent_session_id"]; got != wildGemini {
				t.Errorf("part's parent_session_id = %v, want %s", got, wildGemini)
			}
			if got := tr.Metadata["session_id"]; got != wildGemini {
				t.Errorf("part's session_id = %v, want %s", got, wildGemini)
			}
		}
	}
}

// TestLoadEmptyJSONOutsideHome: an empty *.json file outside an agent's
// home is a broken document, not a file an agent left behind.
func TestLoadEmptyJSONOutsideHome(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"chats/session-a.json": ""})
	_, err := Load(context.Background(), dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "empty document") {
		t.Errorf("Load = %v, want an error about the empty document", err)
	}
}

// TestLoadGeminiSessionFiles: of two chat files of one session id, one
// that repeats the start of the other and goes on keeps its own calls
// and is a part of the session; two that give one call id different
// calls are an error naming both files.
func TestLoadGeminiSessionFiles(t *testing.T) {
	chat := func(start string, calls ...string) string {
		var msgs []string
		for i, c := range calls {
			id, cmd, _ := strings.Cut(c, "=")
			msgs = append(msgs, fmt.Sprintf(`{"id": "m%d", "timestamp": "%s", "type": "gemini", "toolCalls": [{"id": %q, "name": "run_shell_command", "args": {"command": %q}, "status": "success", "timestamp": "%s"}]}`, i, start, id, cmd, start))
		}
		return fmt.Sprintf(`{"sessionId": "s1", "projectHash": "p", "startTime": %q, "lastUpdated": %q, "messages": [%s]}`, start, start, strings.Join(msgs, ", "))
	}
	const home = ".gemini/tmp/p/chats/"
	t.Run("repeats and goes on", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			".gemini/settings.json":    "{}",
			home + "session-a-s1.json": chat("2026-01-03T09:00:00Z", "c1=make", "c2=make test"),
			home + "session-b-s1.json": chat("2026-01-03T10:00:00Z", "c1=make", "c3=make lint"),
		})
		res, err := Load(context.Background(), dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{"s1": {"c1", "c2"}, "s1.part-2": {"c3"}}
		if diff := cmp.Diff(want, actionIDs(res.Traces)); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{home + "session-b-s1.json s1"}, notesOf(res, dir, NoteRepeats)); diff != "" {
			t.Errorf("repeats notes (-want +got):\n%s", diff)
		}
	})
	t.Run("conflicting calls", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			".gemini/settings.json":    "{}",
			home + "session-a-s1.json": chat("2026-01-03T09:00:00Z", "c1=make"),
			home + "session-b-s1.json": chat("2026-01-03T10:00:00Z", "c1=make clean"),
		})
		_, err := Load(context.Background(), dir, Options{})
		if err == nil {
			t.Fatal("Load succeeded, want a duplicate trace id")
		}
		for _, want := range []string{"duplicate trace id", "session-a-s1.json", "session-b-s1.json"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
	})
}

// TestLoadGeminiTmp: ~/.gemini/tmp, one project's directory in it, or
// its chats/ are walked like ~/.gemini: the logs.json beside a project's
// chats (the prompts the user typed, a JSON array) is passed over as not
// a session log, and an empty chat is noted, neither refused as a broken
// trace.
func TestLoadGeminiTmp(t *testing.T) {
	project := strings.TrimPrefix(wildGeminiDir, ".gemini/")
	res, err := Load(context.Background(), filepath.Join(wildHome, ".gemini", project, "chats"), Options{})
	if err != nil {
		t.Fatalf("chats: %v", err)
	}
	if len(res.Traces) == 0 || len(notesOf(res, "", NoteEmpty)) != 1 {
		t.Errorf("chats: %d traces, empty notes %v; want traces and one empty chat noted", len(res.Traces), notesOf(res, "", NoteEmpty))
	}
	for _, sub := range []string{"tmp", project} {
		dir := filepath.Join(wildHome, ".gemini", sub)
		res, err := Load(context.Background(), dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if len(res.Traces) == 0 {
			t.Errorf("%s: no trace read", sub)
		}
		var notes []string
		for _, n := range res.Notes {
			if n.Code == NoteNotSessionLog {
				notes = append(notes, filepath.Base(n.Path)+" "+n.Detail)
			}
		}
		if diff := cmp.Diff([]string{"logs.json Gemini CLI"}, notes); diff != "" {
			t.Errorf("%s: not-a-session-log notes (-want +got):\n%s", sub, diff)
		}
	}
}
