package toolexec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// TestReadBeneath: the descriptor read of fs.read's fast path reads a
// file only when it is the regular file the check looked at, reached
// beneath the root without a symlink, and otherwise reads nothing; with
// openat2 and without it.
func TestReadBeneath(t *testing.T) {
	for _, withOpenat2 := range []bool{true, false} {
		name := "openat2"
		if !withOpenat2 {
			name = "openat"
		}
		t.Run(name, func(t *testing.T) {
			saved := noOpenat2.Load()
			noOpenat2.Store(!withOpenat2)
			t.Cleanup(func() { noOpenat2.Store(saved) })
			testReadBeneath(t, withOpenat2)
		})
	}
}

func testReadBeneath(t *testing.T, withOpenat2 bool) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(root, "f.txt"), []byte("hello\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "sub", "g.txt"), []byte("nested"), 0o644))
	must(os.WriteFile(filepath.Join(root, "empty"), nil, 0o644))
	must(os.WriteFile(filepath.Join(parent, "outside.txt"), []byte("secret"), 0o644))
	must(os.Symlink(filepath.Join(root, "f.txt"), filepath.Join(root, "link")))
	must(os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "sublink")))
	must(os.Symlink(parent, filepath.Join(root, "up")))
	rinfo, err := os.Stat(root)
	must(err)
	fd := openDirFD(root, rinfo)
	if fd < 0 {
		t.Fatal("openDirFD opened nothing")
	}
	defer closeDirFD(fd)
	lstat := func(p string) os.FileInfo {
		t.Helper()
		info, err := os.Lstat(p)
		must(err)
		return info
	}
	f := lstat(filepath.Join(root, "f.txt"))
	g := lstat(filepath.Join(root, "sub", "g.txt"))
	outside := lstat(filepath.Join(parent, "outside.txt"))

	if data, ok := readBeneath(fd, "f.txt", f); !ok || string(data) != "hello\n" {
		t.Errorf("f.txt = %q, %v", data, ok)
	}
	if data, ok := readBeneath(fd, "empty", lstat(filepath.Join(root, "empty"))); !ok || len(data) != 0 {
		t.Errorf("empty = %q, %v", data, ok)
	}
	data, ok := readBeneath(fd, "sub/g.txt", g)
	if withOpenat2 && (!ok || string(data) != "nested") {
		t.Errorf("sub/g.txt = %q, %v", data, ok)
	}
	if !withOpenat2 && ok {
		t.Error("sub/g.txt was read without openat2, which only confines a single name")
	}
	for _, c := range []struct {
		why, rel string
		want     os.FileInfo
	}{
		{"another file than the one checked", "f.txt", g},
		{"a symlink to the checked file", "link", f},
		{"a path through a symlinked directory", "sublink/g.txt", g},
		{"a path climbing out with ..", "../outside.txt", outside},
		{"a path through a symlink out of the root", "up/outside.txt", outside},
		{"an absolute path", filepath.Join(parent, "outside.txt"), outside},
		{"a missing file", "missing", f},
		{"a directory", "sub", lstat(filepath.Join(root, "sub"))},
	} {
		if data, ok := readBeneath(fd, c.rel, c.want); ok {
			t.Errorf("%s (%s) was read: %q", c.why, c.rel, data)
		}
	}

	// The root's descriptor stays on the directory it opened: a symlink
	// put in the root's place after it was opened leads nowhere else.
	must(os.Rename(root, filepath.Join(parent, "old")))
	must(os.Symlink(parent, root))
	if data, ok := readBeneath(fd, "outside.txt", outside); ok {
		t.Errorf("outside.txt was read through the replaced root: %q", data)
	}
	if data, ok := readBeneath(fd, "f.txt", f); !ok || string(data) != "hello\n" {
		t.Errorf("f.txt of the directory opened = %q, %v", data, ok)
	}
	must(os.Remove(root))
	must(os.Rename(filepath.Join(parent, "old"), root))

	// The file checked, then replaced: by a directory, a FIFO, a larger
	// file.
	must(os.Remove(filepath.Join(root, "f.txt")))
	must(os.Mkdir(filepath.Join(root, "f.txt"), 0o755))
	if data, ok := readBeneath(fd, "f.txt", f); ok {
		t.Errorf("a directory in the checked file's place was read: %q", data)
	}
	must(os.Remove(filepath.Join(root, "f.txt")))
	if err := syscall.Mkfifo(filepath.Join(root, "f.txt"), 0o644); err == nil {
		done := make(chan bool, 1)
		go func() { _, ok := readBeneath(fd, "f.txt", f); done <- ok }()
		select {
		case ok := <-done:
			if ok {
				t.Error("a FIFO in the checked file's place was read")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a FIFO in the checked file's place blocked the read")
		}
		must(os.Remove(filepath.Join(root, "f.txt")))
	}
	big := filepath.Join(root, "big")
	must(os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644))
	if _, ok := readBeneath(fd, "big", lstat(big)); ok {
		t.Error("a file larger than MaxFileBytes was read")
	}
}

