package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/precond"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

func TestCheckKinds(t *testing.T) {
	repo := gitRepo(t)
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := workflow(t, "# capabilities: exec:git, fs.read, git.write, github.write · secrets: none\ndef wf(ctx):\n    pass\n")
	cfg := &runconfig.Config{Dir: repo, Grants: runconfig.Grants{Capabilities: []string{"exec:git", "git.write"}},
		Tools: map[string]runconfig.ToolBinding{"git.create_branch": {Command: []string{"true"}, Capability: "git.write"}, "gh pr create": {Command: []string{"true"}, Capability: "github.write"}}}
	o := opts(t, cfg)
	o.Environ = os.Environ()
	h := newHost(context.Background(), w, cfg, o.withDefaults())
	shape := map[string]any{"branch": "string", "count": "number"}
	tests := []struct {
		name   string
		kind   string
		args   map[string]any
		reason string // "" when the check passes
	}{
		{"capability held", "capability", map[string]any{"capability": "exec:git"}, ""},
		{"capability declared, not granted", "capability", map[string]any{"capability": "fs.read"}, "capability fs.read is not held"},
		{"capability through the step's binding", "capability", map[string]any{"capability": "exec:git-create-branch.sh", "tool": "git.create_branch"}, ""},
		{"binding's capability not granted", "capability", map[string]any{"capability": "exec:gh", "tool": "gh pr create"}, "tool gh pr create is bound to what needs github.write"},
		{"unbound tool needs the traces' capability", "capability", map[string]any{"capability": "exec:make", "tool": "make"}, "capability exec:make is not held"},
		{"inputs bound", "inputs_bound", map[string]any{"a": "x", "b": 0}, ""},
		{"inputs unbound", "inputs_bound", map[string]any{"a": "", "b": nil, "c": "x"}, "inputs a, b have no value"},
		{"file exists", "file_exists", map[string]any{"path": "go.mod"}, ""},
		{"file missing", "file_exists", map[string]any{"path": "nope.txt"}, "file nope.txt does not exist"},
		{"file outside the workspace", "file_exists", map[string]any{"path": "../../etc/passwd"}, "outside the workspace roots"},
		{"branch absent", "branch_absent", map[string]any{"branch": "feature-9"}, ""},
		{"branch exists", "branch_absent", map[string]any{"branch": "feature"}, "branch feature already exists"},
		{"branch like an option", "branch_absent", map[string]any{"branch": "--all"}, ""},
		{"program on PATH", "program_on_path", map[string]any{"program": "git"}, ""},
		{"program replaced by the step's binding", "program_on_path", map[string]any{"program": "git-create-branch.sh", "tool": "git.create_branch"}, ""},
		{"program missing", "program_on_path", map[string]any{"program": "no-such-program-xyz"}, `program "no-such-program-xyz" is not on PATH`},
		{"shape matches", "output_shape", map[string]any{"step": 1, "value": map[string]any{"branch": "b", "count": 2, "extra": true}, "shape": shape}, ""},
		{"shape differs", "output_shape", map[string]any{"step": 1, "value": map[string]any{"branch": 3}, "shape": shape}, "branch is number, want string; count is missing"},
		{"shape of a non-object", "output_shape", map[string]any{"step": 1, "value": "x", "shape": shape}, "is string, not an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := precond.Eval(h.world(), tc.kind, tc.args)
			if err != nil {
				t.Fatalf("precond.Eval: %v", err)
			}
			if tc.reason == "" {
				if !res.OK {
					t.Errorf("failed: %s", res.Reason)
				}
				return
			}
			if res.OK || !strings.Contains(res.Reason, tc.reason) {
				t.Errorf("ok %v, reason %q; want failure containing %q", res.OK, res.Reason, tc.reason)
			}
		})
	}
}

func TestCheckWrittenWrong(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`ctx.check("file_exists")`, "check file_exists: missing argument path"},
		{`ctx.check("branch_absent", branch = 3)`, "argument branch is number, want a string"},
		{`ctx.check("output_shape", value = {}, shape = "x")`, "argument shape must be a dict"},
	} {
		w := workflow(t, "def wf(ctx):\n    "+tc.src+"\n")
		_, err := Run(context.Background(), w, nil, opts(t, nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.src, err, tc.want)
		}
	}
}

// TestCheckDryRun: a dry run runs no program for a check, and a failed
// check is logged, not followed.
func TestCheckDryRun(t *testing.T) {
	w := workflow(t, `def wf(ctx):
    ctx.check("branch_absent", branch = "x")
    ctx.check("file_exists", path = "missing.txt")
    return "went on"
`)
	o := opts(t, nil)
	o.DryRun = true
	var log strings.Builder
	o.Log = &log
	res, err := Run(context.Background(), w, nil, o)
	if err != nil || res.Output != "went on" {
		t.Fatalf("dry run: %v, %v", res, err)
	}
	if !strings.Contains(log.String(), "dry run: precondition file_exists of step 1 failed: file missing.txt does not exist") {
		t.Errorf("log: %s", log.String())
	}
}
