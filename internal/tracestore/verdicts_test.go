package tracestore

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// TestVerdictsRoundTrip: the store gives back the example row of a
// passing verdict as it was recorded, nothing for a failing or unknown
// one, and a later verdict replaces an earlier, in the run that records
// it and in the next.
func TestVerdictsRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db := openDB(t, path)
	v := NewVerdicts(db)
	pass := candidate.VerdictKey{Candidate: "sha256:c", SourceHash: "sha256:1", StartIndex: 2}
	fail := candidate.VerdictKey{Candidate: "sha256:c", SourceHash: "sha256:2", StartIndex: 0}
	unknown := candidate.VerdictKey{Candidate: "sha256:d", SourceHash: "sha256:1", StartIndex: 2}
	ex := candidate.Example{TraceID: "t1", Source: "a/t1.json", SourceHash: "sha256:1", StartIndex: 2, ActionIDs: []string{"a3", "a5"}, Positions: []int{2, 4}, Retries: []int{0, 1}}
	// Asked first, so that the candidate's verdicts are held in memory
	// when they are recorded.
	if got, err := v.Passed(ctx, []candidate.VerdictKey{pass}); err != nil || got[0] != nil {
		t.Fatalf("before any record: %v, %v", got, err)
	}
	if err := v.Record(ctx, []candidate.Verdict{{Key: pass, Example: ex, Passed: true}, {Key: fail, Example: candidate.Example{TraceID: "t2"}}}); err != nil {
		t.Fatal(err)
	}
	check := func(v *Verdicts, wantPass bool) {
		t.Helper()
		got, err := v.Passed(ctx, []candidate.VerdictKey{pass, fail, unknown})
		if err != nil {
			t.Fatal(err)
		}
		if wantPass && (got[0] == nil || !reflect.DeepEqual(*got[0], ex)) || !wantPass && got[0] != nil {
			t.Errorf("passing example: %+v, want passed=%v with %+v", got[0], wantPass, ex)
		}
		if got[1] != nil || got[2] != nil {
			t.Errorf("failing and unknown examples: %+v, %+v; want none", got[1], got[2])
		}
	}
	check(v, true)
	check(NewVerdicts(db), true)
	if err := v.Record(ctx, []candidate.Verdict{{Key: pass, Example: ex, Passed: false}}); err != nil {
		t.Fatal(err)
	}
	check(v, false)
	db.Close()
	check(NewVerdicts(openDB(t, path)), false)
}

// TestVerdictsCorruptRow: a stored example row that is not JSON stops the
// mine with an error naming the candidate, the trace and the start,
// instead of being taken for a pass or skipped.
func TestVerdictsCorruptRow(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "state.db"))
	key := candidate.VerdictKey{Candidate: "sha256:c", SourceHash: "sha256:1", StartIndex: 2}
	if err := db.PutVerdicts(ctx, []store.StoredVerdict{{Candidate: key.Candidate, SourceHash: key.SourceHash, StartIndex: key.StartIndex, Passed: true, Example: []byte(`{"trace_id":`)}}); err != nil {
		t.Fatal(err)
	}
	got, err := NewVerdicts(db).Passed(ctx, []candidate.VerdictKey{key})
	if err == nil {
		t.Fatalf("Passed = %v, want an error", got)
	}
	for _, want := range []string{"sha256:c", "sha256:1", "at 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// TestCorpusVerdictsNameTracesNow: a corpus's verdicts give back a kept
// example row naming where its trace is stored now (the row may have been
// kept when the trace was elsewhere), and nothing for a row whose trace
// id is not the one stored under its source hash.
func TestCorpusVerdictsNameTracesNow(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	writeCorpus(t, dir, 3, 1, false)
	db := openDB(t, filepath.Join(tmp, "state.db"))
	if _, err := Import(ctx, db, dir, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	row := c.Row(0)
	moved := candidate.Example{TraceID: row.TraceID, Source: "elsewhere/" + row.OriginPath, SourceHash: row.SourceHash, StartIndex: 1, ActionIDs: []string{"a"}}
	other := candidate.Example{TraceID: "not-" + row.TraceID, Source: row.OriginPath, SourceHash: row.SourceHash, StartIndex: 2, ActionIDs: []string{"b"}}
	keyOf := func(ex candidate.Example) candidate.VerdictKey {
		return candidate.VerdictKey{Candidate: "sha256:c", SourceHash: ex.SourceHash, StartIndex: ex.StartIndex}
	}
	if err := NewVerdicts(db).Record(ctx, []candidate.Verdict{{Key: keyOf(moved), Example: moved, Passed: true}, {Key: keyOf(other), Example: other, Passed: true}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Verdicts().Passed(ctx, []candidate.VerdictKey{keyOf(moved), keyOf(other)})
	if err != nil {
		t.Fatal(err)
	}
	want := moved
	want.Source = row.OriginPath
	if got[0] == nil || !reflect.DeepEqual(*got[0], want) {
		t.Errorf("kept row of a trace stored at %s: %+v, want %+v", row.OriginPath, got[0], want)
	}
	if got[1] != nil {
		t.Errorf("kept row of another trace id than the one stored under its hash: %+v, want none", got[1])
	}
}
