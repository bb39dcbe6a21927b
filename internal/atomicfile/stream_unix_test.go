//go:build unix

package atomicfile

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fifo makes a named pipe in a test directory and returns its path and
// a channel that yields everything written through it.
func fifo(t *testing.T) (string, <-chan string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	return p, got
}

// TestWriteThroughStream: a destination that is a stream (here a named
// pipe; /dev/null and /dev/stdout alike) is written through, never
// renamed over, so it is still a stream afterwards and its reader gets
// the data. A rename would put a regular file in its place: run as root,
// --report /dev/null replaced the system's /dev/null.
func TestWriteThroughStream(t *testing.T) {
	p, got := fifo(t)
	if err := Write(p, []byte("report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s := read(t, got); s != "report\n" {
		t.Errorf("the pipe's reader got %q; want %q", s, "report\n")
	}
	assertStream(t, p)
}

// TestBatchThroughStream: a batch with a stream among its files writes
// the stream at Commit, leaves nothing beside it, and still renames its
// regular files into place.
func TestBatchThroughStream(t *testing.T) {
	p, got := fifo(t)
	regular := filepath.Join(filepath.Dir(p), "workflow.star")
	if err := WriteAll(map[string][]byte{p: []byte("{}\n"), regular: []byte("def w(ctx): pass\n")}, 0o644); err != nil {
		t.Fatal(err)
	}
	if s := read(t, got); s != "{}\n" {
		t.Errorf("the pipe's reader got %q; want %q", s, "{}\n")
	}
	assertStream(t, p)
	if b, err := os.ReadFile(regular); err != nil || string(b) != "def w(ctx): pass\n" {
		t.Errorf("workflow.star = %q, %v", b, err)
	}
	entries, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries, want the pipe and workflow.star: %v", len(entries), entries)
	}
}

// read is what the pipe's reader got, or a failure when nothing came
// through the pipe.
func read(t *testing.T, got <-chan string) string {
	t.Helper()
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was written through the pipe")
		return ""
	}
}

func assertStream(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is %v after the write; want the named pipe it was", p, fi.Mode())
	}
}

// TestBatchStreamFailsFirst: the streams of a batch are written before
// any file is renamed into place, so a stream that cannot be written
// (here a socket, which no open reaches) fails the batch with its name
// and leaves every regular destination as it was, even one that sorts
// before the stream.
func TestBatchStreamFailsFirst(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "z.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix sockets here: %v", err)
	}
	defer l.Close()
	regular := filepath.Join(dir, "a.star")
	err = WriteAll(map[string][]byte{regular: []byte("def w(ctx): pass\n"), sock: []byte("{}\n")}, 0o644)
	if err == nil || !strings.Contains(err.Error(), "writing "+sock) {
		t.Fatalf("WriteAll = %v; want an error writing %s", err, sock)
	}
	if _, err := os.Lstat(regular); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after the failed batch: %v; want it never written", regular, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %v; want only the socket", entries)
	}
	if fi, err := os.Lstat(sock); err != nil || fi.Mode()&os.ModeSocket == 0 {
		t.Errorf("%s is %v, %v after the batch; want the socket it was", sock, fi, err)
	}
}
