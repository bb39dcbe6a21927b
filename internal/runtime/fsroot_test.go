package runtime

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"
)

// TestFSRootReplaced: the file built-ins keep their workspace root open
// for the run, but a directory put in its place during the run is the
// one later calls use, as opening the path each time would.
func TestFSRootReplaced(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Dir: root, Grants: Grants{Capabilities: []string{"fs.read", "fs.write"}}}
	w := workflow(t, `# capabilities: fs.read, fs.write · secrets: none
def wf(ctx):
    ctx.tool("fs.write", path = "a.txt", content = "old")
    ctx.tool("replace")
    ctx.tool("fs.write", path = "b.txt", content = "new")
    return ctx.tool("fs.read", path = "b.txt")["content"]
`)
	o := opts(t, cfg)
	o.Tools = map[string]Tool{"replace": {Func: func(context.Context, map[string]any) (any, error) {
		if err := os.Rename(root, filepath.Join(parent, "old")); err != nil {
			return nil, err
		}
		return nil, os.Mkdir(root, 0o755)
	}}}
	res, err := Run(context.Background(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "new" {
		t.Errorf("output = %v, want new", res.Output)
	}
	if data, err := os.ReadFile(filepath.Join(root, "b.txt")); err != nil || string(data) != "new" {
		t.Errorf("b.txt in the new root = %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(parent, "old", "b.txt")); err == nil {
		t.Error("b.txt was written to the replaced root")
	}
	if data, err := os.ReadFile(filepath.Join(parent, "old", "a.txt")); err != nil || string(data) != "old" {
		t.Errorf("a.txt in the old root = %q, %v", data, err)
	}
}

// TestFSReadInline: fs.read reads a file without the goroutine and
// timer that bound a call only when the file is on its root's own local
// file system; a file on another file system, or under a root that is
// not local, is bounded.
func TestFSReadInline(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var roots openRoots
	defer roots.close()
	c, err := roots.get(dir)
	if err != nil {
		t.Fatal(err)
	}
	if goruntime.GOOS != "linux" {
		if c.local {
			t.Fatal("a root is local where the file system is not known")
		}
		return
	}
	if !localFileSystem(dir) {
		t.Skip("the temporary directory is not on a file system known to be local")
	}
	if !c.local {
		t.Fatal("the root on a local file system is not local")
	}
	f, err := c.root.Stat("f")
	if err != nil {
		t.Fatal(err)
	}
	if !c.readsInline(f) {
		t.Error("a file of a local root is not read inline")
	}
	if c.readsInline(nil) {
		t.Error("a missing file is read inline")
	}
	if proc, err := os.Stat("/proc/self/status"); err == nil {
		if c.readsInline(proc) {
			t.Error("a file on another file system is read inline")
		}
		if localFileSystem("/proc") {
			t.Error("procfs is taken for a local file system")
		}
	}
	remote := *c
	remote.local = false
	if remote.readsInline(f) {
		t.Error("a file under a root that is not local is read inline")
	}
}

// TestFSWriteInline: fs.write writes on the run's goroutine only to a
// local root's own file system.
func TestFSWriteInline(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var roots openRoots
	defer roots.close()
	c, err := roots.get(dir)
	if err != nil {
		t.Fatal(err)
	}
	if goruntime.GOOS == "linux" && localFileSystem(dir) {
		f, err := c.root.Stat("f")
		if err != nil {
			t.Fatal(err)
		}
		for rel, info := range map[string]os.FileInfo{"f": f, "new": nil, "a/b/new": nil} {
			if !c.writesInline(rel, info) {
				t.Errorf("%s under a local root is not written inline", rel)
			}
		}
	}
	remote := *c
	remote.local = false
	if remote.writesInline("new", nil) {
		t.Error("a file under a root that is not local is written inline")
	}

}
