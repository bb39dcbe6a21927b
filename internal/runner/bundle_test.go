package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// writeBundle writes a minimal bundle: a manifest with the given promotion
// status, the workflow and one fixture.
func writeBundle(t *testing.T, status, src string) string {
	t.Helper()
	dir := t.TempDir()
	sum := sha256.Sum256([]byte(src))
	os.WriteFile(filepath.Join(dir, bundle.WorkflowFile), []byte(src), 0o644)
	os.MkdirAll(filepath.Join(dir, "fixtures"), 0o755)
	os.WriteFile(filepath.Join(dir, "fixtures/t1.json"), []byte(`{"version":1,"id":"t1","actions":[{"kind":"tool_call","name":"go.test","parameters":{"packages":"./..."},"output":{"exit_code":0}}]}`), 0o644)
	manifest := fmt.Sprintf(`{"schema":%q,"schema_version":1,"capabilities":["go.exec"],"required_secrets":[],
"workflow":{"path":"workflow.star","name":"wf","sha256":%q},
"fixtures":[{"path":"fixtures/t1.json","trace_id":"t1"}],
"promotion":{"criteria":{"status":%q}}}`, bundle.Schema, hex.EncodeToString(sum[:]), status)
	os.WriteFile(filepath.Join(dir, bundle.ManifestFile), []byte(manifest), 0o644)
	return dir
}

func TestBundleNotReady(t *testing.T) {
	const src = "def wf(ctx):\n    return ctx.tool(\"go.test\", packages = \"./...\")\n"
	called := 0
	run := func(dir string, mod func(*Options)) (*Result, error) {
		w, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"go.exec"}}})
		o.Tools = map[string]toolexec.Tool{"go.test": {Func: func(context.Context, map[string]any) (any, error) { called++; return "ran", nil }, Capabilities: []string{"go.exec"}}}
		mod(&o)
		return Run(context.Background(), w, nil, o)
	}
	for _, status := range []string{bundle.StatusBlocked, bundle.StatusNeedsApproval} {
		dir := writeBundle(t, status, src)
		if _, err := run(dir, func(*Options) {}); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "promotion status is blocked") {
			t.Errorf("Run(%s bundle) = %v, want ErrNotReady naming the status", status, err)
		}
		if called != 0 {
			t.Fatalf("a %s bundle ran", status)
		}
		res, err := run(dir, func(o *Options) { o.DryRun = true })
		if err != nil || called != 0 {
			t.Fatalf("dry run of a %s bundle = %v (called %d)", status, err, called)
		}
		// The bundle's candidate has no expected output: the answer is a
		// placeholder of the shape the fixture recorded.
		if diff := fmt.Sprint(res.Output); diff != "map[exit_code:<dry-run: step 1 exit_code>]" {
			t.Errorf("dry run output = %v, want a placeholder of the fixture's shape", res.Output)
		}
		res, err = run(dir, func(o *Options) { o.AllowUnapproved = true })
		if err != nil || called != 1 || !res.AllowUnapproved {
			t.Fatalf("--allow-unapproved run = %v (called %d, recorded %v)", err, called, res.AllowUnapproved)
		}
		if s := readFile(t, filepath.Join(res.Dir, runstate.SessionFile)); !strings.Contains(s, "allow_unapproved: true") {
			t.Errorf("session.md does not record --allow-unapproved:\n%s", s)
		}
		called = 0
	}
	// A manifest that only claims ready (the status edited by hand) is
	// not ready: readiness is recomputed, and validation's codes say why.
	dir := writeBundle(t, bundle.StatusReady, src)
	_, err := run(dir, func(*Options) {})
	if !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), "claims ready") || !strings.Contains(err.Error(), bundle.CodeStatusInvalid) {
		t.Errorf("Run(bundle claiming ready) = %v, want ErrNotReady with %s", err, bundle.CodeStatusInvalid)
	}
	if called != 0 {
		t.Fatal("a bundle that only claims ready ran")
	}
	res, err := run(dir, func(o *Options) { o.AllowUnapproved = true })
	if err != nil || !res.AllowUnapproved {
		t.Errorf("--allow-unapproved run of a bundle claiming ready = %v, recorded %v; want a run recorded as unapproved", err, res != nil && res.AllowUnapproved)
	}
}

