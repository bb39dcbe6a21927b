package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/source"
)

// miniHarness is the small release-harness fixture of package source.
const miniHarness = "../source/testdata/releaseharness/mini"

// TestIngest ingests a release-harness run whose manifest lists an
// optional file the directory lacks: the run is mined as one workflow
// whose report carries the harness's segment and recovery summaries, the
// missing file is a warning on the report and on every candidate, each
// step keeps the review notes of its action, and the bundle is written
// and replayed from its own fixtures.
func TestIngest(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "run")
	if err := os.MkdirAll(from, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(miniHarness)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(miniHarness, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "manifest.json" {
			data = []byte(strings.Replace(string(data), `"kind":`, `"files": {"release_run_json": "release-run.json"}, "kind":`, 1))
		}
		if err := os.WriteFile(filepath.Join(from, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const at = "2026-01-01T00:00:00Z"
	bdir := filepath.Join(dir, "bundle")
	in, err := Ingest(context.Background(), IngestOptions{
		From:    from,
		Mine:    mine.Options{WorkflowName: "release", GeneratedAt: at},
		Outputs: Outputs{Bundle: bdir, BundleOptions: bundle.Options{GeneratedAt: at}},
		Shadow:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	tr, rh, err := source.LoadReleaseHarness(from)
	if err != nil {
		t.Fatal(err)
	}
	r := in.Report
	seg, rec := rh.Segments(), rh.Recovery()
	if s := r.SegmentSummary; s == nil || s.DeterministicCount != len(seg.SafeToAutomate) || s.AgenticCount != len(seg.RequiresHumanReview) {
		t.Errorf("segment summary = %+v, want the harness's %+v", s, seg)
	}
	if s := r.RecoverySummary; s == nil || s.ShellFailuresSeen != rec.ShellFailures || s.FailuresFedIntoAgent != rec.FedIntoAgent {
		t.Errorf("recovery summary = %+v, want the harness's %+v", s, rec)
	}
	sel := r.Selected()
	if sel == nil {
		t.Fatalf("no candidate selected from one release run: %+v", r.RejectedCandidates)
	}
	missing := candidate.Problem{Code: source.CodeMissingOptionalFile, Path: "$.files.release_run_json"}
	hasMissing := func(ws []candidate.Problem) bool {
		for _, w := range ws {
			if w.Code == missing.Code && w.Path == missing.Path && strings.Contains(w.Message, "release-run.json is listed") {
				return true
			}
		}
		return false
	}
	if !hasMissing(r.Warnings) || !hasMissing(sel.Warnings) {
		t.Errorf("the missing release-run.json is not a warning of the report (%v) and the candidate (%v)", r.Warnings, sel.Warnings)
	}
	notes := 0
	for i, st := range sel.Steps {
		var want []string
		raw, _ := tr.Actions[i].Metadata["review_notes"].([]any)
		for _, n := range raw {
			want = append(want, n.(string))
		}
		notes += len(want)
		// The action's notes follow the ones mining gave the step.
		got := st.ReviewNotes[max(0, len(st.ReviewNotes)-len(want)):]
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d: the action's review notes are not the last of %q (-want +got):\n%s", i+1, st.ReviewNotes, diff)
		}
	}
	if notes == 0 {
		t.Error("the fixture's actions carry no review notes; the test checks nothing")
	}
	if in.Published == nil || in.Published.Manifest == nil {
		t.Fatal("no bundle written")
	}
	if _, err := os.Stat(filepath.Join(bdir, bundle.ReportFile)); err != nil {
		t.Errorf("the bundle has no report: %v", err)
	}
	if in.Shadow == nil {
		t.Fatal("Shadow asked for, but the bundle was not replayed")
	}
	if err := in.Err(); err != nil {
		t.Errorf("Err() = %v, want nil for a selected candidate whose replay passes", err)
	}
	sum := in.Summary(IngestOptions{From: from, Outputs: Outputs{Bundle: bdir}})
	if sum.From != filepath.ToSlash(from) || sum.RunID != rh.RunID || *sum.SelectedCandidateID != sel.ID || sum.Bundle.Path != filepath.ToSlash(bdir) {
		t.Errorf("Summary = %+v, want the run %s, its candidate %s and the bundle %s", sum, rh.RunID, sel.ID, bdir)
	}
	if sum.Segments.Deterministic != len(seg.SafeToAutomate) || sum.Recovery.ShellFailures != rec.ShellFailures || sum.Shadow == nil || !sum.Shadow.Pass {
		t.Errorf("Summary = %+v, want the harness's segments and recovery, and the replay", sum)
	}
	if len(sum.Warnings) != 1 || sum.Warnings[0].Code != source.CodeMissingOptionalFile {
		t.Errorf("Summary.Warnings = %+v, want the missing release-run.json", sum.Warnings)
	}
	// What fails an ingest, in the order it is reported.
	sc := *in.Shadow
	sc.Matches, sc.Differences = false, []string{"pass: true, recorded false"}
	differs := &Ingested{Report: in.Report, Shadow: &sc, Bundle: "b"}
	if got, want := fmt.Sprint(differs.Err()), "shadow replay of b differs from the recorded one: pass: true, recorded false"; got != want {
		t.Errorf("Err() with a differing replay = %s, want %s", got, want)
	}
	sc.Pass = false
	if got, want := fmt.Sprint(differs.Err()), "shadow replay of b did not pass"; got != want {
		t.Errorf("Err() with a failing replay = %s, want %s", got, want)
	}
	none := &Ingested{Report: &candidate.Report{}, Shadow: &sc}
	if err := none.Err(); !errors.Is(err, candidate.ErrNoCandidate) {
		t.Errorf("Err() without a selected candidate = %v, want candidate.ErrNoCandidate", err)
	}

	if _, err := Ingest(context.Background(), IngestOptions{From: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "reading release-harness fixture") {
		t.Errorf("Ingest of a directory without a manifest = %v", err)
	}
}
