package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRepoFlow follows a repository through the stored steps the
// commands take: no manifest yet (no run, nothing drifted from), a kit
// written and accepted, a recorded run that retains what it taught, and
// drift measured against the accepted profile.
func TestRepoFlow(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	dir := makeRepo(t, repo{name: "flow", tracked: map[string]string{
		"go.mod":       "module example.com/flow\n\ngo 1.22\n",
		"flow.go":      "package flow\n\n// One is one.\nfunc One() int { return 1 }\n",
		"flow_test.go": "package flow\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(\"one\")\n\t}\n}\n",
	}})
	root, db, err := OpenRepo(ctx, filepath.Join(dir, "."), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	if m, data, err := LoadManifest(root); m != nil || data != nil || err != nil {
		t.Fatalf("LoadManifest without a manifest = %v, %d bytes, %v; want nothing", m, len(data), err)
	}
	if _, err := RunRecorded(ctx, root, db, now, nil, RunOptions{Environ: os.Environ()}); err == nil || !strings.Contains(err.Error(), "no harness manifest") {
		t.Fatalf("RunRecorded without a manifest = %v; want it to say there is none", err)
	}
	if p, err := AcceptedProfile(ctx, db, "nothing"); p != nil || err != nil {
		t.Fatalf("AcceptedProfile before any = %v, %v", p, err)
	}
	p, err := ProfileStored(ctx, root, db, now, false)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := PlanStored(ctx, root, db, p)
	if err != nil || len(pl.Proposed) == 0 {
		t.Fatalf("PlanStored = %+v, %v; want a proposed kit", pl, err)
	}
	// A dry write changes nothing and accepts nothing.
	dry, err := WriteStored(ctx, root, db, "go-service", p, false, now)
	if err != nil || dry.Applied || len(dry.Files) == 0 {
		t.Fatalf("WriteStored without apply = %+v, %v; want the files it would write", dry, err)
	}
	if m, _, _ := LoadManifest(root); m != nil {
		t.Fatal("WriteStored without apply wrote the manifest")
	}
	if a, err := AcceptedProfile(ctx, db, p.ProjectHash); a != nil || err != nil {
		t.Fatalf("WriteStored without apply accepted a profile: %+v, %v", a, err)
	}
	if res, err := WriteStored(ctx, root, db, "go-service", p, true, now); err != nil || !res.Applied {
		t.Fatalf("WriteStored = %+v, %v", res, err)
	}
	accepted, err := AcceptedProfile(ctx, db, p.ProjectHash)
	if err != nil || accepted == nil || accepted.ProjectHash != p.ProjectHash {
		t.Fatalf("AcceptedProfile after Accept = %+v, %v", accepted, err)
	}

	rep, err := RunRecorded(ctx, root, db, now, nil, RunOptions{Environ: os.Environ()})
	if err != nil || !rep.Passed {
		t.Fatalf("RunRecorded = %+v, %v; want a passed run", rep, err)
	}
	runs, err := db.Runs(ctx, p.ProjectHash)
	if err != nil || len(runs) != 1 || runs[0].RunID != rep.RunID {
		t.Fatalf("recorded runs = %+v, %v; want the run", runs, err)
	}
	lessons, err := LessonsStored(ctx, root, db)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := StoreMemory{DB: db}.Lessons(ctx, p.ProjectHash)
	if err != nil || len(direct) == 0 || len(lessons) != len(direct) {
		t.Errorf("LessonsStored = %d lessons, the project's memory holds %d (%v)", len(lessons), len(direct), err)
	}
	if other, err := LessonsStored(ctx, makeRepo(t, repos[0]), db); err != nil || len(other) != 0 {
		t.Errorf("LessonsStored of another repository = %+v, %v; want none", other, err)
	}

	r, err := DriftNow(ctx, root, db, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Events) != 0 {
		t.Errorf("drift right after accepting = %+v; want none", r.Events)
	}
	if got, err := SuitePath(root, "evals/none.jsonl"); err != nil || got != "evals/none.jsonl" {
		t.Errorf("SuitePath of a file = %q, %v; want the file", got, err)
	}
}
