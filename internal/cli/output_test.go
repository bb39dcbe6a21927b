package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteFilesAllOrNothing makes the last of three files impossible to
// write and checks that none is left behind, not even a temporary one.
func TestWriteFilesAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("a file where a directory is needed"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		filepath.Join(dir, "a.star"):            []byte("a"),
		filepath.Join(dir, "b.json"):            []byte("b"),
		filepath.Join(blocker, "sub", "c.json"): []byte("c"),
	}
	if err := writeFiles(files); err == nil {
		t.Fatal("writeFiles succeeded with an unwritable destination")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "blocker" {
			t.Errorf("left behind: %s", e.Name())
		}
	}

	ok := map[string][]byte{filepath.Join(dir, "x", "a.star"): []byte("a"), filepath.Join(dir, "b.json"): []byte("b")}
	if err := writeFiles(ok); err != nil {
		t.Fatal(err)
	}
	for p, want := range ok {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		input int64
		want  int64
	}{
		{0, 896 << 20},
		{220 << 20, 896 << 20},
		{2200 << 20, 4 * (2200 << 20)},
	}
	for _, tt := range tests {
		if got := memoryLimit(tt.input); got != tt.want {
			t.Errorf("memoryLimit(%d) = %d, want %d", tt.input, got, tt.want)
		}
	}
}
