package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFiles writes invented session logs under a temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// The shapes below are those of real logs, with invented content: a
// Claude Code file whose first record is not a message, a resumed session
// that records the same tool call again under a new uuid, a subagent's
// own log, a Codex rollout with an item that has no call_id, the older
// Codex format without an envelope, a Gemini CLI chat, and files that
// are no session at all.
var shapeFiles = map[string]string{
	"claude/-home-dev-app/s1.jsonl": lines(
		`{"type":"permission-mode","permissionMode":"default","sessionId":"s1"}`,
		`{"type":"user","sessionId":"s1","parentUuid":null,"uuid":"u1","message":{"role":"user","content":"ship it"}}`,
		`{"type":"assistant","sessionId":"s1","parentUuid":"u1","uuid":"a1","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git add -A && git commit -m 'x'"}}]}}`,
		`{"type":"assistant","sessionId":"s1","parentUuid":"a1","uuid":"a2","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/a"}},{"type":"tool_use","id":"t3","name":"Edit","input":{"file_path":"/a"}}]}}`,
		`not json at all`,
		// The resumed session copies t1 again, with a new uuid.
		`{"type":"assistant","sessionId":"s1","parentUuid":"a2","uuid":"a9","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"git add -A && git commit -m 'x'"}}]}}`,
		`{"type":"assistant","sessionId":"s1","parentUuid":"a9","uuid":"a3","message":{"role":"assistant","content":[{"type":"tool_use","id":"t4","name":"Bash","input":{"command":"git push"}}]}}`,
	),
	"claude/-home-dev-app/s1/subagents/agent-abc.jsonl": lines(
		`{"type":"user","sessionId":"s1","isSidechain":true,"parentUuid":null,"uuid":"x1","message":{"role":"user","content":"Warmup"}}`,
		`{"type":"assistant","sessionId":"s1","isSidechain":true,"parentUuid":"x1","uuid":"x2","message":{"role":"assistant","content":[{"type":"tool_use","id":"t9","name":"Bash","input":{"command":"go test ./..."}}]}}`,
	),
	"claude/-home-dev-app/summary-only.jsonl": lines(`{"type":"summary","summary":"A title","leafUuid":"a3"}`),
	"codex/2026/01/02/rollout-2026-01-02T10-00-00-c1.jsonl": lines(
		`{"timestamp":"2026-01-02T10:00:00Z","type":"session_meta","payload":{"id":"c1","cwd":"/w"}}`,
		`{"timestamp":"2026-01-02T10:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"pytest -q\"]}","call_id":"k1"}}`,
		`{"timestamp":"2026-01-02T10:00:02Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}}`,
		`{"timestamp":"2026-01-02T10:00:03Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch","call_id":"k2"}}`,
		`{"timestamp":"2026-01-02T10:00:04Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"python -m pytest -q\"}","call_id":"k3"}}`,
	),
	"codex/old/rollout-2025-08-01-c2.jsonl": lines(
		`{"id":"c2","timestamp":"2025-08-01T10:00:00Z","instructions":null}`,
		`{"record_type":"state"}`,
		`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"git\",\"tag\",\"v1.0.0\"]}","call_id":"o1"}`,
		`{"type":"function_call","name":"shell","arguments":"{\"command\":[\"git\",\"push\",\"--tags\"]}","call_id":"o2"}`,
	),
	"gemini/tmp/p/chats/session-1.json": `{"sessionId":"g1","projectHash":"p","messages":[{"type":"gemini","toolCalls":[{"id":"r1","name":"run_shell_command","args":{"command":"gh release create v2"}}]}]}`,
	"gemini/tmp/p/logs.json":            `[{"sessionId":"g1","message":"hi"}]`,
	"gemini/tmp/p/chats/empty.json":     ``,
	"notes.json":                        `{"hello":"world"}`,
}

func TestReadDir(t *testing.T) {
	dir := writeFiles(t, shapeFiles)
	c, err := readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range c.Sessions {
		got[s.Agent+" "+s.Key] = heads(s.Events)
	}
	want := map[string][]string{
		"claude-code s1":           {"git add", "git commit +", "edit", "git push"},
		"claude-code s1.agent-abc": {"go test +"},
		"codex c1":                 {"pytest", "edit", "pytest"},
		"codex c2":                 {"git tag +", "git push"},
		"gemini g1":                {"gh release create +"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
	// A summary-only file names no session: it is listed as ignored.
	wantFiles := map[string]int{"claude-code": 2, "codex": 2, "gemini": 1}
	if diff := cmp.Diff(wantFiles, c.Files); diff != "" {
		t.Errorf("files by format (-want +got):\n%s", diff)
	}
	wantIgnored := []string{"claude/-home-dev-app/summary-only.jsonl", "gemini/tmp/p/chats/empty.json", "gemini/tmp/p/logs.json", "notes.json"}
	if diff := cmp.Diff(wantIgnored, c.Ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	wantProblems := []Problem{{"claude/-home-dev-app/s1.jsonl:5", "not a JSON object"}}
	if diff := cmp.Diff(wantProblems, c.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	det := map[string]int{}
	for _, d := range Detect(Procedures, c.Sessions) {
		det[d.Procedure] = d.Sessions
	}
	wantDet := map[string]int{"commit-push": 1, "commit-push-pr": 0, "test-fix-retest": 1, "dependency-bump": 0, "release": 2}
	if diff := cmp.Diff(wantDet, det); diff != "" {
		t.Errorf("Detect (-want +got):\n%s", diff)
	}
}

// A crystallization trace, such as crystallize import writes, is read
// from its actions' argv.
func TestReadDirTraces(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"claude-code-s1.json": `{"version":"1","id":"s1","actions":[
			{"id":"1","kind":"tool_call","name":"git add","metadata":{"argv":["git","add","{arg1}"]}},
			{"id":"2","kind":"file_mutation","name":"file.edit"},
			{"id":"3","kind":"tool_call","name":"git commit","metadata":{"argv":["git","commit","-m","{message}"]}},
			{"id":"4","kind":"tool_call","name":"git push"}]}`,
	})
	c, err := readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sessions) != 1 {
		t.Fatalf("readDir = %d sessions, want 1", len(c.Sessions))
	}
	want := []string{"git add +", "edit", "git commit +", "git push"}
	if diff := cmp.Diff(want, heads(c.Sessions[0].Events)); diff != "" {
		t.Errorf("trace events (-want +got):\n%s", diff)
	}
}
