package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPlanRunModels runs a plan whose model kinds (read_fact, agent_loop,
// workflow_map) are answered by a local OpenAI-compatible server, with a
// passing verify, a join and a compact: every kind runs as what it is,
// and the agent loop stops at its done sentinel.
func TestPlanRunModels(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		n := calls.Add(1)
		reply := "fact"
		if n >= 3 { // the loop's second turn
			reply = "all DONE"
		}
		json.NewEncoder(w).Encode(map[string]any{
			"model":   "fake",
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": reply}}},
			"usage":   map[string]any{"prompt_tokens": 3, "completion_tokens": 2},
		})
	}))
	defer srv.Close()

	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("crystallize.toml", `[grants]
capabilities = ["plan.verify"]

[models.default]
provider = "openai"
base_url = "`+srv.URL+`"
model = "fake"
`)
	write("plan.json", `{"schema_version": "1", "objective": "o", "entry": "facts",
 "nodes": {
  "facts": {"kind": "read_fact", "purpose": "read", "prompt": "List facts", "tools": ["read"]},
  "work": {"kind": "agent_loop", "purpose": "work", "prompt": "Work", "tools": ["read"],
           "agent_loop": {"max_iterations": 5, "done_sentinel": "DONE"}},
  "each": {"kind": "workflow_map", "purpose": "each", "prompt": "Do", "map": {"items": ["a", "b"]}},
  "all": {"kind": "join", "purpose": "all"},
  "squeeze": {"kind": "compact", "purpose": "c", "compact": {"threshold_tokens": 100, "preserve_recent": 2}},
  "gate": {"kind": "verify", "purpose": "v", "verify": {"command": "echo ok", "expect_status": 0, "expect_text": "ok"}}},
 "edges": [{"from": "facts", "to": "work"}, {"from": "facts", "to": "each"},
           {"from": "work", "to": "all"}, {"from": "each", "to": "all"},
           {"from": "all", "to": "squeeze"}, {"from": "squeeze", "to": "gate"}],
 "capabilities": {"tools": ["read"]}}`)

	code, stdout, stderr := runCLI(t, "plan", "run", filepath.Join(dir, "plan.json"),
		"--config", filepath.Join(dir, "crystallize.toml"), "--state-dir", filepath.Join(dir, "state"), "--json")
	if code != 0 {
		t.Fatalf("plan run = exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var res struct {
		Status     string `json:"status"`
		ModelCalls int    `json:"model_calls"`
		ToolCalls  int    `json:"tool_calls"`
		Output     struct {
			Branches map[string]string `json:"branches"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("plan run --json: %v\n%s", err, stdout)
	}
	// facts 1 + work 2 (stops at DONE) + each 2.
	if res.Status != "completed" || res.ModelCalls != 5 || res.ToolCalls != 1 {
		t.Errorf("plan run = status %s, %d model calls, %d tool calls; want completed, 5, 1\n%s", res.Status, res.ModelCalls, res.ToolCalls, stdout)
	}
	if got := res.Output.Branches["gate"]; got != "pass" {
		t.Errorf("verify branch = %q, want pass", got)
	}
	if !strings.Contains(stderr, "compact squeeze:") {
		t.Errorf("stderr has no compact log line:\n%s", stderr)
	}
}