func TestBundleWorkflowChanged(t *testing.T) {
	dir := writeBundle(t, bundle.StatusReady, "def wf(ctx):\n    pass\n")
	os.WriteFile(filepath.Join(dir, bundle.WorkflowFile), []byte("def wf(ctx):\n    ctx.fail(\"x\")\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "changed after it was reviewed") {
		t.Errorf("Load = %v, want a hash mismatch", err)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, runconfig.ConfigFile)
	os.WriteFile(p, []byte(`[workspace]
roots = ["."]
[tools."git.checkout_branch"]
command = ["git", "-C", "{repo_path}", "checkout", "-b", "{branch_name}"]
capability = "git.write"
timeout = "30s"
[tools."docs.*"]
mcp = "docs"
[tools."bad"]
command = ["x"]
timeout = "soon"
colour = "red"
[tools."none"]
[mcp.docs]
command = ["go", "run", "./examples/docs-mcp"]
[models.default]
provider = "openai"
[grants]
capabilities = ["git.write", "fs.write"]
`), 0o644)
	_, err := runconfig.LoadConfig(p)
	if err == nil {
		t.Fatal("LoadConfig accepted a bad config")
	}
	for _, want := range []string{
		p + `: tools."bad".timeout: "soon" is not a positive duration`,
		p + `: tools.bad.colour: unknown key`,
		p + `: tools."none": no executor`,
		p + `: models.default.model: empty model; name the provider's model`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("LoadConfig error lacks %q:\n%v", want, err)
		}
	}
	os.WriteFile(p, []byte("[tools.\"git.*\"]\ncommand = [\"git\"]\ntimeout = \"30s\"\n[grants]\ncapabilities = [\"git.write\"]\n"), 0o644)
	c, err := runconfig.LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := toolexec.Resolve(c, nil, "git.push"); !ok || b.Tool.ParsedTimeout().String() != "30s" {
		t.Errorf("resolve(git.push) = %+v, %v", b, ok)
	}
}

// TestResumeRechecksReadiness: resume decides readiness again, by the
// function run uses. A run suspended at an approval boundary does not
// continue for real once its bundle is not ready, unless the run was
// started with AllowUnapproved.
func TestResumeRechecksReadiness(t *testing.T) {
	const src = "def wf(ctx):\n    ctx.tool(\"go.test\", packages = \"./...\")\n    ctx.approve(\"merge\")\n    return ctx.tool(\"go.test\", packages = \"./...\")\n"
	dir := writeBundle(t, bundle.StatusReady, src)
	state := t.TempDir()
	called := 0
	o := opts(t, &runconfig.Config{Grants: runconfig.Grants{Capabilities: []string{"go.exec"}}})
	o.StateDir = state
	o.Tools = map[string]toolexec.Tool{"go.test": {Func: func(context.Context, map[string]any) (any, error) { called++; return "ran", nil }, Capabilities: []string{"go.exec"}}}
	w, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	o.AllowUnapproved = true
	if _, err := Run(context.Background(), w, nil, o); !errors.Is(err, ErrPendingApproval) || called != 1 {
		t.Fatalf("Run = %v (called %d), want a run pending at merge after one call", err, called)
	}
	j, err := ReadJournal(state, "run-test")
	if err != nil {
		t.Fatal(err)
	}
	j.Unapproved = false // as if the run had started on a ready bundle
	o.AllowUnapproved = false
	o.Approve = []string{"merge"}
	if _, err := Resume(context.Background(), w, j, o); !errors.Is(err, ErrNotReady) || !strings.Contains(err.Error(), bundle.CodeStatusInvalid) {
		t.Errorf("Resume of a bundle that is not ready = %v, want ErrNotReady with %s", err, bundle.CodeStatusInvalid)
	}
	if called != 1 {
		t.Errorf("resume ran %d more calls of a bundle that is not ready", called-1)
	}
}
