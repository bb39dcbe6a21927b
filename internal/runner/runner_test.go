package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestMain lets the test binary stand in for a command tool: with
// RUNTIME_TEST_HELPER=argv it prints its arguments as a JSON array.
func TestMain(m *testing.M) {
	switch os.Getenv("RUNTIME_TEST_HELPER") {
	case "argv":
		b, _ := json.Marshal(os.Args[1:])
		os.Stdout.Write(b)
		os.Exit(0)
	case "touch":
		os.WriteFile(os.Args[1], []byte("called"), 0o644)
		os.Exit(0)
	case "hostile":
		os.Exit(runHostile(os.Getenv("RUNTIME_TEST_HOSTILE")))
	}
	os.Exit(m.Run())
}

// workflow writes src as a .star file and loads it.
func workflow(t testing.TB, src string) *Workflow {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.star")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return w
}

// opts returns options recording into a temporary state directory, with
// a workspace root of its own.
func opts(t testing.TB, cfg *runconfig.Config) Options {
	t.Helper()
	if cfg == nil {
		cfg = &runconfig.Config{}
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	return Options{Config: cfg, StateDir: t.TempDir(), RunID: "run-test"}
}

func echo(ctx context.Context, args map[string]any) (any, error) { return args, nil }

func TestMissingParameters(t *testing.T) {
	w := workflow(t, "def wf(ctx, branch, module, version = None):\n    pass\n")
	_, err := Run(context.Background(), w, Params{"extra": "x"}, opts(t, nil))
	var pe *ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("Run = %v, want a *ParamError", err)
	}
	if diff := cmp.Diff([]string{"branch", "module"}, pe.Missing); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"extra"}, pe.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	want := "workflow wf: missing parameters branch, module; unknown parameters extra (it takes: branch, module, version)"
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestUnboundTools(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.tool("git.commit", message = "m")
    ctx.tool("go.test")
    ctx.tool("fs.read", path = "x")
    ctx.tool("docs.search", q = "x")
    ctx.tool("go.test")
`)
	cfg := &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"docs.*": {Command: []string{"true"}}}}
	o := opts(t, cfg)
	o.Tools = map[string]toolexec.Tool{"noop": {Func: echo}}
	for _, check := range []func() error{
		func() error { return Check(w, cfg, nil) },
		func() error { _, err := Run(context.Background(), w, nil, o); return err },
	} {
		err := check()
		var ue *UnboundError
		if !errors.As(err, &ue) || !errors.Is(err, ErrUnbound) {
			t.Fatalf("got %v, want an *UnboundError", err)
		}
		if diff := cmp.Diff([]string{"git.commit", "go.test"}, ue.Names); diff != "" {
			t.Errorf("unbound (-want +got):\n%s", diff)
		}
	}
	if _, err := os.Stat(filepath.Join(o.StateDir, "runs")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a run refused before its first step recorded something: %v", err)
	}
}

func TestResolveGlob(t *testing.T) {
	cfg := &runconfig.Config{Tools: map[string]runconfig.ToolBinding{
		"git.*":        {Command: []string{"a"}},
		"git.commit*":  {Command: []string{"b"}},
		"git.checkout": {Command: []string{"c"}},
	}}
	for name, want := range map[string]string{
		"git.checkout": "git.checkout", "git.commit": "git.commit*", "git.push": "git.*",
	} {
		b, ok := toolexec.Resolve(cfg, nil, name)
		if !ok || b.Pattern != want {
			t.Errorf("resolve(%q) = %v, %v, want pattern %q", name, b, ok, want)
		}
	}
	if b, ok := toolexec.Resolve(cfg, nil, "fs.read"); !ok || b.Builtin != runconfig.ToolFSRead {
		t.Errorf("resolve(fs.read) = %v, %v, want the built-in", b, ok)
	}
	if _, ok := toolexec.Resolve(cfg, nil, "github.open_pr"); ok {
		t.Errorf("resolve(github.open_pr) bound an unconfigured name")
	}
}

// TestCapabilityRefusal checks that a tool needing a capability the run
// does not hold is refused before the first step: no step runs, so no
// side effect is done for a run that cannot finish.
func TestCapabilityRefusal(t *testing.T) {
	called := 0
	w := workflow(t, `# capabilities: git.write · secrets: none
def wf(ctx):
    ctx.tool("git.commit", message = "m")
    ctx.tool("github.open_pr", title = "t")
`)
	o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"git.write"}}})
	count := func(context.Context, map[string]any) (any, error) { called++; return nil, nil }
	o.Tools = map[string]toolexec.Tool{
		"git.commit":     {Func: count, Capabilities: []string{"git.write"}},
		"github.open_pr": {Func: count, Capabilities: []string{"github.write"}},
	}
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrCapability) {
		t.Fatalf("Run = %v, want ErrCapability", err)
	}
	if res != nil || called != 0 {
		t.Errorf("Run = %+v after %d tool calls, want no run and no call", res, called)
	}
	if want := "github.write (tool github.open_pr), which it does not declare"; !strings.Contains(err.Error(), want) {
		t.Errorf("Run error = %v, want it to say %q", err, want)
	}
	// Declared but not granted: the same, naming the grant to add.
	w = workflow(t, `# capabilities: git.write, github.write · secrets: none
def wf(ctx):
    ctx.tool("git.commit", message = "m")
    ctx.tool("github.open_pr", title = "t")
`)
	res, err = Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrCapability) || res != nil || called != 0 {
		t.Fatalf("Run = %v, %v after %d calls, want ErrCapability before the first step", res, err, called)
	}
	if want := `github.write (tool github.open_pr), which`; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"github.write"`) {
		t.Errorf("Run error = %v, want it to name %q and the grant to add", err, want)
	}
}

