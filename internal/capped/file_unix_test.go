//go:build unix

package capped

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadFileRefusesSpecialFiles: a FIFO is refused without waiting
// for a writer, /dev/zero without reading it, a directory too.
func TestReadFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	for _, name := range []string{fifo, "/dev/zero", dir} {
		if _, err := os.Stat(name); err != nil {
			continue
		}
		done := make(chan error, 1)
		go func() { _, err := ReadFile(name, 1<<20); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) hangs", name)
		}
	}
}

// TestReadFileInRoot: a file under the directory is read; a name that
// climbs out, an absolute one and a symbolic link out are refused.
func TestReadFileInRoot(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "exp")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "in.csv"), []byte("a\n1\n"), 0o644)
	os.WriteFile(filepath.Join(top, "secret"), []byte("key"), 0o644)
	os.Symlink(filepath.Join(top, "secret"), filepath.Join(dir, "link"))
	if data, err := ReadFileInRoot(dir, "sub/in.csv", 100); err != nil || string(data) != "a\n1\n" {
		t.Errorf("ReadFileInRoot(sub/in.csv) = %q, %v", data, err)
	}
	for _, name := range []string{"../secret", filepath.Join(top, "secret"), "link"} {
		if data, err := ReadFileInRoot(dir, name, 100); err == nil {
			t.Errorf("ReadFileInRoot(%s) = %q, want an error: it is outside %s", name, data, dir)
		}
	}
}
