package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// TestBatch streams two files into a batch over old versions of them and
// checks that nothing changes before Commit, that Commit puts both in
// place, and that no temporary file is left.
func TestBatch(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.json")
	workflow := filepath.Join(dir, "sub", "w.star")
	if err := os.WriteFile(report, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := NewBatch(0o600)
	defer b.Discard()
	err := b.Add(report, func(w io.Writer) error {
		for i := range 3 {
			if _, err := fmt.Fprintf(w, "part %d\n", i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddBytes(workflow, []byte("w")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBytes(workflow, []byte("again")); err == nil {
		t.Error("a file added twice was accepted")
	}
	// The duplicate gave the batch up: nothing was written.
	if got := readFile(t, report); got != "old" {
		t.Errorf("report before Commit = %q, want the old one", got)
	}
	if err := b.Commit(); err == nil {
		t.Error("Commit of a batch given up succeeded")
	}
	assertNoTemps(t, dir)

	b = NewBatch(0o600)
	if err := b.Add(report, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBytes(workflow, []byte("w")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, report); got != "old" {
		t.Errorf("report before Commit = %q, want the old one", got)
	}
	if _, err := os.Stat(workflow); !os.IsNotExist(err) {
		t.Errorf("workflow exists before Commit: %v", err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Discard() // after Commit: nothing to do
	if got := readFile(t, report); got != "new\n" {
		t.Errorf("report = %q, want the new one", got)
	}
	if got := readFile(t, workflow); got != "w" {
		t.Errorf("workflow = %q", got)
	}
	if fi, err := os.Stat(report); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("report mode = %v, %v; want 0600", fi.Mode(), err)
	}
	assertNoTemps(t, dir)
	assertNoTemps(t, filepath.Dir(workflow))
	if err := b.AddBytes(report, nil); err == nil {
		t.Error("Add after Commit succeeded")
	}
}

// TestBatchFailedWrite fails a stream halfway and checks that the error
// names the file and keeps its cause, and that no file of the batch, not
// even one added before, is written or left as a temporary file.
func TestBatchFailedWrite(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.star")
	report := filepath.Join(dir, "report.json")
	boom := errors.New("encoder failed")
	b := NewBatch(0o644)
	defer b.Discard()
	if err := b.AddBytes(first, []byte("a")); err != nil {
		t.Fatal(err)
	}
	err := b.Add(report, func(w io.Writer) error {
		if _, err := io.WriteString(w, `{"half":`); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), report) {
		t.Fatalf("Add = %v, want %v naming %s", err, boom, report)
	}
	if err := b.Commit(); err == nil {
		t.Error("Commit after a failed Add succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("a failed batch left %v", entries)
	}

	// Discard removes what was added.
	b = NewBatch(0o644)
	if err := b.AddBytes(first, []byte("a")); err != nil {
		t.Fatal(err)
	}
	b.Discard()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a discarded batch left %v", entries)
	}
}

// TestBatchDiscardRemovesCreatedDirs: directories a batch created for
// its files go when the batch is discarded or fails, deepest first, while
// a directory that existed before, or that something else wrote into,
// stays.
func TestBatchDiscardRemovesCreatedDirs(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "out")
	if err := os.Mkdir(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	b := NewBatch(0o644)
	for _, name := range []string{
		filepath.Join(existing, "report.json"),
		filepath.Join(existing, "workflows", "a", "workflow.star"),
		filepath.Join(existing, "workflows", "b", "workflow.star"),
		filepath.Join(dir, "evals", "pack.toml"),
	} {
		if err := b.AddBytes(name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	b.Discard()
	if got := tree(t, dir); got != "out/" {
		t.Errorf("after Discard the tree is %q, want only the directory that existed: out/", got)
	}

	// A directory someone else wrote into meanwhile is kept, with what
	// they wrote.
	b = NewBatch(0o644)
	if err := b.AddBytes(filepath.Join(existing, "workflows", "a", "workflow.star"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(existing, "workflows", "notes.txt")
	if err := os.WriteFile(other, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Discard()
	if got, want := tree(t, dir), "out/ out/workflows/ out/workflows/notes.txt"; got != want {
		t.Errorf("after Discard the tree is %q, want %q", got, want)
	}

	// A failed Add removes the directories too.
	b = NewBatch(0o644)
	boom := errors.New("encoder failed")
	if err := b.Add(filepath.Join(dir, "new", "deep", "report.json"), func(io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("Add = %v, want %v", err, boom)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !os.IsNotExist(err) {
		t.Errorf("a failed Add left the directory it created: %v", err)
	}

	// Commit keeps them.
	b = NewBatch(0o644)
	kept := filepath.Join(dir, "made", "here.json")
	if err := b.AddBytes(kept, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	b.Discard()
	if got := readFile(t, kept); got != "x" {
		t.Errorf("committed file = %q, want x", got)
	}
}

// tree lists the paths under dir, relative and slash-separated,
// directories with a trailing slash, in walk order.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(paths, " ")
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left in %s", e.Name(), dir)
		}
	}
}

// TestCreateSync: the file is created whole with its mode, its contents
// and directory synced; an existing file is left as it was and reported
// as os.ErrExist; no temporary file is left either way.
func TestCreateSync(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	var synced []string
	sync := func(f *os.File) error { synced = append(synced, filepath.Base(f.Name())); return f.Sync() }
	if err := CreateSync(p, []byte("first\n"), 0o600, sync); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("created file: %v, %v; want mode 0600", st, err)
	}
	if len(synced) != 2 || !strings.HasPrefix(synced[0], ".key.tmp") || synced[1] != filepath.Base(dir) {
		t.Errorf("synced %q, want the temporary file, then the directory", synced)
	}
	err := CreateSync(p, []byte("second\n"), 0o600, sync)
	if !errors.Is(err, os.ErrExist) {
		t.Errorf("creating an existing file = %v, want os.ErrExist", err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "first\n" {
		t.Errorf("existing file = %q, %v; want it unchanged", data, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
	if err := CreateSync(filepath.Join(dir, "missing", "key"), nil, 0o600, sync); err == nil {
		t.Error("created a file in a directory that does not exist")
	}
}
