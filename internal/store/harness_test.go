package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHarnessLedger(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// Profiles: the newest accepted one is the baseline.
	for _, id := range []string{"rp_a", "rp_b", "rp_c"} {
		if _, err := db.PutProfile(ctx, ProfileRow{ProfileID: id, ProjectHash: "ph", CreatedAt: "t", Body: `{}`}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AcceptProfile(ctx, "ph", "rp_b"); err != nil {
		t.Fatal(err)
	}
	if r, ok, err := db.LastProfile(ctx, "ph", true); err != nil || !ok || r.ProfileID != "rp_b" {
		t.Errorf("LastProfile(accepted) = %+v, %v, %v, want rp_b", r, ok, err)
	}
	if r, ok, err := db.LastProfile(ctx, "ph", false); err != nil || !ok || r.ProfileID != "rp_c" {
		t.Errorf("LastProfile = %+v, %v, %v, want rp_c", r, ok, err)
	}
	if _, ok, err := db.LastProfile(ctx, "other", false); err != nil || ok {
		t.Errorf("LastProfile of an unknown project = %v, %v, want none", ok, err)
	}

	// Observations keep their first sighting.
	o := Observation{ProjectHash: "ph", Path: "notes.md", GitStatus: "untracked", Ownership: "observed_only", ContentHash: "h1", SizeBytes: 3, FirstSeenAt: "t1", LastSeenAt: "t1"}
	if err := db.ObserveFiles(ctx, []Observation{o}); err != nil {
		t.Fatal(err)
	}
	o2 := o
	o2.ContentHash, o2.FirstSeenAt, o2.LastSeenAt = "h2", "t2", "t2"
	if err := db.ObserveFiles(ctx, []Observation{o2}); err != nil {
		t.Fatal(err)
	}
	want := o2
	want.FirstSeenAt = "t1"
	got, err := db.Observations(ctx, "ph")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Observation{want}, got); diff != "" {
		t.Errorf("Observations (-want +got):\n%s", diff)
	}

	// Runs with their cases and results.
	run := Run{RunID: "run_1", ProjectHash: "ph", ProfileID: "rp_c", ManifestHash: "m", Phase: "", StartedAt: "s", FinishedAt: "f", Passed: false, ReportPath: "r.json"}
	cases := []CaseRow{{SuiteID: "s", CaseID: "c", Passed: false, Blocking: true}}
	results := []ResultRow{{Subject: "gate", Type: "exit_code", Passed: false, Blocking: true, Message: "exit 1", OutputPath: "gate.log"}}
	seq, err := db.PutRun(ctx, run, cases, results)
	if err != nil || seq != 1 {
		t.Fatalf("PutRun = %d, %v", seq, err)
	}
	run.Seq = 1
	runs, err := db.Runs(ctx, "ph")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Run{run}, runs); diff != "" {
		t.Errorf("Runs (-want +got):\n%s", diff)
	}
	gotResults, err := db.RunResults(ctx, "run_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(results, gotResults); diff != "" {
		t.Errorf("RunResults (-want +got):\n%s", diff)
	}
	gotCases, err := db.RunCases(ctx, "run_1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cases, gotCases); diff != "" {
		t.Errorf("RunCases (-want +got):\n%s", diff)
	}
	if _, err := db.PutRun(ctx, run, nil, nil); err == nil {
		t.Error("PutRun accepted a duplicate run id")
	}

	// Drift, calibrations and lessons.
	d := DriftRow{ProjectHash: "ph", DetectedAt: "t", Kind: "stale_gate", Subject: "go-test", Detail: "gone"}
	if err := db.PutDrift(ctx, []DriftRow{d}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Drift(ctx, "ph"); err != nil || len(got) != 1 || got[0] != d {
		t.Errorf("Drift = %+v, %v", got, err)
	}
	for _, c := range []CalibrationRow{{SuiteID: "s", ConfigHash: "a", Promoted: true, Body: "{}"}, {SuiteID: "s", ConfigHash: "b", Promoted: false, Body: "{}"}} {
		if err := db.PutCalibration(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if c, ok, err := db.LastCalibration(ctx, "s"); err != nil || !ok || c.ConfigHash != "b" || c.Promoted {
		t.Errorf("LastCalibration = %+v, %v, %v, want the newest (b, not promoted)", c, ok, err)
	}
	if err := db.PutLesson(ctx, LessonRow{ID: "l", ProjectHash: "ph", Body: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutLesson(ctx, LessonRow{ID: "l", ProjectHash: "ph", Body: "2"}); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Lessons(ctx, "ph"); err != nil || len(got) != 1 || got[0].Body != "2" {
		t.Errorf("Lessons = %+v, %v, want one replaced lesson", got, err)
	}
}

func TestPassed(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(id string, cases []CaseRow, results []ResultRow) {
		t.Helper()
		if _, err := db.PutRun(ctx, Run{RunID: id, ProjectHash: "ph"}, cases, results); err != nil {
			t.Fatal(err)
		}
	}
	put("r1", []CaseRow{{SuiteID: "good", CaseID: "a", Passed: true}, {SuiteID: "bad", CaseID: "a", Passed: false}},
		[]ResultRow{{Subject: "go-test", Type: "exit_code", Passed: true}, {Subject: "go-vet", Type: "exit_code", Passed: false}, {Subject: "good/a", Type: "exit_code", Passed: true}})
	put("r2", []CaseRow{{SuiteID: "bad", CaseID: "a", Passed: true}, {SuiteID: "bad", CaseID: "b", Passed: false}}, nil)
	got, err := db.Passed(ctx, "ph")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"go-test": true, "good": true}, got); diff != "" {
		t.Errorf("Passed (-want +got):\n%s", diff)
	}
}
