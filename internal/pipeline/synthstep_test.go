package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/mine"
)

// triageRun is an agent run that reads an issue, has a model label it
// (the fuzzy step 2) and sets the labels.
func triageRun(id, title string, labels ...string) string {
	l, _ := json.Marshal(labels)
	return fmt.Sprintf(`{"version": 1, "id": %[1]q, "actions": [
  {"id": "%[1]s-a1", "kind": "external_api_call", "name": "tracker.get_issue", "parameters": {"issue_id": "%[1]s"}, "output": {"title": %[2]q}, "capabilities": ["tracker.read"], "deterministic": true},
  {"id": "%[1]s-a2", "kind": "model_call", "name": "classify_issue", "parameters": {"issue_id": "%[1]s", "title": %[2]q}, "output": {"labels": %[3]s}, "capabilities": ["model.invoke"], "deterministic": false},
  {"id": "%[1]s-a3", "kind": "external_api_call", "name": "tracker.set_labels", "parameters": {"issue_id": "%[1]s", "labels": %[3]s}, "output": {"updated": true}, "capabilities": ["tracker.write"], "side_effects": [{"kind": "issue_update", "target": "tracker/labels", "capability": "tracker.write", "mutation": "update"}], "deterministic": true}
]}`, id, title, l)
}

// TestLoadStep mines a bundle whose step 2 is a model call and loads it:
// the step's recorded runs come from the source fixtures, its held-out
// runs from the held-out ones, each named by fixture and action. A
// number that names no model call is a *StepError saying why, and a
// directory that is no bundle is another error.
func TestLoadStep(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"traces/1.json":  triageRun("T-1", "Refund webhook returns 500", "bug", "sev/high"),
		"traces/2.json":  triageRun("T-2", "Flaky settlement test", "flaky-test", "sev/low"),
		"traces/3.json":  triageRun("T-3", "Search is slow", "perf", "sev/medium"),
		"heldout/4.json": triageRun("T-4", "Ledger API 500s under load", "bug", "sev/high"),
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bdir := filepath.Join(dir, "bundle")
	const at = "2026-01-01T00:00:00Z"
	if _, pub, err := MineDir(context.Background(), MineDirOptions{
		Corpus:  CorpusOptions{Dir: filepath.Join(dir, "traces"), Mine: mine.Options{MinExamples: 2, GeneratedAt: at, WorkflowName: "triage"}},
		Heldout: HeldoutOptions{Dirs: []string{filepath.Join(dir, "heldout")}},
		Outputs: Outputs{Bundle: bdir, BundleOptions: bundle.Options{GeneratedAt: at, MinExamples: 2}},
	}); err != nil || pub.Manifest == nil {
		t.Fatalf("MineDir = %v, %v", pub, err)
	}

	st, err := LoadStep(bdir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if st.spec.Name != "classify_issue" || st.n != 2 || st.dir != bdir {
		t.Errorf("LoadStep(bundle, 2) = step %q (%d of %s)", st.spec.Name, st.n, st.dir)
	}
	var where, heldout []string
	for _, ex := range st.spec.Examples {
		where = append(where, ex.Where)
		labels, _ := json.Marshal(ex.Output)
		if ex.Inputs["title"] == nil || !strings.Contains(string(labels), "sev/") {
			t.Errorf("%s: inputs %v, output %s; want the recorded title and labels", ex.Where, ex.Inputs, labels)
		}
	}
	for _, ex := range st.spec.Heldout {
		heldout = append(heldout, ex.Where)
	}
	if len(where) != 3 || len(heldout) != 1 {
		t.Fatalf("recorded runs %q, held-out %q; want 3 and 1", where, heldout)
	}
	for _, w := range append(where, heldout...) {
		if !strings.HasPrefix(w, "fixtures/") || !strings.Contains(w, " action T-") || !strings.HasSuffix(w, "-a2") {
			t.Errorf("run named %q, want its fixture and the step's action", w)
		}
	}
	if !strings.Contains(heldout[0], "T-4-a2") {
		t.Errorf("held-out run %q, want T-4's", heldout[0])
	}

	for _, tc := range []struct {
		n      int
		reason string
	}{
		{0, "not a step number (1 or more)"},
		{1, "step tracker.get_issue is a external_api_call, not a model call"},
		{4, "the workflow has 3 steps"},
	} {
		_, err := LoadStep(bdir, tc.n)
		var se *StepError
		if !errors.As(err, &se) {
			t.Errorf("LoadStep(bundle, %d) = %v, want a *StepError", tc.n, err)
			continue
		}
		if diff := cmp.Diff(StepError{Step: tc.n, Reason: tc.reason}, *se); diff != "" {
			t.Errorf("LoadStep(bundle, %d) (-want +got):\n%s", tc.n, diff)
		}
	}
	var se *StepError
	if _, err := LoadStep(filepath.Join(dir, "traces"), 2); err == nil || errors.As(err, &se) {
		t.Errorf("LoadStep of a directory that is no bundle = %v, want an error that is not a StepError", err)
	}
}
