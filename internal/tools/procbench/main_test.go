package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeReport(t *testing.T, r *report) string {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type jsonOut struct {
	MinExamples int `json:"min_examples"`
	Results     []struct {
		Dir             string         `json:"dir"`
		Sessions        int            `json:"sessions"`
		Files           map[string]int `json:"files"`
		MineSkipInvalid bool           `json:"mine_skip_invalid"`
		MineError       string         `json:"mine_error"`
		Procedures      []struct {
			Procedure string   `json:"procedure"`
			Sessions  int      `json:"sessions"`
			Eligible  bool     `json:"eligible"`
			Found     []string `json:"found"`
			FoundSafe []string `json:"found_safe"`
		} `json:"procedures"`
		Recall    float64 `json:"recall"`
		Precision float64 `json:"precision"`
		Junk      []struct {
			Name string `json:"name"`
			Junk string `json:"junk"`
		} `json:"junk"`
	} `json:"results"`
	Total struct {
		Eligible int     `json:"eligible"`
		Recall   float64 `json:"recall"`
	} `json:"total"`
}

func TestRunWithReport(t *testing.T) {
	dir := writeFiles(t, shapeFiles)
	rep := writeReport(t, invented)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-report", rep, "-min-examples", "1", "-json", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d, want 0; stderr:\n%s", code, &stderr)
	}
	var out jsonOut
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, &stdout)
	}
	if len(out.Results) != 1 {
		t.Fatalf("results = %d, want 1", len(out.Results))
	}
	r := out.Results[0]
	if r.Sessions != 5 {
		t.Errorf("sessions = %d, want 5", r.Sessions)
	}
	got := map[string][2]int{} // procedure → sessions, candidates found
	for _, p := range r.Procedures {
		got[p.Procedure] = [2]int{p.Sessions, len(p.Found)}
	}
	want := map[string][2]int{
		"commit-push": {1, 1}, "commit-push-pr": {0, 1}, "test-fix-retest": {1, 1},
		"dependency-bump": {0, 0}, "release": {2, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("procedures (-want +got):\n%s", diff)
	}
	// Eligible with -min-examples 1: commit-push, test-fix-retest and
	// release; release has no candidate.
	if r.Recall != 2.0/3 || out.Total.Eligible != 3 {
		t.Errorf("recall %v of %d eligible, want 2/3 of 3", r.Recall, out.Total.Eligible)
	}
	var junk []string
	for _, j := range r.Junk {
		junk = append(junk, j.Junk+" "+j.Name)
	}
	wantJunk := []string{"observations_only look_around", "one_step_repeated run_python", "edits_only edit_twice", "no_command read_then_edit"}
	if diff := cmp.Diff(wantJunk, junk); diff != "" {
		t.Errorf("junk (-want +got):\n%s", diff)
	}

	// The human summary names the same things.
	stdout.Reset()
	if code := run([]string{"-report", rep, "-min-examples", "1", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d, want 0; stderr:\n%s", code, &stderr)
	}
	for _, s := range []string{"recall 67% (2/3), as safe 33% (1/3); precision 33% (3/9 candidates, 3 safe)", "junk edits_only (rejected): edit_twice [file.edit → file.write]", "junk one_step_repeated (safe): run_python [python3 → python3]", "4 junk, 2 of it safe", "unnamed: build_and_serve", "near miss (commit-push, commit-push-pr): commit_then_push [git commit → git push]"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, &stdout)
		}
	}
}

// fakeCrystallize writes a script that acts as crystallize mine: it
// refuses its input unless given --skip-invalid, then writes rep.
func fakeCrystallize(t *testing.T, rep string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake crystallize is a shell script")
	}
	p := filepath.Join(t.TempDir(), "crystallize")
	script := `#!/bin/sh
out=""; skip=no
while [ $# -gt 0 ]; do
  case "$1" in
    --report) out="$2"; shift ;;
    --skip-invalid) skip=yes ;;
  esac
  shift
done
if [ $skip = no ]; then echo "crystallize: reading sessions: 3 problems" >&2; exit 1; fi
cp "` + rep + `" "$out"
echo "crystallize: no safe crystallization candidate" >&2
exit 1
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// mine refuses the directory, so procbench mines it again with
// --skip-invalid and says so; the exit status 1 that comes with a report
// is a result, not a failure.
func TestRunMineRetriesWithSkipInvalid(t *testing.T) {
	dir := writeFiles(t, shapeFiles)
	bin := fakeCrystallize(t, writeReport(t, invented))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-crystallize", bin, "-json", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d, want 0; stderr:\n%s", code, &stderr)
	}
	var out jsonOut
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if r := out.Results[0]; !r.MineSkipInvalid || r.MineError != "" || r.Precision != 3.0/9 {
		t.Errorf("skip_invalid %v, error %q, precision %v; want true, none, 3/9", r.MineSkipInvalid, r.MineError, r.Precision)
	}
}

// A directory mine refuses even with --skip-invalid is measured with no
// candidate, its error shown, and the exit status is 1.
func TestRunMineFails(t *testing.T) {
	dir := writeFiles(t, shapeFiles)
	bin := fakeCrystallize(t, filepath.Join(t.TempDir(), "missing.json"))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-crystallize", bin, dir}, &stdout, &stderr); code != 1 {
		t.Fatalf("run = %d, want 1", code)
	}
	if !strings.Contains(stdout.String(), "mine failed: exit status 1: ") {
		t.Errorf("output does not say mine failed:\n%s", &stdout)
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"dir"},
		{"-report", "r.json", "a", "b"},
		{"-crystallize", "cz", "-min-examples", "0", "dir"},
		{"-no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
		if !strings.Contains(stderr.String(), "usage: procbench") {
			t.Errorf("run(%q) stderr lacks usage:\n%s", args, &stderr)
		}
	}
}
