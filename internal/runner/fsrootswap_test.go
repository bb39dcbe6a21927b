package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestFSRootReplaced: a run pins each workspace root the first time a
// file built-in names it, and every later check and open keeps to that
// directory. A root path re-pointed during the run (a symlinked root
// retargeted, the directory renamed and another put in its place) is
// neither read nor written: fs.write and fs.read, through the descriptor
// and through os.Root, still go to the pinned directory, and a protected
// file there is still refused.
func TestFSRootReplaced(t *testing.T) {
	for _, c := range []struct {
		name string
		// layout makes the root path, its pinned directory and the
		// replacement (holding a protected program and a secret); swap
		// re-points the root path at the replacement and returns where
		// the pinned directory is afterwards.
		symlinked bool
		swap      func(parent, root string) string
	}{
		{"symlink retargeted", true, func(parent, root string) string {
			if err := os.Remove(root); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(parent, "b"), root); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(parent, "a")
		}},
		{"renamed, a symlink in its place", false, func(parent, root string) string {
			if err := os.Rename(root, filepath.Join(parent, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(parent, "b"), root); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(parent, "old")
		}},
		{"renamed, a directory in its place", false, func(parent, root string) string {
			if err := os.Rename(root, filepath.Join(parent, "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(parent, "b"), root); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(parent, "old")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "ws")
			pinned := root
			if c.symlinked {
				pinned = filepath.Join(parent, "a")
				if err := os.Symlink(pinned, root); err != nil {
					t.Skip("no symlinks here")
				}
			}
			for name, data := range map[string]string{
				filepath.Join(pinned, "in.txt"):          "pinned",
				filepath.Join(pinned, "bin", "prog"):     "#!/bin/sh\n",
				filepath.Join(pinned, "tools", "run.sh"): "an ordinary file here",
				"b/in.txt":                               "replacement",
				"b/notes":                                "secret",
				"b/secret.txt":                           "secret",
				"b/tools/run.sh":                         "#!/bin/sh\n",
			} {
				if !filepath.IsAbs(name) {
					name = filepath.Join(parent, name)
				}
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, []byte(data), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// notes is a symlink to in.txt in the pinned root, which the
			// check resolves and os.Root reads, and a file of its own in
			// the replacement.
			if err := os.Symlink("in.txt", filepath.Join(pinned, "notes")); err != nil {
				t.Fatal(err)
			}
			// tools/run.sh is a program in the replacement and an
			// ordinary file in the pinned root; bin/prog is a program of
			// the pinned root.
			cfg := &runconfig.Config{
				Dir: root,
				Tools: map[string]runconfig.ToolBinding{
					"run":  {Command: []string{filepath.Join(parent, "b", "tools", "run.sh")}},
					"prog": {Command: []string{filepath.Join(pinned, "bin", "prog")}},
				},
				Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}},
			}
			w := workflow(t, `# capabilities: fs.read, fs.write · secrets: none
def wf(ctx, last):
    first = ctx.tool("fs.read", path = "in.txt")["content"]
    ctx.tool("swap")
    ctx.tool("fs.write", path = "tools/run.sh", content = "written")
    notes = ctx.tool("fs.read", path = "notes")["content"]
    secret = ctx.try_tool("fs.read", path = "secret.txt")
    ctx.tool("fs.write", path = "new.txt", content = "new")
    again = ctx.tool("fs.read", path = "in.txt")["content"]
    written = ctx.tool("fs.read", path = "new.txt")["content"]
    if last:
        ctx.tool("fs.write", path = last, content = "pwned")
    return [first, again, written, notes, secret.get("content", "")]
`)
			for _, last := range []string{"", "bin/prog"} {
				var now string
				o := opts(t, cfg)
				o.Tools = map[string]toolexec.Tool{"swap": {Func: func(context.Context, map[string]any) (any, error) {
					now = c.swap(parent, root)
					return nil, nil
				}}}
				res, err := Run(context.Background(), w, Params{"last": last}, o)
				if last != "" {
					var pe *toolexec.ProtectedError
					if !errors.As(err, &pe) || pe.Rule != toolexec.RuleProgram {
						t.Errorf("writing %s of the pinned root after the swap = %v, want a ProtectedError of rule %s", last, err, toolexec.RuleProgram)
					}
				} else if err != nil {
					t.Fatal(err)
				} else if got := fmt.Sprint(res.Output); got != "[pinned pinned new pinned ]" {
					t.Errorf("output = %s, want what the pinned root holds and no secret", got)
				}
				replacement := filepath.Join(parent, "b")
				if fi, err := os.Lstat(replacement); err != nil || fi.Mode()&os.ModeSymlink != 0 {
					replacement = root // renamed into the root's place
				}
				if data, _ := os.ReadFile(filepath.Join(replacement, "tools", "run.sh")); string(data) != "#!/bin/sh\n" {
					t.Errorf("the replacement's program = %q, written through the re-pointed root", data)
				}
				if _, err := os.Stat(filepath.Join(replacement, "new.txt")); err == nil {
					t.Error("new.txt was written to the replacement")
				}
				if data, err := os.ReadFile(filepath.Join(now, "new.txt")); err != nil || string(data) != "new" {
					t.Errorf("new.txt in the pinned root = %q, %v", data, err)
				}
				if data, _ := os.ReadFile(filepath.Join(now, "tools", "run.sh")); last == "" && string(data) != "written" {
					t.Errorf("tools/run.sh in the pinned root = %q, want written", data)
				}
				if data, _ := os.ReadFile(filepath.Join(now, "bin", "prog")); string(data) != "#!/bin/sh\n" {
					t.Errorf("the pinned root's program = %q", data)
				}
				// Put everything back for the next run.
				os.Remove(root)
				os.RemoveAll(root)
				if c.symlinked {
					os.Symlink(pinned, root)
				} else {
					os.Rename(now, root)
				}
				if _, err := os.Stat(filepath.Join(parent, "b")); err != nil {
					os.MkdirAll(filepath.Join(parent, "b", "tools"), 0o755)
					os.WriteFile(filepath.Join(parent, "b", "tools", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
					os.WriteFile(filepath.Join(parent, "b", "secret.txt"), []byte("secret"), 0o644)
					os.WriteFile(filepath.Join(parent, "b", "notes"), []byte("secret"), 0o644)
				}
				os.Remove(filepath.Join(pinned, "new.txt"))
			}
		})
	}
}
