package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// branchWorkflow is what code generation writes for a mined "git
// checkout -b" followed by a file write: the checks, then the steps.
const branchWorkflow = `# capabilities: exec:git, fs.write · secrets: none
def wf(ctx, branch):
    ctx.check("program_on_path", program = "git")
    ctx.check("branch_absent", branch = branch)
    ctx.exec("git checkout", ["git", "checkout", "-b", "{b}"], b = branch)
    ctx.check("inputs_bound", branch = branch)
    ctx.tool("fs.write", path = "notes.txt", content = "on " + branch)
    return {"branch": branch}
`

// gitRepo returns a repository on branch main with a branch feature.
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init"},
		{"branch", "feature"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

func gitHead(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "rev-parse", "--abbrev-ref", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// scriptedModel is a local OpenAI-compatible chat-completions server
// answering each request with the next of its answers.
type scriptedModel struct {
	t       *testing.T
	mu      sync.Mutex
	answers []string
	bodies  []map[string]any
}

func (s *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("request to %s", r.URL.Path)
	}
	data, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		s.t.Errorf("request body: %v", err)
	}
	s.bodies = append(s.bodies, body)
	if len(s.answers) == 0 {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"no more answers"}}`)
		return
	}
	content, _ := json.Marshal(s.answers[0])
	s.answers = s.answers[1:]
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"c","model":"local-model","choices":[{"index":0,"message":{"role":"assistant","content":`+string(content)+`},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`)
}

func fallbackOpts(t *testing.T, dir, policy, modelURL string) Options {
	t.Helper()
	cfg := &runconfig.Config{Dir: dir, Grants: runconfig.Grants{Capabilities: []string{"exec:git", "fs.write"}}, Fallback: runconfig.FallbackConfig{Policy: policy, Model: "local"}}
	if modelURL != "" {
		cfg.Models = map[string]runconfig.ModelConfig{"local": {Provider: runconfig.ProviderOpenAI, BaseURL: modelURL + "/v1", Model: "local-model"}}
	}
	o := opts(t, cfg)
	o.Environ = os.Environ()
	return o
}

func checkActions(tr *trace.Trace) (checks, fallback []trace.Action) {
	for _, a := range tr.Actions {
		if a.Metadata["check"] != nil {
			checks = append(checks, a)
		}
		if m, ok := a.Metadata[candidate.MetaFallback].(map[string]any); ok && m["reason"] == nil {
			fallback = append(fallback, a)
		}
	}
	return checks, fallback
}

func TestPreconditionFallbackAgent(t *testing.T) {
	dir := gitRepo(t)
	m := &scriptedModel{t: t, answers: []string{
		`{"tool": "git checkout", "args": {"b": "feature-2"}}`,
		`{"tool": "fs.write", "args": {"path": "notes.txt", "content": "on feature-2"}}`,
		`{"branch": "feature-2"}`,
	}}
	srv := httptest.NewServer(m)
	defer srv.Close()
	m.t = t

	res, err := Run(context.Background(), workflow(t, branchWorkflow), Params{"branch": "feature"}, fallbackOpts(t, dir, runconfig.FallbackAgent, srv.URL))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != runstate.StatusCompleted {
		t.Fatalf("status %s, want %s", res.Status, runstate.StatusCompleted)
	}
	if diff := cmp.Diff(map[string]any{"branch": "feature-2"}, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	// The model did the rest of the run, for real.
	if got := gitHead(t, dir); got != "feature-2" {
		t.Errorf("HEAD is %s, want feature-2", got)
	}
	if got := readFile(t, filepath.Join(dir, "notes.txt")); got != "on feature-2" {
		t.Errorf("notes.txt = %q", got)
	}
	// The model was given the failure, the tools and the run so far.
	first := m.bodies[0]
	msgs, _ := json.Marshal(first["messages"])
	for _, want := range []string{"branch_absent", "branch feature already exists", "git checkout", "fs.write", "run_so_far"} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("the fallback model's first request does not mention %q:\n%s", want, msgs)
		}
	}

	tr := readTrace(t, res)
	checks, byAgent := checkActions(tr)
	if len(checks) != 2 || checks[1].Name != "check branch_absent" || checks[1].Metadata["status"] != "failed" {
		t.Fatalf("checks recorded: %+v", checks)
	}
	fb, _ := checks[1].Metadata[candidate.MetaFallback].(map[string]any)
	if fb["policy"] != runconfig.FallbackAgent || !strings.Contains(fb["reason"].(string), "already exists") {
		t.Errorf("the failed check's fallback metadata: %v", fb)
	}
	var names []string
	for _, a := range byAgent {
		names = append(names, string(a.Kind)+" "+a.Name)
	}
	want := []string{"model_call fallback", "tool_call git checkout", "model_call fallback", "file_mutation fs.write", "model_call fallback"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("the fallback agent's actions (-want +got):\n%s", diff)
	}
	if len(res.Fallbacks) != 1 || res.Fallbacks[0].Check != "branch_absent" || res.Fallbacks[0].Policy != runconfig.FallbackAgent {
		t.Errorf("Result.Fallbacks = %+v", res.Fallbacks)
	}
	run := tr.Metadata["crystallize_run"].(map[string]any)
	list, _ := run["fallbacks"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["check"] != "branch_absent" {
		t.Errorf("crystallize_run.fallbacks = %v", run["fallbacks"])
	}
	session := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, want := range []string{"Preconditions of step 1", "branch feature already exists", "Fallback policy agent"} {
		if !strings.Contains(session, want) {
			t.Errorf("session.md does not say %q:\n%s", want, session)
		}
	}

	// stats counts the fallback against the step.
	if got := FallbackCounts(tr.Actions); got["step 1"] != 1 {
		t.Errorf("stats fallbacks per step = %v", got)
	}
}