func TestGrantWithoutDeclaration(t *testing.T) {
	// Granted by the config but not declared by the workflow: refused.
	w := workflow(t, "def wf(ctx):\n    ctx.tool(\"fs.write\", path = \"a\", content = \"x\")\n")
	o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}})
	if _, err := Run(context.Background(), w, nil, o); !errors.Is(err, ErrCapability) {
		t.Fatalf("Run = %v, want ErrCapability", err)
	}
}

func TestShellMetacharactersVerbatim(t *testing.T) {
	const nasty = `; rm -rf / $(x) "q" 'a' ` + "`id` | & > <\n*"
	w := workflow(t, `# capabilities: test.exec · secrets: none
def wf(ctx, arg):
    return ctx.tool("argv", arg = arg)
`)
	o := opts(t, &runconfig.Config{
		Tools: map[string]runconfig.ToolBinding{"argv": {
			Command:    []string{os.Args[0], "{arg}", "--flag={arg}", "{missing_brace", "{{literal}}"},
			Env:        map[string]string{"RUNTIME_TEST_HELPER": "argv"},
			Capability: "test.exec",
		}},
		Grants: runconfig.Grants{Capabilities: []string{"test.exec"}},
	})
	res, err := Run(context.Background(), w, Params{"arg": nasty}, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{nasty, "--flag=" + nasty, "{missing_brace", "{literal}"}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
}

func TestFSConfinement(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside"), 0o644)
	os.WriteFile(filepath.Join(root, "in.txt"), []byte("inside"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Skip("no symlinks:", err)
	}
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "file-link"))
	cfg := &runconfig.Config{Dir: root, Workspace: runconfig.Workspace{Roots: []string{"."}}, Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}}}
	src := "# capabilities: fs.read, fs.write · secrets: none\ndef wf(ctx, tool, path):\n    if tool == \"fs.read\":\n        return ctx.tool(\"fs.read\", path = path)\n    return ctx.tool(\"fs.write\", path = path, content = \"x\")\n"
	w := workflow(t, src)
	for _, tc := range []struct {
		tool, path string
		ok         bool
	}{
		{"fs.read", "in.txt", true},
		{"fs.read", filepath.Join(root, "in.txt"), true},
		{"fs.write", "sub/new.txt", true},
		{"fs.read", "../" + filepath.Base(outside) + "/secret.txt", false},
		{"fs.read", "sub/../../x", false},
		{"fs.read", filepath.Join(outside, "secret.txt"), false},
		{"fs.read", "/etc/passwd", false},
		{"fs.read", "link/secret.txt", false},
		{"fs.read", "file-link", false},
		{"fs.write", "link/evil.txt", false},
		{"fs.write", "file-link", false},
		{"fs.write", "", false},
	} {
		o := opts(t, cfg)
		_, err := Run(context.Background(), w, Params{"tool": tc.tool, "path": tc.path}, o)
		if tc.ok && err != nil {
			t.Errorf("%s(%q) = %v, want success", tc.tool, tc.path, err)
		}
		if !tc.ok && !errors.Is(err, toolexec.ErrOutsideWorkspace) {
			t.Errorf("%s(%q) = %v, want ErrOutsideWorkspace", tc.tool, tc.path, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside" {
		t.Errorf("a file outside the workspace changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil.txt")); err == nil {
		t.Error("fs.write created a file outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "sub/new.txt")); string(b) != "x" {
		t.Errorf("fs.write wrote %q, want x", b)
	}
}

func TestStepLimit(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    n = 0\n    for i in range(100000000):\n        n += i\n    return n\n")
	o := opts(t, nil)
	o.MaxSteps = 10000
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrStepLimit) {
		t.Fatalf("Run = %v, want ErrStepLimit", err)
	}
	if res.Status != runstate.StatusFailed {
		t.Errorf("status = %s, want failed", res.Status)
	}
}

func TestCancellation(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.tool("cancel")
    n = 0
    for i in range(1000000000):
        n += i
    ctx.tool("after")
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := opts(t, nil)
	after := false
	o.Tools = map[string]toolexec.Tool{
		"cancel": {Func: func(context.Context, map[string]any) (any, error) { cancel(); return nil, nil }},
		"after":  {Func: func(context.Context, map[string]any) (any, error) { after = true; return nil, nil }},
	}
	start := time.Now()
	res, err := Run(ctx, w, nil, o)
	if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want ErrCancelled wrapping context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancellation took %s", d)
	}
	if after || res.Status != runstate.StatusCancelled {
		t.Errorf("after = %v, status = %s; want false, cancelled", after, res.Status)
	}
	if tr := readTrace(t, res); tr.Metadata["crystallize_run"].(map[string]any)["status"] != runstate.StatusCancelled {
		t.Errorf("trace does not record the cancellation: %v", tr.Metadata)
	}
	if s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile)); !strings.Contains(s, "status: cancelled") {
		t.Errorf("session.md does not record the cancellation:\n%s", s)
	}
}

