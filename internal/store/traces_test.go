package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func storedTrace(id, hash, path string, sigs ...string) StoredTrace {
	return StoredTrace{TraceID: id, SourceHash: hash, OriginPath: path, Actions: len(sigs), Summary: "{}", Signatures: sigs, Body: []byte(`{"id":"` + id + `"}`)}
}

// TestPutTracesKeys checks the store's identity rules: a trace already
// stored is a duplicate, a changed one from the same place replaces it
// (and its document), and one id from two places is a conflict that
// stores nothing of its batch.
func TestPutTracesKeys(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	imp, err := db.BeginTraceImport(ctx, "/corpus", "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	res, err := db.PutTraces(ctx, imp, []StoredTrace{
		storedTrace("a", "h1", "a.json", "x", "y"),
		storedTrace("b", "h2", "b.json", "y", "z"),
		storedTrace("a", "h1", "a.json", "x", "y"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res != (PutResult{Added: 2, Duplicates: 1}) {
		t.Errorf("first batch: %+v", res)
	}
	res, err = db.PutTraces(ctx, imp, []StoredTrace{storedTrace("b", "h3", "b.json", "z")})
	if err != nil {
		t.Fatal(err)
	}
	if res != (PutResult{Replaced: 1}) {
		t.Errorf("changed trace: %+v", res)
	}
	_, err = db.PutTraces(ctx, imp, []StoredTrace{storedTrace("c", "h4", "c.json"), storedTrace("a", "h5", "other.json")})
	if !errors.Is(err, ErrTraceConflict) {
		t.Fatalf("one id from two places: err = %v, want ErrTraceConflict", err)
	}
	idx, err := db.TraceIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.Traces) != 2 || idx.Traces[0].TraceID != "a" || idx.Traces[1].SourceHash != "h3" {
		t.Fatalf("stored traces: %+v", idx.Traces)
	}
	var sigs []string
	for _, s := range idx.Traces[1].Symbols {
		sigs = append(sigs, idx.Signatures[s])
	}
	if len(sigs) != 1 || sigs[0] != "z" {
		t.Errorf("replaced trace's signatures = %v, want [z]", sigs)
	}
	var bodies int
	if err := db.db.QueryRow(`SELECT count(*) FROM trace_bodies`).Scan(&bodies); err != nil || bodies != 2 {
		t.Errorf("bodies = %d, %v; the replaced trace's document must go with it", bodies, err)
	}
}

// TestGCTraces leaves an unreferenced document, an unused signature and a
// failed import behind, and checks that gc removes exactly those.
func TestGCTraces(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	imp, _ := db.BeginTraceImport(ctx, "/corpus", "")
	if _, err := db.PutTraces(ctx, imp, []StoredTrace{storedTrace("a", "h1", "a.json", "x", "y")}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishTraceImport(ctx, imp, ImportComplete, "", 0); err != nil {
		t.Fatal(err)
	}
	failed, _ := db.BeginTraceImport(ctx, "/other", "")
	if _, err := db.PutTraces(ctx, failed, []StoredTrace{storedTrace("b", "h2", "b.json", "z")}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishTraceImport(ctx, failed, ImportFailed, "", 0); err != nil {
		t.Fatal(err)
	}
	// A document no trace refers to, as a hand-edited database might
	// hold.
	if _, err := db.db.Exec(`INSERT INTO trace_bodies (body) VALUES ('{}')`); err != nil {
		t.Fatal(err)
	}
	gc, err := db.GCTraces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gc.Bodies != 1 || gc.Signatures != 1 || gc.Imports != 1 {
		t.Errorf("gc removed %d bodies, %d signatures, %d imports; want 1, 1 (z), 1 (the failed import)", gc.Bodies, gc.Signatures, gc.Imports)
	}
	st, err := db.TraceStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Traces != 1 || st.Signatures != 2 || st.Imports != 1 {
		t.Errorf("after gc: %+v", st)
	}
	if ok, err := db.IntegrityCheck(ctx); ok != "ok" || err != nil {
		t.Errorf("integrity check: %q, %v", ok, err)
	}
}

// TestTraceFlags checks that the action flags a batch gives are read
// back, that a trace stored before the store kept flags (migration 5
// leaves them NULL) reads back without them, and that SetTraceFlags
// records them.
func TestTraceFlags(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	// A database at schema 4, holding a trace, as a crystallize from
	// before migration 5 left it.
	released := migrations
	migrations = migrations[:4]
	old, err := Open(ctx, path)
	migrations = released
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.db.ExecContext(ctx, `INSERT INTO trace_imports (root, started_at, status) VALUES ('/corpus', '', 'complete');
		INSERT INTO trace_bodies (id, body) VALUES (1, '{"id":"old"}');
		INSERT INTO traces (trace_id, source_hash, origin_path, origin_line, actions, bytes, excluded, summary, symbols, body_id, import_id, replaced)
		VALUES ('old', 'h0', 'old.json', 0, 0, 12, 0, '{}', x'', 1, 1, 0)`); err != nil {
		t.Fatal(err)
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	imp, err := db.BeginTraceImport(ctx, "/corpus", "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	flagged := storedTrace("a", "h1", "a.json", "x", "y", "z")
	flagged.Flags = []byte{1, 0, 6}
	excluded := storedTrace("b", "h2", "b.json")
	excluded.Excluded = true
	if _, err := db.PutTraces(ctx, imp, []StoredTrace{flagged, excluded}); err != nil {
		t.Fatal(err)
	}
	idx, err := db.TraceIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]TraceRow{}
	for _, r := range idx.Traces {
		byID[r.TraceID] = r
	}
	if r := byID["old"]; r.HasFlags || len(r.Flags) != 0 {
		t.Errorf("trace stored before flags: HasFlags %v, flags %v", r.HasFlags, r.Flags)
	}
	if r := byID["a"]; !r.HasFlags || string(r.Flags) != "\x01\x00\x06" {
		t.Errorf("flagged trace: HasFlags %v, flags %v", r.HasFlags, r.Flags)
	}
	if r := byID["b"]; !r.HasFlags || len(r.Flags) != 0 {
		t.Errorf("excluded trace: HasFlags %v, flags %v", r.HasFlags, r.Flags)
	}

	if err := db.SetTraceFlags(ctx, map[int64][]byte{byID["old"].Seq: {}, 999: {1}}); err != nil {
		t.Fatal(err)
	}
	idx, err = db.TraceIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range idx.Traces {
		if !r.HasFlags {
			t.Errorf("trace %s: no flags after SetTraceFlags", r.TraceID)
		}
	}
}

// TestGCSparesRunningImport checks that gc does not remove the record of
// an import that has not committed its first batch yet: the import goes
// on and completes.
func TestGCSparesRunningImport(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	imp, err := db.BeginTraceImport(ctx, "/corpus", "")
	if err != nil {
		t.Fatal(err)
	}
	gc, err := db.GCTraces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gc.Imports != 0 {
		t.Errorf("gc removed %d imports while one was running", gc.Imports)
	}
	if _, err := db.PutTraces(ctx, imp, []StoredTrace{storedTrace("a", "h1", "a.json", "x")}); err != nil {
		t.Fatalf("the running import after gc: %v", err)
	}
	if err := db.FinishTraceImport(ctx, imp, ImportComplete, "", 0); err != nil {
		t.Fatal(err)
	}
}

// TestFailedImportKeepsReplacement checks that a failed import removes the
// traces it added but keeps the new version of a trace it replaced, whose
// old version its batch already removed.
func TestFailedImportKeepsReplacement(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	first, _ := db.BeginTraceImport(ctx, "/corpus", "")
	if _, err := db.PutTraces(ctx, first, []StoredTrace{storedTrace("a", "h1", "a.json", "x")}); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishTraceImport(ctx, first, ImportComplete, "", 0); err != nil {
		t.Fatal(err)
	}
	second, _ := db.BeginTraceImport(ctx, "/corpus", "")
	res, err := db.PutTraces(ctx, second, []StoredTrace{
		storedTrace("a", "h1-grown", "a.json", "x", "y"),
		storedTrace("b", "h2", "b.json", "z"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced != 1 || res.Added != 1 {
		t.Fatalf("put: %+v, want 1 replaced, 1 added", res)
	}
	if err := db.FinishTraceImport(ctx, second, ImportFailed, "", 0); err != nil {
		t.Fatal(err)
	}
	var hash string
	if err := db.db.QueryRow(`SELECT source_hash FROM traces WHERE trace_id = 'a'`).Scan(&hash); err != nil {
		t.Fatalf("trace a after the failed import: %v", err)
	}
	if hash != "h1-grown" {
		t.Errorf("trace a has source hash %s, want the replacement's h1-grown", hash)
	}
	var n int
	if err := db.db.QueryRow(`SELECT count(*) FROM traces WHERE trace_id = 'b'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("trace b, which the failed import added: %d rows (%v), want 0", n, err)
	}
}

// TestStaleTraceImports: an import whose process is gone (killed before
// it recorded its end), or recorded before the store kept processes, is
// marked interrupted with the traces it committed counted; one whose
// process lives stays running.
func TestStaleTraceImports(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	// A database at schema 5 with a running import: pid 0 once migrated.
	released := migrations
	migrations = migrations[:5]
	old, err := Open(ctx, path)
	migrations = released
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.db.ExecContext(ctx, `INSERT INTO trace_imports (root, started_at, status) VALUES ('/old', '', 'running')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	if _, err := db.BeginTraceImport(ctx, "/live", ""); err != nil {
		t.Fatal(err)
	}
	dead, err := db.BeginTraceImport(ctx, "/dead", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.PutTraces(ctx, dead, []StoredTrace{storedTrace("a", "h1", "a.json", "x")}); err != nil {
		t.Fatal(err)
	}
	// A process that has ended: its id names nothing now.
	exited := exec.Command(os.Args[0], "-test.run=^$")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.ExecContext(ctx, `UPDATE trace_imports SET pid = ? WHERE id = ?`, exited.Process.Pid, dead); err != nil {
		t.Fatal(err)
	}
	n, err := db.InterruptStaleTraceImports(ctx, "2026-01-02T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	list, err := db.TraceImports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, im := range list {
		got[im.Root] = fmt.Sprintf("%s %d %s", im.Status, im.Added, im.FinishedAt)
	}
	want := map[string]string{
		"/old":  "interrupted 0 2026-01-02T00:00:00Z",
		"/live": "running 0 ",
		"/dead": "interrupted 1 2026-01-02T00:00:00Z",
	}
	if n != 2 || !maps.Equal(got, want) {
		t.Errorf("marked %d: imports %v, want 2: %v", n, got, want)
	}
}

// TestSkippedSessionsKeyedByFile: a skipped session is one row per file
// and session whatever path names the file, and a row stored before
// schema 6 (keyed by its path) is replaced by the same path's next
// import.
func TestSkippedSessionsKeyedByFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	released := migrations
	migrations = migrations[:5]
	old, err := Open(ctx, path)
	migrations = released
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.db.ExecContext(ctx, `INSERT INTO trace_imports (root, started_at, status) VALUES ('/w/logs', '', 'complete');
		INSERT INTO trace_skipped_sessions (path, line, format, session_id, reason, message, import_id)
		VALUES ('logs/q.jsonl', 1, 'claude', 'q1', 'no_tool_calls', 'old', 1)`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := db.SkippedSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].File != "logs/q.jsonl" || list[0].Path != "logs/q.jsonl" {
		t.Fatalf("migrated skipped sessions: %+v", list)
	}
	imp, err := db.BeginTraceImport(ctx, "/w/logs", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"logs/q.jsonl", "./logs/q.jsonl", "/w/logs/q.jsonl"} {
		k := SkippedSession{File: "/w/logs/q.jsonl", Path: p, Line: 1, Format: "claude", SessionID: "q1", Reason: "no_tool_calls", Message: "new"}
		if err := db.PutSkippedSessions(ctx, imp, []SkippedSession{k}); err != nil {
			t.Fatal(err)
		}
	}
	list, err = db.SkippedSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].File != "/w/logs/q.jsonl" || list[0].Path != "/w/logs/q.jsonl" || list[0].Message != "new" {
		t.Errorf("skipped sessions: %+v, want the one of the last import", list)
	}
	if err := db.PutSkippedSessions(ctx, imp, []SkippedSession{{Path: "q.jsonl", SessionID: "q1"}}); err == nil {
		t.Error("a skipped session without its absolute path was stored")
	}
}

// TestTraceFlagsClearedBy9 checks that migration 9 clears the flags a
// store kept before the flags gained their gap-rule bits, so that they
// are computed anew, and leaves an excluded trace's (empty) flags alone.
func TestTraceFlagsClearedBy9(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	released := migrations
	migrations = migrations[:8]
	old, err := Open(ctx, path)
	migrations = released
	if err != nil {
		t.Fatal(err)
	}
	imp, err := old.BeginTraceImport(ctx, "/corpus", "2026-01-01T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	flagged := storedTrace("a", "h1", "a.json", "x", "y")
	flagged.Flags = []byte{1, 0}
	excluded := storedTrace("b", "h2", "b.json")
	excluded.Excluded = true
	if _, err := old.PutTraces(ctx, imp, []StoredTrace{flagged, excluded}); err != nil {
		t.Fatal(err)
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	idx, err := db.TraceIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range idx.Traces {
		got[r.TraceID] = r.HasFlags
	}
	if want := map[string]bool{"a": false, "b": true}; !maps.Equal(got, want) {
		t.Errorf("HasFlags after migration 9: %v, want %v", got, want)
	}
}
