package runtime

import (
	"context"
	"errors"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFSProtected: the file built-ins refuse the files that decide what a
// tool runs or what a later run is granted, however the path is spelled,
// and the refusal names the path and the rule.
func TestFSProtected(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state")
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("crystallize.toml", "# config\n")
	write("tools/git-commit.sh", "#!/bin/sh\n")
	write("tools/lib.sh", "# sourced\n")
	write("bin/deploy", "#!/bin/sh\n")
	write("secrets.env", "TOKEN=x\n")
	write(".git/config", "[core]\n")
	os.Chmod(filepath.Join(root, "secrets.env"), 0o600)
	write("src/main.go", "package main\n")
	write("notes.txt", "n\n")
	symlinks := os.Symlink(filepath.Join(root, "tools"), filepath.Join(root, "alias")) == nil
	hardlinks := os.Link(filepath.Join(root, "tools/git-commit.sh"), filepath.Join(root, "src/hard.sh")) == nil

	cfg := &runconfig.Config{
		Dir:       root,
		File:      filepath.Join(root, "crystallize.toml"),
		Workspace: runconfig.Workspace{Roots: []string{"."}},
		Tools: map[string]runconfig.ToolBinding{
			"git.commit": {Command: []string{"./tools/git-commit.sh", "{message}"}},
			"deploy":     {Command: []string{"bin/deploy"}},
			"from.path":  {Command: []string{"{program}"}},
		},
		Secrets: runconfig.SecretsConfig{File: "secrets.env"},
		Grants:  runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}},
	}
	src := "# capabilities: fs.read, fs.write · secrets: none\ndef wf(ctx, tool, path):\n    if tool == \"fs.read\":\n        return ctx.tool(\"fs.read\", path = path)\n    return ctx.tool(\"fs.write\", path = path, content = \"pwned\")\n"
	w := workflow(t, src)
	tests := []struct {
		tool, path string
		rule       string // "" when allowed
		skip       bool
	}{
		{tool: "fs.write", path: "crystallize.toml", rule: RuleConfig},
		{tool: "fs.write", path: filepath.Join(root, "crystallize.toml"), rule: RuleConfig},
		{tool: "fs.write", path: "CRYSTALLIZE.TOML", rule: RuleConfig},
		{tool: "fs.write", path: "sub/crystallize.toml", rule: RuleConfig},
		{tool: "fs.write", path: "tools/git-commit.sh", rule: RuleProgram},
		{tool: "fs.write", path: "./tools/../tools/git-commit.sh", rule: RuleProgram},
		{tool: "fs.write", path: "tools/lib.sh", rule: RuleProgram},
		{tool: "fs.write", path: "tools/new.sh", rule: RuleProgram},
		{tool: "fs.write", path: "alias/git-commit.sh", rule: RuleProgram, skip: !symlinks},
		{tool: "fs.write", path: "src/hard.sh", rule: RuleProgram, skip: !hardlinks},
		{tool: "fs.write", path: "bin/deploy", rule: RuleProgram},
		{tool: "fs.read", path: "secrets.env", rule: RuleSecrets},
		{tool: "fs.write", path: "secrets.env", rule: RuleSecrets},
		{tool: "fs.write", path: "state/runs/x/journal.json", rule: RuleState},
		{tool: "fs.write", path: ".crystallize/state.db", rule: RuleState},
		{tool: "fs.write", path: "sub/.Crystallize/x", rule: RuleState},
		{tool: "fs.write", path: ".git/hooks/pre-commit", rule: RuleGit},
		{tool: "fs.read", path: ".git/config", rule: RuleGit},
		{tool: "fs.write", path: "vendor/.GIT/config", rule: RuleGit},
		{tool: "fs.write", path: "src/main.go"},
		{tool: "fs.write", path: "notes.txt"},
		{tool: "fs.read", path: "notes.txt"},
		{tool: "fs.write", path: "gitignore/.gitkeep"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.path, func(t *testing.T) {
			if tt.skip {
				t.Skip("no symlinks or hard links here")
			}
			o := opts(t, cfg)
			o.StateDir = state
			res, err := Run(context.Background(), w, Params{"tool": tt.tool, "path": tt.path}, o)
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("%s(%q) = %v, want success", tt.tool, tt.path, err)
				}
				return
			}
			var pe *ProtectedError
			if !errors.As(err, &pe) || !errors.Is(err, ErrProtected) || pe.Rule != tt.rule || pe.Path != tt.path {
				t.Fatalf("%s(%q) = %v, want a ProtectedError of rule %s naming the path", tt.tool, tt.path, err, tt.rule)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.rule) {
				t.Errorf("error %q does not name the path and the rule", err)
			}
			if res == nil || len(res.Refusals) != 1 || res.Refusals[0].Tool != tt.tool {
				t.Errorf("refusals = %+v, want the call recorded as refused", res)
			}
		})
	}
	for _, f := range []string{"crystallize.toml", "tools/git-commit.sh", "tools/lib.sh", "bin/deploy", "secrets.env", ".git/config"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); strings.Contains(string(b), "pwned") {
			t.Errorf("%s was written", f)
		}
	}
	for _, f := range []string{"tools/new.sh", ".git/hooks/pre-commit", "sub/crystallize.toml"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}
}

