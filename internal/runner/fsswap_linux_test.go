package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestFSReadSwappedDuringRun: a run that has read a file, its root then
// open, is refused the same file once it becomes a symlink out of the
// root or a directory, as a run that never read it would be, and reads
// it again by its absolute path once it is back.
func TestFSReadSwappedDuringRun(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(root, "f.txt")
	if err := os.WriteFile(filepath.Join(parent, "outside.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.read"}}}
	w := workflow(t, `# capabilities: fs.read · secrets: none
def wf(ctx, path):
    first = ctx.tool("fs.read", path = "f.txt")["content"]
    ctx.tool("swap")
    return first + "|" + ctx.tool("fs.read", path = path)["content"]
`)
	for _, c := range []struct {
		name, path string
		swap       func() error
		want       error
		output     string
	}{
		{"symlink out of the root", "f.txt", func() error {
			os.Remove(f)
			return os.Symlink(filepath.Join(parent, "outside.txt"), f)
		}, toolexec.ErrOutsideWorkspace, ""},
		{"directory", "f.txt", func() error { os.Remove(f); return os.Mkdir(f, 0o755) }, toolexec.ErrNotRegular, ""},
		{"climbing out", "../outside.txt", func() error { return nil }, toolexec.ErrOutsideWorkspace, ""},
		{"another file, by absolute path", f, func() error { return os.WriteFile(f, []byte("two"), 0o644) }, nil, "one|two"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.RemoveAll(f)
			if err := os.WriteFile(f, []byte("one"), 0o644); err != nil {
				t.Fatal(err)
			}
			o := opts(t, cfg)
			o.Tools = map[string]toolexec.Tool{"swap": {Func: func(context.Context, map[string]any) (any, error) { return nil, c.swap() }}}
			res, err := Run(context.Background(), w, Params{"path": c.path}, o)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Fatalf("Run = %v, want %v", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != c.output {
				t.Errorf("output = %v, want %s", res.Output, c.output)
			}
		})
	}
}