func TestCancelKillsCommand(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    ctx.tool(\"sleep\")\n")
	o := opts(t, &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"sleep": {Command: []string{"sleep", "30"}}}})
	o.Environ = os.Environ()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, w, nil, o)
	if !errors.Is(err, ErrCancelled) || res.Status != runstate.StatusCancelled {
		t.Fatalf("Run = %v (status %v), want a cancelled run", err, res.Status)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancellation took %s", d)
	}
}

func TestSecretNeverRecorded(t *testing.T) {
	const value = "hunter2-s3cr3t-value-0123456789"
	w := workflow(t, `# capabilities: none · secrets: API_TOKEN
def wf(ctx):
    tok = ctx.secret("API_TOKEN")
    r = ctx.tool("echo", token = tok, header = "Bearer " + tok)
    ctx.log("using " + tok)
    print("printed " + tok)
    ctx.tool("argv", token = tok)
    ctx.fail("bad token " + r["token"])
`)
	o := opts(t, &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"argv": {
		Command: []string{os.Args[0], "{token}"}, Env: map[string]string{"RUNTIME_TEST_HELPER": "argv"},
	}}, Secrets: runconfig.SecretsConfig{Env: []string{"API_TOKEN"}}})
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	o.Getenv = func(k string) string {
		if k == "API_TOKEN" {
			return value
		}
		return ""
	}
	var log strings.Builder
	o.Log = &log
	res, err := Run(context.Background(), w, nil, o)
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("Run = %v, want ErrFailed", err)
	}
	if strings.Contains(err.Error(), value) || strings.Contains(res.Error, value) || strings.Contains(log.String(), value) {
		t.Errorf("the secret leaked into the error or log: %v / %s", err, log.String())
	}
	if !strings.Contains(log.String(), "[redacted:API_TOKEN]") {
		t.Errorf("log = %q, want the secret replaced", log.String())
	}
	files := 0
	filepath.WalkDir(o.StateDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if b := readFile(t, p); strings.Contains(b, value) {
			t.Errorf("%s contains the secret value", p)
		}
		return nil
	})
	if files != 2 {
		t.Errorf("the run wrote %d files, want 2", files)
	}
	if res.Receipts[0].ArgumentsSHA256 != stepvalue.Digest(map[string]any{"token": "[redacted:API_TOKEN]", "header": "Bearer [redacted:API_TOKEN]"}) {
		t.Errorf("the arguments digest is not of the redacted arguments")
	}
}

func TestUndeclaredSecret(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    ctx.secret(\"HOME\")\n")
	o := opts(t, nil)
	o.Getenv = func(string) string { return "/root" }
	if _, err := Run(context.Background(), w, nil, o); !errors.Is(err, runconfig.ErrSecret) {
		t.Fatalf("Run = %v, want ErrSecret", err)
	}
}