// TestFSProtectedRootProgram: a program at the top of a workspace root
// protects itself, not the whole root.
func TestFSProtectedRootProgram(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	cfg := &runconfig.Config{Dir: root, Tools: map[string]runconfig.ToolBinding{"x": {Command: []string{"./run.sh"}}}, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}}
	w := workflow(t, "# capabilities: fs.write · secrets: none\ndef wf(ctx, path):\n    return ctx.tool(\"fs.write\", path = path, content = \"x\")\n")
	if _, err := Run(context.Background(), w, Params{"path": "run.sh"}, opts(t, cfg)); !errors.Is(err, ErrProtected) {
		t.Errorf("fs.write(run.sh) = %v, want ErrProtected", err)
	}
	if _, err := Run(context.Background(), w, Params{"path": "other.txt"}, opts(t, cfg)); err != nil {
		t.Errorf("fs.write(other.txt) = %v, want success", err)
	}
}

// protectWalk is protect as it was before it cached the roots: every
// ancestor of the resolved path looked at for every directory guard. It
// is the reference the cached check must agree with.
func protectWalk(h *host, tool, p, root, rel string) error {
	refuse := func(rule, why string) error {
		return &ProtectedError{Tool: tool, Path: p, Rule: rule, Why: why}
	}
	full := realPath(filepath.Join(root, rel))
	target, _ := os.Stat(full)
	for _, g := range h.tools.guards() {
		if full == g.path || target != nil && g.info != nil && os.SameFile(target, g.info) {
			return refuse(g.rule, g.why)
		}
		if g.dir && coversAncestor(g, full) {
			return refuse(g.rule, g.why)
		}
	}
	names := strings.Split(filepath.ToSlash(rel), "/")
	if r, err := filepath.Rel(realPath(root), full); err == nil {
		names = append(names, strings.Split(filepath.ToSlash(r), "/")...)
	}
	for _, n := range names {
		switch {
		case strings.EqualFold(n, ".git"):
			return refuse(RuleGit, "inside a .git directory")
		case strings.EqualFold(n, DefaultStateDir):
			return refuse(RuleState, "inside a "+DefaultStateDir+" directory")
		}
	}
	if strings.EqualFold(filepath.Base(full), runconfig.ConfigFile) || strings.EqualFold(filepath.Base(rel), runconfig.ConfigFile) {
		return refuse(RuleConfig, "a "+runconfig.ConfigFile+" a later run could load")
	}
	return nil
}

