package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestVerdicts: verdicts are kept by candidate, trace and start, a later
// one replaces an earlier, only passing ones are given back, and gc
// removes those of traces no longer stored.
func TestVerdicts(t *testing.T) {
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
	if _, err := db.PutTraces(ctx, imp, []StoredTrace{storedTrace("a", "h1", "a.json", "x"), storedTrace("b", "h2", "b.json", "x")}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutVerdicts(ctx, []StoredVerdict{
		{Candidate: "c1", SourceHash: "h1", StartIndex: 0, Passed: true, Example: []byte(`{"trace_id":"a"}`)},
		{Candidate: "c1", SourceHash: "h1", StartIndex: 4, Passed: false, Example: []byte(`{"trace_id":"a","start_index":4}`)},
		{Candidate: "c1", SourceHash: "h2", StartIndex: 0, Passed: true, Example: []byte(`{"trace_id":"b"}`)},
		{Candidate: "c2", SourceHash: "h1", StartIndex: 0, Passed: true, Example: []byte(`{"trace_id":"a","c":2}`)},
		{Candidate: "c1", SourceHash: "gone", StartIndex: 0, Passed: true, Example: []byte(`{"trace_id":"old"}`)},
	}); err != nil {
		t.Fatal(err)
	}
	// A later verdict replaces the one under its key.
	if err := db.PutVerdicts(ctx, []StoredVerdict{{Candidate: "c1", SourceHash: "h2", StartIndex: 0, Passed: false, Example: []byte(`{"trace_id":"b"}`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := db.PassedVerdicts(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[VerdictAt{"h1", 0}]) != `{"trace_id":"a"}` || string(got[VerdictAt{"gone", 0}]) != `{"trace_id":"old"}` {
		t.Errorf("passing verdicts of c1: %v", got)
	}
	gc, err := db.GCTraces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gc.Verdicts != 1 {
		t.Errorf("gc removed %d verdicts, want the one of the trace not stored", gc.Verdicts)
	}
	if n, err := db.CountVerdicts(ctx); err != nil || n != 4 {
		t.Errorf("after gc %d verdicts (%v), want 4", n, err)
	}
	if got, err := db.PassedVerdicts(ctx, "c1"); err != nil || len(got) != 1 {
		t.Errorf("passing verdicts of c1 after gc: %v, %v", got, err)
	}
}