func TestDryRunCallsNothing(t *testing.T) {
	ws := t.TempDir()
	marker := filepath.Join(ws, "called")
	w := workflow(t, `# capabilities: x.write · secrets: none
def wf(ctx, name):
    a = ctx.tool("inproc", name = name)
    b = ctx.tool("touch", path = "`+marker+`")
    ctx.approve("release", prompt = "ok?")
    m = ctx.model("summarize", inputs = {"name": name})
    ctx.tool("fs.write", path = "f.txt", content = "x")
    return [a, b, m]
`)
	cfg := &runconfig.Config{Dir: ws, Tools: map[string]runconfig.ToolBinding{"touch": {
		Command: []string{os.Args[0], "{path}"}, Env: map[string]string{"RUNTIME_TEST_HELPER": "touch"}, Capability: "x.write",
	}}, Grants: runconfig.Grants{Capabilities: []string{"x.write", "fs.write"}}}
	o := opts(t, cfg)
	w.Capabilities = append(w.Capabilities, "fs.write")
	o.DryRun = true
	o.Tools = map[string]toolexec.Tool{"inproc": {Func: func(context.Context, map[string]any) (any, error) {
		t.Error("dry run called an in-process tool")
		return nil, nil
	}}}
	w.Fixtures = []*trace.Trace{{ID: "f", Actions: []trace.Action{
		{Kind: trace.KindToolCall, Name: "inproc", Parameters: map[string]any{"name": "other"}, Output: "first"},
		{Kind: trace.KindToolCall, Name: "inproc", Parameters: map[string]any{"name": "n"}, Output: "exact"},
		{Kind: trace.KindModelCall, Name: "summarize", Parameters: map[string]any{"name": "n"}, Output: map[string]any{"summary": "s"}},
	}}}
	res, err := Run(context.Background(), w, Params{"name": "n"}, o)
	if err != nil {
		t.Fatal(err)
	}
	// A tool call is answered with a placeholder of the recorded output
	// (the exact-argument fixture's, a scalar), or None when nothing was
	// recorded and nothing reads it; a model call replays its fixture.
	want := []any{"<dry-run: step 1>", nil, map[string]any{"summary": "s"}}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	for _, p := range []string{marker, filepath.Join(ws, "f.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("dry run created %s", p)
		}
	}
	tr := readTrace(t, res)
	if argv := tr.Actions[1].Metadata["argv"]; argv == nil || argv.([]any)[1] != marker {
		t.Errorf("dry run did not record the resolved argv: %v", tr.Actions[1].Metadata)
	}
	for _, r := range res.Receipts {
		if r.Status != ReceiptDryRun {
			t.Errorf("receipt %s status %s, want dry_run", r.ID, r.Status)
		}
	}
	if res.Steps != 5 || res.Approvals != 1 || res.ModelCalls != 1 {
		t.Errorf("steps %d approvals %d models %d, want 5 1 1", res.Steps, res.Approvals, res.ModelCalls)
	}
}

func TestApprovals(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    ctx.approve(\"merge\", prompt = \"Merge?\")\n    return \"merged\"\n")
	o := opts(t, nil)
	_, err := Run(context.Background(), w, nil, o)
	var pe *PendingApprovalError
	if !errors.Is(err, ErrPendingApproval) || !errors.As(err, &pe) || pe.Boundary != "merge" || pe.RunID != o.RunID || strings.Contains(err.Error(), "--") {
		t.Fatalf("Run = %v, want a PendingApprovalError for boundary merge that names no flag", err)
	}
	o = opts(t, nil)
	o.Approve = []string{"merge"}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil || res.Approvals != 1 || res.Output != "merged" {
		t.Fatalf("Run = %v, %v; want one approval and output merged", res, err)
	}
	if s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile)); !strings.Contains(s, "> [!decision]") {
		t.Errorf("session.md lacks the decision callout:\n%s", s)
	}
}

