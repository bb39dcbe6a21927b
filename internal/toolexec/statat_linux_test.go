package toolexec

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLstatAt: the check's fstatat from the root's descriptor says what
// os.Lstat says of each kind of file, and its infos compare by identity
// with os.Stat's (sameFile, sameDevice), as the protected set and the
// read by identity compare them.
func TestLstatAt(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"sub/deeper"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"f", "sub/deeper/g", "other"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "sub"), 0o755|os.ModeSetgid|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for _, rel := range []string{"f", "sub", "sub/deeper", "sub/deeper/g", "link", "fifo"} {
		got, err := lstatAt(fd, rel)
		if err != nil {
			t.Fatalf("lstatAt(%s) = %v", rel, err)
		}
		want, err := os.Lstat(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if got.Mode() != want.Mode() || got.Name() != want.Name() || got.Size() != want.Size() || !got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("lstatAt(%s) = %v %s %d %v, os.Lstat = %v %s %d %v", rel, got.Mode(), got.Name(), got.Size(), got.ModTime(), want.Mode(), want.Name(), want.Size(), want.ModTime())
		}
		if !sameFile(got, want) || !sameFile(want, got) || !sameDevice(got, want) {
			t.Errorf("lstatAt(%s) is not the same file as os.Lstat's", rel)
		}
	}
	f, _ := lstatAt(fd, "f")
	other, _ := os.Stat(filepath.Join(dir, "other"))
	if sameFile(f, other) {
		t.Error("two files compare as one")
	}
	if viaLink, _ := os.Stat(filepath.Join(dir, "link")); !sameFile(f, viaLink) {
		t.Error("a file and os.Stat through a symlink to it compare as two")
	}
	if _, err := lstatAt(fd, "missing"); !os.IsNotExist(err) {
		t.Errorf("lstatAt(missing) = %v, want not exist", err)
	}
}
