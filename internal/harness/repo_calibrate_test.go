package harness

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// commitAll makes dir a git repository with every file in it committed.
func commitAll(t *testing.T, dir string) {
	t.Helper()
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", "initial")
}

// TestCalibrateStored calibrates a judge on the golden set a repository's
// harness manifest names, with a quorum, and finds the calibration in the
// ledger stamped with the time given; a golden set given by path, in a
// repository without a harness, is read from that path; a suite that is
// neither is an error, and nothing is stored for it.
func TestCalibrateStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := &Manifest{Schema: ManifestSchema, EvalSuites: []EvalSuite{{ID: "agent-injection", Path: "harness/evals/golden.jsonl", Runner: RunnerEval, Threshold: 1}}}
	writeTree(t, dir, map[string]string{
		ManifestPath:                 string(m.Encode()),
		"harness/evals/golden.jsonl": goldenSet,
	})
	gitEnv(t)
	commitAll(t, dir)
	db, err := store.Open(ctx, filepath.Join(dir, ".crystallize", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mu sync.Mutex
	asked := map[string]bool{}
	careful := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		asked[req.Model] = true
		mu.Unlock()
		p := req.Messages[len(req.Messages)-1].Content
		content := verdict(!strings.Contains(p, "API_KEY=abc") && !strings.Contains(p, "hunter2"))
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	defer careful.Close()
	cfg := JudgeConfig{BaseURL: careful.URL + "/v1", Model: "a"}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

	cal, err := CalibrateStored(ctx, dir, db, "agent-injection", cfg, []string{"b"}, now, os.Environ(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cal.SuiteID != "agent-injection" || cal.GoldenSet != "harness/evals/golden.jsonl" || !cal.Promoted || cal.Pinned.Quorum != 2 {
		t.Errorf("calibration of suite %q on %q: promoted %v (reasons %v), quorum %d; want the suite and its golden set, promoted by a quorum of 2", cal.SuiteID, cal.GoldenSet, cal.Promoted, cal.Reasons, cal.Pinned.Quorum)
	}
	mu.Lock()
	if !asked["a"] || !asked["b"] || len(asked) != 2 {
		t.Errorf("judges asked: %v, want the model and its quorum member", asked)
	}
	mu.Unlock()
	row, ok, err := db.LastCalibration(ctx, "agent-injection")
	if err != nil || !ok {
		t.Fatalf("LastCalibration = %v, %v, %v", row, ok, err)
	}
	if row.CreatedAt != "2026-03-04T05:06:07Z" || row.ConfigHash != cal.ConfigHash || row.Promoted != cal.Promoted {
		t.Errorf("stored row %+v, want stamped 2026-03-04T05:06:07Z with the calibration's hash and promotion", row)
	}
	var stored Calibration
	if err := json.Unmarshal([]byte(row.Body), &stored); err != nil || stored.ConfigHash != cal.ConfigHash {
		t.Errorf("stored body does not hold the calibration: %v", err)
	}

	// Without a harness manifest, the suite is the golden set's path.
	bare := t.TempDir()
	writeTree(t, bare, map[string]string{"golden.jsonl": goldenSet})
	commitAll(t, bare)
	path := filepath.Join(bare, "golden.jsonl")
	if _, err := CalibrateStored(ctx, bare, db, path, cfg, nil, now, os.Environ(), nil); err != nil {
		t.Fatalf("CalibrateStored by path: %v", err)
	}
	if _, ok, err := db.LastCalibration(ctx, path); err != nil || !ok {
		t.Errorf("no calibration stored under the path %s: %v", path, err)
	}

	if _, err := CalibrateStored(ctx, dir, db, "no-such-suite", cfg, nil, now, os.Environ(), nil); err == nil {
		t.Error("CalibrateStored of a suite that is neither in the manifest nor a file succeeded")
	}
	if _, ok, _ := db.LastCalibration(ctx, "no-such-suite"); ok {
		t.Error("a failed calibration was stored")
	}
}

// TestCalibrateRefusesUntrackedRubrics: the golden set holds the rubrics
// a promoted judge blocks on, so a file git does not track (untracked,
// ignored, outside any repository, or a symlink) is refused with an
// error naming it, and no calibration is stored.
func TestCalibrateRefusesUntrackedRubrics(t *testing.T) {
	ctx := context.Background()
	gitEnv(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "ignored.jsonl\n", "tracked.jsonl": goldenSet})
	commitAll(t, dir)
	writeTree(t, dir, map[string]string{"harness/evals/scratch.jsonl": goldenSet, "ignored.jsonl": goldenSet})
	if err := os.Symlink("harness/evals/scratch.jsonl", filepath.Join(dir, "link.jsonl")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "add", "link.jsonl")
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"golden.jsonl": goldenSet})
	db, err := store.Open(ctx, filepath.Join(dir, ".crystallize", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	asked := 0
	srv := judgeServer(t, func(string) string { asked++; return verdict(true) })
	cfg := JudgeConfig{BaseURL: srv.URL + "/v1", Model: "m"}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, tt := range []struct{ suite, name string }{
		{filepath.Join(dir, "harness", "evals", "scratch.jsonl"), "harness/evals/scratch.jsonl"},
		{filepath.Join(dir, "ignored.jsonl"), "ignored.jsonl"},
		{filepath.Join(dir, "link.jsonl"), "link.jsonl"},
		{filepath.Join(outside, "golden.jsonl"), filepath.ToSlash(filepath.Join(outside, "golden.jsonl"))},
	} {
		_, err := CalibrateStored(ctx, dir, db, tt.suite, cfg, nil, now, os.Environ(), nil)
		if !errors.Is(err, ErrUntracked) || !strings.Contains(err.Error(), "rubric file "+tt.name+": not tracked by git") {
			t.Errorf("CalibrateStored(%s) = %v, want the rubric file %s refused as not tracked by git", tt.name, err, tt.name)
		}
		if _, ok, _ := db.LastCalibration(ctx, tt.suite); ok {
			t.Errorf("a calibration was stored for the untracked %s", tt.name)
		}
	}
	if asked != 0 {
		t.Errorf("the judge was asked %d times about untracked rubrics", asked)
	}
	if _, err := CalibrateStored(ctx, dir, db, filepath.Join(dir, "tracked.jsonl"), cfg, nil, now, os.Environ(), nil); err != nil {
		t.Errorf("CalibrateStored of a tracked golden set: %v", err)
	}
}
