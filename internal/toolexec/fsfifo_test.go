//go:build unix

package toolexec

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenNonBlockingFIFO: fs.read's open of a FIFO, which the check
// before it refuses unless one is swapped in between, does not wait for
// a writer, so the check after it refuses it.
func TestOpenNonBlockingFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		f, err := r.OpenFile("pipe", os.O_RDONLY|openNonBlocking, 0)
		if err == nil {
			st, serr := f.Stat()
			if serr == nil && st.Mode().IsRegular() {
				t.Error("a FIFO stats as a regular file")
			}
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("opening a FIFO blocked")
	}
}

// TestWriteFileInFIFO: fs.write's open of a FIFO swapped in after the
// check neither waits for a reader nor writes into it, with a reader or
// without one.
func TestWriteFileInFIFO(t *testing.T) {
	dir := t.TempDir()
	var roots openRoots
	defer roots.close()
	c, err := roots.get(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	write := func(withReader bool) {
		t.Helper()
		done := make(chan error, 1)
		go func() {
			if withReader {
				r, err := os.OpenFile(filepath.Join(dir, "pipe"), os.O_RDONLY|syscall.O_NONBLOCK, 0)
				if err != nil {
					done <- err
					return
				}
				defer r.Close()
			}
			_, err := writeFileIn(c.root, "pipe", "pipe", "data")
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("fs.write wrote into a FIFO (reader: %v)", withReader)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("fs.write blocked on a FIFO (reader: %v)", withReader)
		}
	}
	write(false)
	write(true)
}
