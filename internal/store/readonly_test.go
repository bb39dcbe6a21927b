package store

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// makeReadOnly takes the write permission off path and its directory,
// and gives it back when the test ends so that the directory can be
// removed. A process running as root writes them all the same: Writable
// reads the permission bits as well as access(2) so that such a copy is
// still opened read-only, and SQLite's read-only mode (OpenReadOnly's
// mode=ro) is then what refuses every write.
func makeReadOnly(t *testing.T, path string) {
	t.Helper()
	dir := filepath.Dir(path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Chmod(dir, 0o755)
		os.Chmod(path, 0o644)
	})
}

// TestOpenReadOnly: a database in a read-only directory is not Writable,
// opens with OpenReadOnly and reads as it was written, refuses every
// write with ErrReadOnly, and is left byte for byte as it was.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state", "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := db.BeginTraceImport(ctx, "/corpus", "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutTraces(ctx, imp, []StoredTrace{storedTrace("a", "h1", "a.json", "x", "y")}); err != nil {
		t.Fatal(err)
	}
	if !Writable(path) {
		t.Fatalf("Writable(%s) = false before it was made read-only", path)
	}
	db.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	makeReadOnly(t, path)
	if Writable(path) {
		t.Fatalf("Writable(%s) = true in a read-only directory", path)
	}
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if !ro.ReadOnly() {
		t.Error("ReadOnly() = false for a database opened read-only")
	}
	idx, err := ro.TraceIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Traces) != 1 || idx.Traces[0].TraceID != "a" {
		t.Errorf("read-only index = %+v, want trace a", idx.Traces)
	}
	writes := map[string]error{}
	writes["PutVerdicts"] = ro.PutVerdicts(ctx, []StoredVerdict{{Candidate: "c", SourceHash: "h1", Passed: true, Example: []byte("{}")}})
	_, writes["InterruptStaleTraceImports"] = ro.InterruptStaleTraceImports(ctx, "2026-01-02T00:00:00Z")
	_, writes["BeginTraceImport"] = ro.BeginTraceImport(ctx, "/other", "")
	writes["SetTraceFlags"] = ro.SetTraceFlags(ctx, map[int64][]byte{idx.Traces[0].Seq: {0, 0}})
	for name, err := range writes {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only database: err = %v, want ErrReadOnly", name, err)
		}
	}
	ro.Close()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the read-only database's file changed")
	}
}

// TestWriteToReadOnlyFile: a database opened for writing whose writes
// SQLite refuses (here: opened read-write, then its connection made
// read-only, as a file system remounted read-only would) reports
// ErrReadOnly and counts as ReadOnly from then on.
func TestWriteToReadOnlyFile(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.db.ExecContext(ctx, `PRAGMA query_only = 1`); err != nil {
		t.Fatal(err)
	}
	err = db.PutVerdicts(ctx, []StoredVerdict{{Candidate: "c", SourceHash: "h", Example: []byte("{}")}})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write refused by SQLite: err = %v, want ErrReadOnly", err)
	}
	if !db.ReadOnly() {
		t.Error("ReadOnly() = false after SQLite refused a write")
	}
}

// TestOpenReadOnlySchema7: a database of schema 7 (before imports
// recorded their process's start) is read as it is: reads select nothing
// migration 8 added, and a stale import is not marked there.
func TestOpenReadOnlySchema7(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	released := migrations
	migrations = migrations[:7]
	db, err := Open(ctx, path)
	migrations = released
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `INSERT INTO trace_imports (root, started_at, status) VALUES ('/old', '', 'running')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	st, err := ro.TraceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.LastImport == nil || st.LastImport.Status != ImportRunning {
		t.Errorf("last import of a schema 7 database read-only: %+v, want /old running", st.LastImport)
	}
	if _, err := ro.TraceIndex(ctx); err != nil {
		t.Error(err)
	}
	if _, err := ro.InterruptStaleTraceImports(ctx, "2026-01-02T00:00:00Z"); !errors.Is(err, ErrReadOnly) {
		t.Errorf("marking stale imports read-only: err = %v, want ErrReadOnly", err)
	}
}

// TestOpenReadOnlyOlderSchema: a read-only database of a schema older
// than reads need cannot be migrated, and says so rather than failing on
// a missing table later.
func TestOpenReadOnlyOlderSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `UPDATE schema_version SET version = 6`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = OpenReadOnly(ctx, path)
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("cannot be migrated")) {
		t.Errorf("OpenReadOnly of schema 6: err = %v, want one saying it cannot be migrated", err)
	}
}
