package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAllAllOrNothing makes the last of three files impossible to
// write and checks that none is left behind, not even a temporary one;
// then writes two files into a directory that does not exist yet.
func TestWriteAllAllOrNothing(t *testing.T) {
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
	if err := WriteAll(files, 0o644); err == nil {
		t.Fatal("WriteAll succeeded with an unwritable destination")
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
	if err := WriteAll(ok, 0o644); err != nil {
		t.Fatal(err)
	}
	for p, want := range ok {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s = %q, %v; want %q", p, got, err, want)
		}
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, %v; want 0644", p, st.Mode().Perm(), err)
		}
	}
}

// TestWriteDurable checks that Write syncs the file and its directory,
// keeps the mode asked for, and leaves the old file in place when the
// sync fails.
func TestWriteDurable(t *testing.T) {
	var synced []string
	sync := SyncFile
	t.Cleanup(func() { SyncFile = sync })
	SyncFile = func(f *os.File) error { synced = append(synced, filepath.Base(f.Name())); return sync(f) }

	dir := t.TempDir()
	p := filepath.Join(dir, "journal.json")
	if err := Write(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 2 || synced[1] != filepath.Base(dir) {
		t.Errorf("synced %q, want the temporary file then the directory", synced)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", st.Mode().Perm(), err)
	}

	SyncFile = func(*os.File) error { return errors.New("disk full") }
	if err := Write(p, []byte("lost"), 0o600); err == nil {
		t.Fatal("Write succeeded although the sync failed")
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Errorf("after a failed write the file holds %q, want the old contents", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("a failed write left %d entries, want only the file", len(entries))
	}
}

// BenchmarkWriteAll writes what a mining run writes (a workflow, a report
// and a few candidate workflows), synced, to measure what durability
// costs a run.
func BenchmarkWriteAll(b *testing.B) {
	b.Run("synced", func(b *testing.B) { benchmarkWriteAll(b) })
	// Without the syncs: what the command line's writer did before.
	b.Run("unsynced", func(b *testing.B) {
		sync := SyncFile
		b.Cleanup(func() { SyncFile = sync })
		SyncFile = func(*os.File) error { return nil }
		benchmarkWriteAll(b)
	})
}

func benchmarkWriteAll(b *testing.B) {
	dir := b.TempDir()
	files := map[string][]byte{
		filepath.Join(dir, "workflow.star"): make([]byte, 4<<10),
		filepath.Join(dir, "report.json"):   make([]byte, 256<<10),
	}
	for i := range 4 {
		files[filepath.Join(dir, "wf", fmt.Sprintf("c%d.star", i))] = make([]byte, 4<<10)
	}
	for b.Loop() {
		if err := WriteAll(files, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}