// TestOpenBeneathFallback: without openat2, a single name is opened with
// O_NOFOLLOW and a path of several names is left to os.Root.
func TestOpenBeneathFallback(t *testing.T) {
	saved := noOpenat2.Load()
	noOpenat2.Store(true)
	t.Cleanup(func() { noOpenat2.Store(saved) })
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dir)
	fd, err := openBeneath(dir, "f", unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if _, err := openBeneath(dir, "link", unix.O_RDONLY); !errors.Is(err, unix.ELOOP) {
		t.Errorf("a symlink opened: %v", err)
	}
	if _, err := openBeneath(dir, "a/f", unix.O_RDONLY); !errors.Is(err, unix.ENOSYS) {
		t.Errorf("a path of several names = %v, want ENOSYS", err)
	}
}

// TestFSReadChecked: once its root is open, fs.read reads the file the
// protected-set check looked at through the root's descriptor; a file
// swapped after the check, or a path the check resolved through a
// symlink, is left to os.Root.
func TestFSReadChecked(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "ws")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"ws/f.txt": "one", "ws/sub/g.txt": "two", "ws/other": "other", "outside.txt": "secret"} {
		if err := os.WriteFile(filepath.Join(parent, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !localFileSystem(root) {
		t.Skip("the temporary directory is not on a file system known to be local")
	}
	cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.read"}}}
	e := New(context.Background(), cfg, Settings{StateDir: filepath.Join(parent, ".crystallize")})
	defer e.CloseRoots()
	args := func(p string) map[string]any { return map[string]any{"path": p} }
	if _, err := e.fsRead("fs.read", args("f.txt")); err != nil { // opens the root
		t.Fatal(err)
	}
	fast := func(p string) (any, bool) {
		t.Helper()
		if err := e.GuardPath(runconfig.ToolFSRead, args(p)); err != nil {
			t.Fatal(err)
		}
		return fsReadChecked(p, e.takeChecked(p))
	}
	for p, want := range map[string]string{"f.txt": "one", "sub/g.txt": "two", filepath.Join(root, "sub", "g.txt"): "two"} {
		out, ok := fast(p)
		if !ok {
			t.Errorf("%s was not read from the check", p)
			continue
		}
		if got := out.(map[string]any)["content"]; got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	// A check is used once, and only for its own path.
	if err := e.GuardPath(runconfig.ToolFSRead, args("f.txt")); err != nil {
		t.Fatal(err)
	}
	if _, ok := fsReadChecked("sub/g.txt", e.takeChecked("sub/g.txt")); ok {
		t.Error("the check of f.txt read sub/g.txt")
	}
	if _, ok := fsReadChecked("f.txt", e.takeChecked("f.txt")); ok {
		t.Error("a check was used twice")
	}

	// Swapped between the check and the read: another file renamed over
	// it, or a symlink out of the root. fs.read then goes through os.Root.
	if err := e.GuardPath(runconfig.ToolFSRead, args("f.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "other"), filepath.Join(root, "f.txt")); err != nil {
		t.Fatal(err)
	}
	if out, ok := fsReadChecked("f.txt", e.takeChecked("f.txt")); ok {
		t.Errorf("a file renamed over the checked one was read from the check: %v", out)
	}
	if err := e.GuardPath(runconfig.ToolFSRead, args("sub/g.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(parent, "sub-old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(parent, filepath.Join(root, "sub")); err != nil {
		t.Fatal(err)
	}
	if out, ok := fsReadChecked("sub/g.txt", e.takeChecked("sub/g.txt")); ok {
		t.Errorf("a path whose directory became a symlink was read from the check: %v", out)
	}
	// Through a symlink, the check resolves the path itself and leaves no
	// file to read by identity.
	if err := e.GuardPath(runconfig.ToolFSRead, args("sub/outside.txt")); err != nil {
		t.Fatal(err)
	}
	if out, ok := fsReadChecked("sub/outside.txt", e.takeChecked("sub/outside.txt")); ok {
		t.Errorf("a path through a symlink was read from the check: %v", out)
	}
	if _, err := e.fsRead("fs.read", args("sub/outside.txt")); !errors.Is(err, ErrOutsideWorkspace) {
		t.Errorf("sub/outside.txt through a symlink out of the root = %v, want ErrOutsideWorkspace", err)
	}
}