// TestProtectMatchesWalk: the cached check refuses exactly what the full
// walk refuses, with the same rule, for paths through symlinked roots and
// directories, into and out of the workspace, existing or not, and with
// the state directory inside the workspace and above it.
func TestProtectMatchesWalk(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{"real/tools", "real/src/deep/er", "real/state/runs", "outside/bin"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"real/tools/run.sh", "real/src/main.go", "real/src/deep/er/x.txt", "outside/bin/tool", "real/crystallize.toml"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if os.Symlink(real, filepath.Join(base, "link")) != nil {
		t.Skip("no symlinks here")
	}
	os.Symlink(filepath.Join(real, "tools"), filepath.Join(real, "src", "alias"))
	os.Symlink(outside, filepath.Join(real, "src", "out"))
	os.Symlink(filepath.Join(real, "tools", "run.sh"), filepath.Join(real, "src", "run-link"))
	// Relative symlinks stay inside the root and are resolved in the
	// pinned root; one climbs out of it, one loops.
	os.Symlink("../tools", filepath.Join(real, "src", "rel-alias"))
	os.Symlink("../tools/run.sh", filepath.Join(real, "src", "rel-run"))
	os.Symlink("deep/er", filepath.Join(real, "src", "rel-deep"))
	os.Symlink("../../outside", filepath.Join(real, "src", "rel-out"))
	os.Symlink("loop", filepath.Join(real, "src", "loop"))
	os.Symlink("..", filepath.Join(real, "src", "up"))
	paths := []string{
		"tools/run.sh", "tools/new.sh", "src/main.go", "src/deep/er/x.txt", "src/deep/er/missing/y.txt",
		"src/alias/run.sh", "src/alias/new.sh", "src/out/bin/tool", "src/out/bin/new", "src/run-link",
		"state/runs/x.json", "state", ".", "src/main.go/child", "Crystallize.toml", "src/.git/config",
		"src/deep/../main.go", filepath.Join(base, "link", "tools", "run.sh"),
		"src/rel-alias/run.sh", "src/rel-alias/new.sh", "src/rel-run", "src/rel-deep/x.txt", "src/rel-deep/new/y.txt",
		"src/rel-out/bin/tool", "src/rel-out/bin/new", "src/loop/x", "src/up/tools/run.sh", "src/up/src/main.go", "src/up",
	}
	refused, allowed := 0, 0
	// viaRoot: the root has no plain descriptor (as off Linux), and the
	// check looks at paths through os.Root.
	for _, viaRoot := range []bool{false, true} {
		for _, stateDir := range []string{filepath.Join(real, "state"), base} {
			for _, dir := range []string{real, filepath.Join(base, "link")} {
				cfg := &runconfig.Config{
					Dir:    dir,
					File:   filepath.Join(dir, "crystallize.toml"),
					Tools:  map[string]runconfig.ToolBinding{"run": {Command: []string{"./tools/run.sh"}}, "ext": {Command: []string{filepath.Join(outside, "bin", "tool")}}},
					Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}},
				}
				o := Options{Config: cfg, StateDir: stateDir, RunID: "run-test"}.withDefaults()
				h := newHost(context.Background(), workflow(t, "def wf(ctx):\n    return 1\n"), o.Config, o)
				defer h.tools.roots.close()
				for _, p := range paths {
					root, rel, err := h.tools.locate(p)
					if err != nil {
						continue
					}
					if c := h.tools.roots.open[root]; viaRoot && c != nil && c.fd >= 0 {
						closeDirFD(c.fd)
						c.fd = -1
					}
					got, want := h.tools.protect("fs.write", p, root, rel), protectWalk(h, "fs.write", p, root, rel)
					var gp, wp *ProtectedError
					errors.As(got, &gp)
					errors.As(want, &wp)
					if (gp == nil) != (wp == nil) || gp != nil && gp.Rule != wp.Rule {
						t.Errorf("dir %s, state %s, path %s: protect = %v, the full walk = %v", dir, stateDir, p, got, want)
					}
					if gp != nil {
						refused++
					} else {
						allowed++
					}
				}
			}
		}
	}
	if refused < 40 || allowed < 20 {
		t.Errorf("%d paths refused and %d allowed: the comparison proves little", refused, allowed)
	}
}
