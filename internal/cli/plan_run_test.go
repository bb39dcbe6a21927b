package cli

import (
	"encoding/json"
	"fmt"
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
capabilities = ["plan.verify", "fs.read"]

[tools."read"]
builtin = "fs.read"

[models.default]
provider = "openai"
base_url = "`+srv.URL+`"
model = "fake"
`)
	// The read tool is the built-in fs.read, so the plan declares fs.read:
	// what a tool of a node's list needs is checked before the first node.
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
 "capabilities": {"tools": ["read", "fs.read"]}}`)

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

// modelServer is a local OpenAI-compatible server that answers by the
// node: every prompt in the plans below starts with "[node]", and the
// reply is chosen by node and turn (the "iteration" of the inputs).
func modelServer(t *testing.T, reply func(node string, iteration int, user string) any) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		calls.Add(1)
		user := req.Messages[len(req.Messages)-1].Content
		node := ""
		if i := strings.Index(user, "["); i >= 0 {
			if j := strings.Index(user[i:], "]"); j > 0 {
				node = user[i+1 : i+j]
			}
		}
		iteration := 0
		if i := strings.Index(user, `"iteration":`); i >= 0 {
			fmt.Sscanf(user[i+len(`"iteration":`):], "%d", &iteration)
		}
		var content string
		switch v := reply(node, iteration, user).(type) {
		case string:
			content = v
		default:
			b, _ := json.Marshal(v)
			content = string(b)
		}
		json.NewEncoder(w).Encode(map[string]any{
			"model":   "fake",
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

type planRunResult struct {
	RunID      string `json:"run_id"`
	Status     string `json:"status"`
	Error      string `json:"error"`
	ModelCalls int    `json:"model_calls"`
	ToolCalls  int    `json:"tool_calls"`
	Approvals  int    `json:"approvals"`
	Pending    *struct {
		Boundary string `json:"boundary"`
	} `json:"pending"`
	Output struct {
		Branches map[string]string `json:"branches"`
		Visits   map[string]int    `json:"visits"`
		Outputs  map[string]any    `json:"outputs"`
	} `json:"output"`
}

func decodeRun(t *testing.T, stdout string) planRunResult {
	t.Helper()
	var res planRunResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	return res
}

// TestPlanRunEveryKind runs a plan that uses all eleven kinds against a
// local model server and real command tools: a read_fact that calls its
// read tool, an agent_loop that edits a file through a tool until its
// sentinel, a sub_agent run as a configured worker preset, a
// workflow_map fanned out two at a time, a join, a compact, a
// deterministic_command, a verify that fails, takes its "fail" edge into
// a fix and loops back until it passes, and a human gate that suspends
// the run until crystallize resume approves it — without running any
// earlier step twice.
func TestPlanRunEveryKind(t *testing.T) {
	dir := t.TempDir()
	srv, calls := modelServer(t, func(node string, iteration int, user string) any {
		switch node {
		case "facts":
			if iteration == 1 {
				return map[string]any{"tool": "read", "args": map[string]any{"path": "notes.txt"}}
			}
			if !strings.Contains(user, "limiter lives in auth") {
				return "the read result never came back"
			}
			return "fact: the limiter lives in auth"
		case "work":
			if iteration == 1 {
				return map[string]any{"tool": "edit", "args": map[string]any{"text": "patched"}}
			}
			return "edited; DONE"
		case "helper":
			if !strings.Contains(user, "You review changes.") {
				return "no preset prompt"
			}
			return "review: fine"
		case "each":
			return "mapped"
		}
		return "ok " + node
	})
	writeTestFiles(t, dir, map[string]string{
		"notes.txt": "the limiter lives in auth\n",
		"crystallize.toml": `[grants]
capabilities = ["read", "edit", "mark", "plan.verify"]

[tools."read"]
command = ["cat", "{path}"]
capabilities = ["read"]

[tools."edit"]
command = ["sh", "-c", "echo \"$0\" > edited.txt", "{text}"]
capabilities = ["edit"]
side_effects = [{kind = "file_write", target = "edited.txt", capability = "edit"}]

[tools."mark"]
command = ["sh", "-c", "echo \"$0\" >> marks.txt", "{step}"]
capabilities = ["mark"]

[models.default]
provider = "openai"
base_url = "` + srv.URL + `"
model = "fake"

[workers.reviewer]
prompt = "You review changes."
`,
		"plan.json": `{"schema_version": "1", "objective": "Exercise every kind", "entry": "facts",
 "nodes": {
  "facts": {"kind": "read_fact", "purpose": "Read the notes", "prompt": "[facts] What do the notes say?", "tools": ["read"]},
  "find": {"kind": "search", "purpose": "Search", "prompt": "[find] Where?"},
  "pack": {"kind": "context_pack", "purpose": "Pack", "prompt": "[pack] Pack it"},
  "work": {"kind": "agent_loop", "purpose": "Edit", "prompt": "[work] Make the change", "tools": ["read", "edit"],
           "effects": ["writes_files"], "agent_loop": {"max_iterations": 4, "done_sentinel": "DONE"}},
  "helper": {"kind": "sub_agent", "purpose": "Review", "prompt": "[helper] Review the edit", "sub_agent": {"worker_name": "reviewer"}},
  "each": {"kind": "workflow_map", "purpose": "Per package", "prompt": "[each] Check", "map": {"items": ["a", "b", "c"], "max_concurrency": 2}},
  "sync": {"kind": "join", "purpose": "Wait"},
  "trim": {"kind": "compact", "purpose": "Trim", "compact": {"threshold_tokens": 60, "preserve_recent": 1}},
  "build": {"kind": "deterministic_command", "purpose": "Build", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=build"]}},
  "check": {"kind": "verify", "purpose": "Fixed?", "verify": {"command": "cat fixed.txt", "expect_status": 0, "expect_text": "fixed"}},
  "fix": {"kind": "deterministic_command", "purpose": "Fix", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=fix"]}},
  "review": {"kind": "human_gate", "purpose": "Ship?", "approval": {"id": "ship", "prompt": "Ship it?"}},
  "ship": {"kind": "deterministic_command", "purpose": "Ship", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=ship"]}}},
 "edges": [{"from": "facts", "to": "find"}, {"from": "find", "to": "pack"},
   {"from": "pack", "to": "work"}, {"from": "pack", "to": "helper"}, {"from": "pack", "to": "each"},
   {"from": "work", "to": "sync"}, {"from": "helper", "to": "sync"}, {"from": "each", "to": "sync"},
   {"from": "sync", "to": "trim"}, {"from": "trim", "to": "build"}, {"from": "build", "to": "check"},
   {"from": "check", "to": "fix", "branch": "fail"}, {"from": "fix", "to": "check"},
   {"from": "check", "to": "review", "branch": "pass"}, {"from": "review", "to": "ship"}],
 "capabilities": {"tools": ["read", "edit", "mark"], "side_effect_level": "writes_files"},
 "budgets": {"max_nodes": 16, "max_depth": 16, "consecutive_failures": {"max": 3, "kinds": ["verify"]}}}`,
	})
	// The fix makes the check pass: the mark tool appends "fix" to
	// marks.txt, and the verify command reads fixed.txt, which a hook
	// of the fix writes.
	cfgFile := filepath.Join(dir, "crystallize.toml")
	cfg, _ := os.ReadFile(cfgFile)
	cfg = []byte(strings.Replace(string(cfg), `command = ["sh", "-c", "echo \"$0\" >> marks.txt", "{step}"]`,
		`command = ["sh", "-c", "echo \"$0\" >> marks.txt; [ \"$0\" = fix ] && echo fixed > fixed.txt; true", "{step}"]`, 1))
	os.WriteFile(cfgFile, cfg, 0o644)

	state := filepath.Join(dir, "state")
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "plan", "run", "plan.json", "--state-dir", state, "--json")
	if code != 1 {
		t.Fatalf("plan run = exit %d, want 1 (pending)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	res := decodeRun(t, stdout)
	if res.Status != "pending_approval" || res.Pending == nil || res.Pending.Boundary != "ship" {
		t.Fatalf("plan run = %s (pending %+v), want pending_approval at ship\n%s\n%s", res.Status, res.Pending, stdout, stderr)
	}
	// facts 2 turns + find 1 + pack 1 + work 2 + helper 1 + each 3.
	if n := calls.Load(); n != 10 {
		t.Errorf("model calls = %d, want 10", n)
	}
	if got := readFileT(t, filepath.Join(dir, "edited.txt")); got != "patched\n" {
		t.Errorf("edited.txt = %q, want the agent's edit", got)
	}
	if got := readFileT(t, filepath.Join(dir, "marks.txt")); got != "build\nfix\n" {
		t.Errorf("marks.txt before approval = %q, want build, fix", got)
	}
	if !strings.Contains(stderr, "compact trim:") {
		t.Errorf("stderr has no compaction line:\n%s", stderr)
	}

	code, stdout, stderr = runCLI(t, "resume", res.RunID, "--state-dir", state, "--approve", "ship", "--json")
	if code != 0 {
		t.Fatalf("resume = exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	res = decodeRun(t, stdout)
	if res.Status != "completed" {
		t.Fatalf("resume = %s, want completed: %s", res.Status, res.Error)
	}
	if n := calls.Load(); n != 10 {
		t.Errorf("model calls after resume = %d, want still 10 (replayed from the journal)", n)
	}
	if got := readFileT(t, filepath.Join(dir, "marks.txt")); got != "build\nfix\nship\n" {
		t.Errorf("marks.txt after resume = %q, want build, fix, ship once each", got)
	}
	want := map[string]string{"check": "pass", "review": "pass", "facts": "pass", "fix": "pass"}
	for node, b := range want {
		if res.Output.Branches[node] != b {
			t.Errorf("branch of %s = %q, want %q", node, res.Output.Branches[node], b)
		}
	}
	if res.Output.Visits["check"] != 2 || res.Output.Visits["fix"] != 1 || res.Output.Visits["sync"] != 1 {
		t.Errorf("visits = %v, want check twice through the fix loop, sync once", res.Output.Visits)
	}
	if got := fmt.Sprint(res.Output.Outputs["each"]); got != "[mapped mapped mapped]" {
		t.Errorf("map output = %s", got)
	}
}

// TestPlanRunFailureBudgets: a verify that keeps failing in a loop stops
// at the consecutive_failures budget, failing the run; with pause it asks
// for approval instead. A verify failure with no "fail" edge fails the
// run.
func TestPlanRunFailureBudgets(t *testing.T) {
	loop := func(pause bool) string {
		return fmt.Sprintf(`{"schema_version": "1", "objective": "o", "entry": "check",
 "nodes": {
  "check": {"kind": "verify", "purpose": "Fixed?", "verify": {"command": "exit 1", "expect_status": 0}},
  "fix": {"kind": "deterministic_command", "purpose": "Fix", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=fix"]}}},
 "edges": [{"from": "check", "to": "fix", "branch": "fail"}, {"from": "fix", "to": "check"}],
 "capabilities": {"tools": ["mark"], "side_effect_level": "writes_files"},
 "budgets": {"consecutive_failures": {"max": 2, "kinds": ["verify"], "pause": %v}}}`, pause)
	}
	for _, tt := range []struct {
		name, plan string
		status     string
		want       string
	}{
		{"fail", loop(false), "failed", "consecutive_failures: 2 nodes failed in a row (max 2), the last check: exit status 1, want 0"},
		{"pause", loop(true), "pending_approval", "boundary consecutive_failures"},
		{"no fail edge", `{"schema_version": "1", "objective": "o", "entry": "check",
 "nodes": {"check": {"kind": "verify", "purpose": "p", "verify": {"command": "echo nope", "expect_text": "ok"}}}, "edges": []}`,
			"failed", `node check failed and has no "fail" edge: expect_text "ok" not in output`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeTestFiles(t, dir, map[string]string{
				"plan.json": tt.plan,
				"crystallize.toml": `[grants]
capabilities = ["mark", "plan.verify"]

[tools."mark"]
command = ["sh", "-c", "echo \"$0\" >> marks.txt", "{step}"]
capabilities = ["mark"]
`,
			})
			t.Chdir(dir)
			code, stdout, stderr := runCLI(t, "plan", "run", "plan.json", "--state-dir", "state", "--json")
			res := decodeRun(t, stdout)
			if code != 1 || res.Status != tt.status || !strings.Contains(res.Error, tt.want) {
				t.Errorf("plan run = exit %d, status %s, error %q; want 1, %s, %q\n%s", code, res.Status, res.Error, tt.status, tt.want, stderr)
			}
		})
	}
}

func writeTestFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlanRunModelBranch: a model node chooses its branch by answering
// {"branch": …}; a command whose output has a "branch" field (a git
// branch) does not divert the plan.
func TestPlanRunModelBranch(t *testing.T) {
	dir := t.TempDir()
	srv, _ := modelServer(t, func(node string, _ int, _ string) any {
		return map[string]any{"branch": "bug", "why": "stack trace"}
	})
	writeTestFiles(t, dir, map[string]string{
		"crystallize.toml": `[grants]
capabilities = ["mark"]

[tools."mark"]
command = ["sh", "-c", "echo \"$0\" >> marks.txt; echo '{\"branch\": \"deps/x\"}'", "{step}"]
capabilities = ["mark"]

[models.default]
provider = "openai"
base_url = "` + srv.URL + `"
model = "fake"
`,
		"plan.json": `{"schema_version": "1", "objective": "Triage", "entry": "triage",
 "nodes": {
  "triage": {"kind": "read_fact", "purpose": "Classify", "prompt": "[triage] Bug or feature?"},
  "bug": {"kind": "deterministic_command", "purpose": "Bug", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=bug"]}},
  "feature": {"kind": "deterministic_command", "purpose": "Feature", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=feature"]}},
  "done": {"kind": "deterministic_command", "purpose": "Done", "tools": ["mark"], "command": {"tool": "mark", "args": ["step=done"]}}},
 "edges": [{"from": "triage", "to": "bug", "branch": "bug"}, {"from": "triage", "to": "feature", "branch": "feature"},
   {"from": "bug", "to": "done"}],
 "capabilities": {"tools": ["mark"], "side_effect_level": "writes_files"}}`,
	})
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "plan", "run", "plan.json", "--state-dir", "state", "--json")
	res := decodeRun(t, stdout)
	if code != 0 || res.Status != "completed" {
		t.Fatalf("plan run = exit %d, %s: %s\n%s", code, res.Status, res.Error, stderr)
	}
	if got := readFileT(t, filepath.Join(dir, "marks.txt")); got != "bug\ndone\n" {
		t.Errorf("marks.txt = %q, want bug then done", got)
	}
	if res.Output.Branches["triage"] != "bug" || res.Output.Branches["bug"] != "pass" {
		t.Errorf("branches = %v, want triage bug, bug pass", res.Output.Branches)
	}
}

// TestPlanRunCompactionAndItems: a compact node folds the older node
// outputs into one summary turn under its token threshold and keeps
// preserve_recent turns, which is what the next model node is given; a
// workflow_map fans out over the list an upstream node produced.
func TestPlanRunCompactionAndItems(t *testing.T) {
	dir := t.TempDir()
	var afterInputs atomic.Value
	srv, calls := modelServer(t, func(node string, _ int, user string) any {
		switch node {
		case "list":
			return []any{"x", "y"}
		case "each":
			return "done"
		case "after":
			afterInputs.Store(user)
			return "ok"
		}
		return strings.Repeat(node+" says a lot. ", 40) // ~500 bytes each
	})
	writeTestFiles(t, dir, map[string]string{
		"crystallize.toml": "[models.default]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"fake\"\n",
		"plan.json": `{"schema_version": "1", "objective": "o", "entry": "one",
 "nodes": {
  "one": {"kind": "read_fact", "purpose": "p", "prompt": "[one] a"},
  "two": {"kind": "read_fact", "purpose": "p", "prompt": "[two] b"},
  "list": {"kind": "read_fact", "purpose": "p", "prompt": "[list] c"},
  "each": {"kind": "workflow_map", "purpose": "p", "prompt": "[each] d", "map": {"items": "list", "max_concurrency": 2}},
  "trim": {"kind": "compact", "purpose": "p", "compact": {"threshold_tokens": 100, "preserve_recent": 1}},
  "after": {"kind": "read_fact", "purpose": "p", "prompt": "[after] e"}},
 "edges": [{"from": "one", "to": "two"}, {"from": "two", "to": "list"}, {"from": "list", "to": "each"},
   {"from": "each", "to": "trim"}, {"from": "trim", "to": "after"}]}`,
	})
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "plan", "run", "plan.json", "--state-dir", "state", "--json")
	res := decodeRun(t, stdout)
	if code != 0 {
		t.Fatalf("plan run = exit %d: %s\n%s", code, res.Error, stderr)
	}
	if n := calls.Load(); n != 6 { // one, two, list, each ×2, after
		t.Errorf("model calls = %d, want 6 (the map over two upstream items)", n)
	}
	user, _ := afterInputs.Load().(string)
	i := strings.Index(user, "Inputs (JSON):\n")
	var in struct {
		Inputs struct {
			Transcript []map[string]any `json:"transcript"`
		} `json:"inputs"`
	}
	if i < 0 || json.Unmarshal([]byte(user[i+len("Inputs (JSON):\n"):]), &in) != nil {
		t.Fatalf("after's request has no inputs:\n%s", user)
	}
	tr := in.Inputs.Transcript
	if len(tr) != 2 || tr[0]["node"] != "compacted" || tr[1]["node"] != "each" {
		t.Fatalf("transcript after compaction = %v, want the summary and the last turn", tr)
	}
	b, _ := json.Marshal(tr)
	if len(b)/4 > 100 {
		t.Errorf("compacted transcript is about %d tokens, over the threshold of 100:\n%s", len(b)/4, b)
	}
	if !strings.Contains(stderr, "compact trim: 4 turns to 2") {
		t.Errorf("stderr has no compaction line:\n%s", stderr)
	}
}

// TestPlanRunMaxSteps: a loop that never changes its branch stops at the
// plan's max_steps with the budget named.
func TestPlanRunMaxSteps(t *testing.T) {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"crystallize.toml": "[grants]\ncapabilities = [\"mark\", \"plan.verify\"]\n\n[tools.\"mark\"]\ncommand = [\"true\"]\ncapabilities = [\"mark\"]\n",
		"plan.json": `{"schema_version": "1", "objective": "o", "entry": "check",
 "nodes": {
  "check": {"kind": "verify", "purpose": "p", "verify": {"command": "exit 1", "expect_status": 0}},
  "fix": {"kind": "deterministic_command", "purpose": "p", "tools": ["mark"], "command": {"tool": "mark"}}},
 "edges": [{"from": "check", "to": "fix", "branch": "fail"}, {"from": "fix", "to": "check"}],
 "capabilities": {"tools": ["mark"], "side_effect_level": "writes_files"},
 "budgets": {"max_steps": 5}}`,
	})
	t.Chdir(dir)
	code, stdout, _ := runCLI(t, "plan", "run", "plan.json", "--state-dir", "state", "--json")
	res := decodeRun(t, stdout)
	if code != 1 || !strings.Contains(res.Error, "task plan budget max_steps (5) used up before node fix") {
		t.Errorf("plan run = exit %d, %q; want the max_steps budget", code, res.Error)
	}
	if res.ToolCalls != 5 {
		t.Errorf("tool calls = %d, want 5 (one per node run)", res.ToolCalls)
	}
}
