package toolexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// protectWalk is protect as it was before it cached the roots: every
// ancestor of the resolved path looked at for every directory guard. It
// is the reference the cached check must agree with.
func protectWalk(e *Executor, tool, p, root, rel string) error {
	refuse := func(rule, why string) error {
		return &ProtectedError{Tool: tool, Path: p, Rule: rule, Why: why}
	}
	full := realPath(filepath.Join(root, rel))
	target, _ := os.Stat(full)
	for _, g := range e.guards() {
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
		case strings.EqualFold(n, StateDirName):
			return refuse(RuleState, "inside a "+StateDirName+" directory")
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
				e := New(context.Background(), cfg, Settings{StateDir: stateDir})
				defer e.CloseRoots()
				for _, p := range paths {
					root, rel, err := e.locate(p)
					if err != nil {
						continue
					}
					if c := e.roots.open[root]; viaRoot && c != nil && c.fd >= 0 {
						closeDirFD(c.fd)
						c.fd = -1
					}
					got, want := e.protect("fs.write", p, root, rel), protectWalk(e, "fs.write", p, root, rel)
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