func TestPreconditionFallbackFail(t *testing.T) {
	dir := gitRepo(t)
	res, err := Run(context.Background(), workflow(t, branchWorkflow), Params{"branch": "feature"}, fallbackOpts(t, dir, "", ""))
	if !errors.Is(err, ErrPrecondition) {
		t.Fatalf("error %v, want ErrPrecondition", err)
	}
	if res.Status != runstate.StatusFailed || FailureCode(res.Status, res.Error) != "precondition_failed" {
		t.Errorf("status %s, reason %s (%s)", res.Status, FailureCode(res.Status, res.Error), res.Error)
	}
	// Nothing after the failed check ran or was written.
	if got := gitHead(t, dir); got != "main" {
		t.Errorf("HEAD is %s, want main", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("notes.txt was written: %v", err)
	}
	if len(res.Commands) != 0 || res.ToolCalls != 0 {
		t.Errorf("commands %v, tool calls %d, want none", res.Commands, res.ToolCalls)
	}
	tr := readTrace(t, res)
	for _, a := range tr.Actions {
		if a.Metadata["check"] == nil {
			t.Errorf("action %s %s ran after the failed check", a.Kind, a.Name)
		}
	}
	checks, _ := checkActions(tr)
	if len(checks) != 2 {
		t.Fatalf("checks %v", checks)
	}
	fb, _ := checks[1].Metadata[candidate.MetaFallback].(map[string]any)
	if fb["policy"] != runconfig.FallbackFail {
		t.Errorf("fallback metadata %v", fb)
	}
	checkSessionLog(t, res)
	session := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	if !strings.Contains(session, "Fallback policy fail") {
		t.Errorf("session.md:\n%s", session)
	}
}

// TestFallbackAsk suspends at a failed precondition; a person fixes the
// world and approves, and the resumed run checks again and completes.
func TestFallbackAsk(t *testing.T) {
	dir := t.TempDir()
	src := `# capabilities: fs.read, fs.write · secrets: none
def wf(ctx, name):
    ctx.tool("fs.write", path = "log.txt", content = "started")
    ctx.check("file_exists", path = name)
    return ctx.tool("fs.read", path = name)
`
	w := workflow(t, src)
	o := opts(t, &runconfig.Config{Dir: dir, Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}}})
	o.Fallback = runconfig.FallbackAsk
	res, err := Run(context.Background(), w, Params{"name": "in.txt"}, o)
	if !errors.Is(err, ErrPendingApproval) || res.Status != runstate.StatusPendingApproval {
		t.Fatalf("status %s, err %v; want pending", res.Status, err)
	}
	if res.Pending.Boundary != "precondition-2-file_exists" || res.Pending.Step != 2 {
		t.Fatalf("pending %+v", res.Pending)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := ReadJournal(o.StateDir, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	ro := opts(t, o.Config)
	ro.StateDir = o.StateDir
	ro.Approve = []string{res.Pending.Boundary}
	res, err = Resume(context.Background(), w, j, ro)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if out, _ := res.Output.(map[string]any); out["content"] != "hello" {
		t.Errorf("output %v", res.Output)
	}
	tr := readTrace(t, res)
	checks, _ := checkActions(tr)
	if len(checks) != 2 || checks[0].Metadata["status"] != "failed" || checks[1].Metadata["status"] != ReceiptOK || checks[0].ID == checks[1].ID {
		t.Errorf("checks: %+v", checks)
	}
	fb, _ := checks[0].Metadata[candidate.MetaFallback].(map[string]any)
	if fb["policy"] != runconfig.FallbackAsk {
		t.Errorf("fallback metadata %v", fb)
	}
	// The step the person let run is marked, so mining counts it.
	last := tr.Actions[len(tr.Actions)-1]
	if fb, _ := last.Metadata[candidate.MetaFallback].(map[string]any); last.Name != "fs.read" || fb["policy"] != runconfig.FallbackAsk {
		t.Errorf("last action %s %v", last.Name, last.Metadata)
	}
}

// TestFailedStepFallbackAgent: a deterministic step that fails hands the
// rest to the agent too; under fail it ends the run as it always did.
func TestFailedStepFallbackAgent(t *testing.T) {
	src := `# capabilities: exec:git · secrets: none
def wf(ctx, b):
    ctx.exec("git checkout", ["git", "checkout", "-b", "{b}"], b = b)
    return "done"
`
	dir := gitRepo(t)
	m := &scriptedModel{t: t, answers: []string{`{"tool": "git checkout", "args": {"b": "feature-3"}}`, `"switched to feature-3"`}}
	srv := httptest.NewServer(m)
	defer srv.Close()
	res, err := Run(context.Background(), workflow(t, src), Params{"b": "feature"}, fallbackOpts(t, dir, runconfig.FallbackAgent, srv.URL))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Output != "switched to feature-3" || gitHead(t, dir) != "feature-3" {
		t.Errorf("output %v, HEAD %s", res.Output, gitHead(t, dir))
	}
	tr := readTrace(t, res)
	first := tr.Actions[0]
	if fb, _ := first.Metadata[candidate.MetaFallback].(map[string]any); first.Name != "git checkout" || fb["policy"] != runconfig.FallbackAgent || fb["boundary"] != "step-1-failed" {
		t.Errorf("failed step: %s %v", first.Name, first.Metadata)
	}

	res, err = Run(context.Background(), workflow(t, src), Params{"b": "feature"}, fallbackOpts(t, dir, runconfig.FallbackFail, ""))
	if err == nil || FailureCode(res.Status, res.Error) != "step_error" {
		t.Errorf("under fail: err %v, reason %s", err, FailureCode(res.Status, res.Error))
	}
}

func TestFallbackConfig(t *testing.T) {
	w := workflow(t, branchWorkflow)
	o := fallbackOpts(t, t.TempDir(), runconfig.FallbackAgent, "")
	if _, err := Run(context.Background(), w, Params{"branch": "x"}, o); !errors.Is(err, model.ErrUnavailable) {
		t.Errorf("agent policy without a model: %v, want ErrModel", err)
	}
	o.Fallback = "retry"
	if _, err := Run(context.Background(), w, Params{"branch": "x"}, o); err == nil || !strings.Contains(err.Error(), `fallback policy "retry"`) {
		t.Errorf("unknown policy: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "crystallize.toml")
	if err := os.WriteFile(file, []byte("[fallback]\npolicy = \"agent\"\nmodel = \"local\"\nmax_iterations = 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := runconfig.LoadConfig(file)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	if diff := cmp.Diff(runconfig.FallbackConfig{Policy: "agent", Model: "local", MaxIterations: 4}, cfg.Fallback); diff != "" {
		t.Errorf("[fallback] (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(file, []byte("[fallback]\npolicy = \"sometimes\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runconfig.LoadConfig(file); err == nil || !strings.Contains(err.Error(), `fallback.policy: "sometimes", want one of fail, agent, ask`) {
		t.Errorf("LoadConfig with a bad policy: %v", err)
	}
}

// TestFailedStepAsk: a step that fails under ask suspends the run at
// that step; resumed with the approval, it runs again, and the trace
// keeps both attempts under distinct ids.
func TestFailedStepAsk(t *testing.T) {
	dir := t.TempDir()
	src := `# capabilities: fs.read, fs.write · secrets: none
def wf(ctx):
    ctx.tool("fs.write", path = "log.txt", content = "started")
    return ctx.tool("fs.read", path = "in.txt")["content"]
`
	w := workflow(t, src)
	o := opts(t, &runconfig.Config{Dir: dir, Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}}, Fallback: runconfig.FallbackConfig{Policy: runconfig.FallbackAsk}})
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrPendingApproval) || res.Pending == nil || res.Pending.Boundary != "step-2-failed" || res.Pending.Step != 2 {
		t.Fatalf("err %v, pending %+v; want pending at step-2-failed", err, res.Pending)
	}
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := ReadJournal(o.StateDir, res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	ro := opts(t, o.Config)
	ro.StateDir = o.StateDir
	ro.Approve = []string{"step-2-failed"}
	res, err = Resume(context.Background(), w, j, ro)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if res.Output != "hello" {
		t.Errorf("output %v", res.Output)
	}
	tr := readTrace(t, res) // decodes: no duplicate action ids
	var ids []string
	for _, a := range tr.Actions {
		ids = append(ids, strings.TrimPrefix(a.ID, res.RunID))
	}
	if diff := cmp.Diff([]string{"-a01", "-a02.failed", "-a02"}, ids); diff != "" {
		t.Errorf("action ids (-want +got):\n%s", diff)
	}
	if got := readFile(t, filepath.Join(dir, "log.txt")); got != "started" {
		t.Errorf("log.txt = %q", got)
	}
}
