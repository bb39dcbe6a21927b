package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileLimit pins the session-log limit docs/security.md promises:
// a log of exactly MaxFileBytes is read, one byte more is refused with the
// file's name, and a directory (not a regular file) is refused unread.
func TestReadFileLimit(t *testing.T) {
	dir := t.TempDir()
	sized := func(name string, n int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		// A sparse file: the size is what is checked, not the content.
		if err := f.Truncate(n); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}

	at := sized("at.md", MaxFileBytes)
	if data, err := ReadFile(at); err != nil || len(data) != MaxFileBytes {
		t.Errorf("ReadFile(%d bytes) = %d bytes, %v; want all of it", MaxFileBytes, len(data), err)
	}
	over := sized("over.md", MaxFileBytes+1)
	if _, err := ReadFile(over); err == nil || !strings.Contains(err.Error(), over) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("ReadFile(%d bytes) = %v, want an error naming %s and the limit", MaxFileBytes+1, err, over)
	}
	if _, err := ReadFile(dir); err == nil {
		t.Errorf("ReadFile(directory) = nil error, want it refused")
	}
}

func TestLint(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.md")
	bad := filepath.Join(dir, "bad.md")
	if err := os.WriteFile(good, []byte("---\ntype: session\nsession_id: s1\nstatus: completed\ntokens_used: 0\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("---\ntype: session\nstatus: finished\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if list, err := Lint(good); err != nil || len(list) != 0 {
		t.Errorf("Lint(good) = %v, %v; want no problems", list, err)
	}
	if list, err := Lint(bad); err != nil || len(list) < 2 {
		t.Errorf("Lint(bad) = %v, %v; want the missing session_id and the unknown status", list, err)
	}
	if _, err := Lint(filepath.Join(dir, "missing.md")); err == nil {
		t.Error("Lint of a missing file succeeded")
	}
}