func TestLoadRefusedAndPredeclared(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.star")
	os.WriteFile(p, []byte("load(\"x.star\", \"y\")\ndef wf(ctx):\n    pass\n"), 0o644)
	if _, err := Load(p); err == nil {
		t.Error("Load accepted a workflow with load")
	}
	w := workflow(t, "def wf(ctx):\n    return json.decode(json.encode(struct(a = [1, 2], b = {\"c\": None})))\n")
	res, err := Run(context.Background(), w, nil, opts(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": []any{json.Number("1"), json.Number("2")}, "b": map[string]any{"c": nil}}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestRecords(t *testing.T) {
	w := workflow(t, `# capabilities: git.write · secrets: none
def wf(ctx, branch):
    s = ctx.tool("git.create_branch", branch = branch, repo_path = "/r")
    ctx.tool("github.open_pr", branch = s["branch"])
    return {"status": "ok"}
`)
	o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"git.write"}}})
	gitRef := trace.SideEffect{Kind: "git_ref", Target: "b", Capability: "git.write", Mutation: "create"}
	o.Tools = map[string]toolexec.Tool{"git.create_branch": {Func: echo, SideEffects: []trace.SideEffect{gitRef}}, "github.open_pr": {Func: echo}}
	res, err := Run(context.Background(), w, Params{"branch": "deps/x"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Receipts) != 2 || res.Receipts[0].ArgumentsSHA256 != stepvalue.Digest(map[string]any{"branch": "deps/x", "repo_path": "/r"}) {
		t.Errorf("receipts = %+v", res.Receipts)
	}
	if diff := cmp.Diff([]trace.SideEffect{gitRef}, res.Receipts[0].SideEffects); diff != "" {
		t.Errorf("side effects (-want +got):\n%s", diff)
	}
	tr := readTrace(t, res)
	if len(tr.Actions) != 2 || tr.Actions[1].Parameters["branch"] != "deps/x" {
		t.Errorf("trace actions = %+v", tr.Actions)
	}
	if got := len(tr.ReplayRun["effect_receipts"].([]any)); got != 2 {
		t.Errorf("replay_run has %d receipts, want 2", got)
	}
	s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, want := range []string{"session_id: run-test", "status: completed", "resume_point: none", "tokens_used: 0", "## Step 1 · git.create_branch", "**Tool calls:**", "- `git.create_branch branch=\"deps/x\" repo_path=\"/r\"`"} {
		if !strings.Contains(s, want) {
			t.Errorf("session.md lacks %q:\n%s", want, s)
		}
	}
}

func readTrace(t *testing.T, res *Result) *trace.Trace {
	t.Helper()
	p := filepath.Join(res.Dir, runstate.TraceFile)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Decode(data, p, 0)
	if err != nil {
		t.Fatalf("the run's trace does not decode: %v", err)
	}
	return tr
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func BenchmarkStep(b *testing.B) {
	const steps = 100
	w := workflow(b, fmt.Sprintf("def wf(ctx):\n    for i in range(%d):\n        ctx.tool(\"noop\", i = i, name = \"x\")\n", steps))
	o := opts(b, nil)
	o.Tools = map[string]toolexec.Tool{"noop": {Func: func(context.Context, map[string]any) (any, error) { return nil, nil }}}
	h := newHost(context.Background(), w, o.Config, o.withDefaults())
	b.ResetTimer()
	for b.Loop() {
		h.actions, h.phases, h.res.Receipts = h.actions[:0], h.phases[:0], h.res.Receipts[:0]
		if _, err := h.exec(nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps)/1000, "µs/step")
}

// TestComputedToolName: a tool name computed at run time is refused at
// the call, before its binding is resolved: only names written as
// literals are seen by Check and run --check.
func TestComputedToolName(t *testing.T) {
	root := t.TempDir()
	cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}}
	w := workflow(t, "# capabilities: fs.write · secrets: none\ndef wf(ctx):\n    ctx.tool(\"fs.\" + \"write\", path = \"x.txt\", content = \"pwned\")\n")
	if len(w.Tools) != 0 {
		t.Fatalf("Load found tools %q in a computed name", w.Tools)
	}
	res, err := Run(context.Background(), w, nil, opts(t, cfg))
	if !errors.Is(err, ErrToolNotLiteral) || !strings.Contains(err.Error(), "tool_not_literal") || len(res.Refusals) != 1 {
		t.Errorf("Run = %v (%d refusals), want ErrToolNotLiteral refused", err, len(res.Refusals))
	}
	if _, err := os.Stat(filepath.Join(root, "x.txt")); err == nil {
		t.Error("the computed fs.write wrote x.txt")
	}
	// The same call written as a literal runs.
	w = workflow(t, "# capabilities: fs.write · secrets: none\ndef wf(ctx):\n    ctx.tool(\"fs.write\", path = \"x.txt\", content = \"ok\")\n")
	if _, err := Run(context.Background(), w, nil, opts(t, cfg)); err != nil {
		t.Errorf("literal fs.write: %v", err)
	}
}
