package toolexec

import (
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

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

// TestPinRootChanged: a root whose path leads to another directory
// between its open and the resolution of its real path is opened again,
// and refused with ErrRootChanged, naming it, when that happens every
// time; nothing is pinned then.
func TestPinRootChanged(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(parent, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(parent, "a"), root); err != nil {
		t.Skip("no symlinks here")
	}
	flip := func(string) {
		target, _ := os.Readlink(root)
		next := filepath.Join(parent, "a")
		if target == next {
			next = filepath.Join(parent, "b")
		}
		os.Remove(root)
		if err := os.Symlink(next, root); err != nil {
			t.Fatal(err)
		}
	}
	var always openRoots
	defer always.close()
	always.opened = flip
	if _, err := always.get(root); !errors.Is(err, ErrRootChanged) || !strings.Contains(err.Error(), root) {
		t.Errorf("a root re-pointed at every open = %v, want ErrRootChanged naming it", err)
	}
	if len(always.open) != 0 {
		t.Error("a root that could not be pinned was kept")
	}

	var once openRoots
	defer once.close()
	flipped := false
	once.opened = func(dir string) {
		if !flipped {
			flipped = true
			flip(dir)
		}
	}
	c, err := once.get(root)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := os.Stat(root)
	if !os.SameFile(c.info, now) || c.real != realPath(root) {
		t.Errorf("the root pinned after one re-pointing is %s, not the directory at its path", c.real)
	}
}
