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
