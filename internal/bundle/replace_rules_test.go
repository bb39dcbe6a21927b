package bundle

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestReplaceWorkflowFuzzyStepBecomesDeterministic checks that a fuzzy
// step a new workflow version replaces moves to deterministic_steps, in
// step order, with a note saying what replaced its model call: the
// reviewer reads the steps in the order they run, and which still ask a
// model.
func TestReplaceWorkflowFuzzyStepBecomesDeterministic(t *testing.T) {
	s, h := releaseTraces(t, nil)
	fuzzy := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Steps[1].Segment = candidate.Fuzzy
		return c
	}
	dir, _ := scenario{sources: s, heldout: h, build: fuzzy, opts: opts()}.write(t)
	old := mustRead(t, filepath.Join(dir, WorkflowFile))
	m, err := ReplaceWorkflow(dir, append(append([]byte{}, old...), "# revised by synthesis\n"...), evidence(2))
	if err != nil {
		t.Fatal(err)
	}
	var det []int
	for _, r := range m.DeterministicSteps {
		det = append(det, r.Index)
	}
	if !slices.Equal(det, []int{1, 2, 3}) || len(m.FuzzySteps) != 0 {
		t.Fatalf("deterministic_steps %v, fuzzy_steps %+v; want 1, 2, 3 and none", det, m.FuzzySteps)
	}
	if notes := m.DeterministicSteps[1].ReviewNotes; len(notes) == 0 || !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "step 2 release: the model call is replaced by decide")
	}) {
		t.Errorf("step 2 review notes %q, want the replacement's note", notes)
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var onDisk []int
	for _, r := range b.Manifest.DeterministicSteps {
		onDisk = append(onDisk, r.Index)
	}
	if !slices.Equal(onDisk, det) {
		t.Errorf("candidate.json deterministic_steps %v, returned %v", onDisk, det)
	}
}

// TestReplaceWorkflowRecountsModelCalls checks that a new workflow
// version's savings say how many model calls a run still makes (counted
// in its code), per run and over the runs the savings were mined from, in
// candidate.json and report.json alike: what was recorded before is about
// the old version.
func TestReplaceWorkflowRecountsModelCalls(t *testing.T) {
	s, h := releaseTraces(t, nil)
	fuzzy := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Steps[1].Segment = candidate.Fuzzy
		return c
	}
	for _, runs := range []int{0, 4} {
		dir, _ := scenario{sources: s, heldout: h, build: fuzzy, opts: opts()}.write(t)
		old := mustRead(t, filepath.Join(dir, WorkflowFile))
		calls, err := codegen.ModelCalls(old)
		if err != nil || calls != 1 {
			t.Fatalf("the workflow of a fuzzy step makes %d model calls (%v), want 1", calls, err)
		}
		// Savings mined over runs, with counts the new version must replace.
		rewriteManifest(t, dir, func(g map[string]any) {
			sv := g["savings"].(map[string]any)
			sv["runs"], sv["remaining_model_calls"] = runs, 99
			sv["per_run"].(map[string]any)["remaining_model_calls"] = 99
		})
		editReport(t, dir, func(r map[string]any) {
			sv := r["candidates"].([]any)[0].(map[string]any)["savings"].(map[string]any)
			sv["runs"], sv["remaining_model_calls"] = runs, 99
			sv["per_run"].(map[string]any)["remaining_model_calls"] = 99
		})
		m, err := ReplaceWorkflow(dir, append(append([]byte{}, old...), "# revised\n"...), evidence(1))
		if err != nil {
			t.Fatal(err)
		}
		want := int64(max(runs, 1))
		if m.Savings.RemainingModelCalls != want || m.Savings.PerRun.RemainingModelCalls != 1 {
			t.Errorf("runs %d: manifest savings remaining %d, per run %g; want %d and 1", runs, m.Savings.RemainingModelCalls, m.Savings.PerRun.RemainingModelCalls, want)
		}
		r, err := ReadReport(dir)
		if err != nil {
			t.Fatal(err)
		}
		if sv := findCandidate(r, m.CandidateID).Savings; sv.RemainingModelCalls != want || sv.PerRun.RemainingModelCalls != 1 {
			t.Errorf("runs %d: report savings remaining %d, per run %g; want %d and 1", runs, sv.RemainingModelCalls, sv.PerRun.RemainingModelCalls, want)
		}
	}
}

// TestReplaceWorkflowNeedsItsCandidate checks that a new workflow version
// is refused, changing nothing, for a bundle without a candidate and for
// one whose report no longer holds it: the evidence would be recorded
// against nothing.
func TestReplaceWorkflowNeedsItsCandidate(t *testing.T) {
	s, h := releaseTraces(t, nil)
	for _, tt := range []struct {
		name string
		sc   scenario
		edit func(t *testing.T, dir string)
		want string
	}{
		{"no candidate", scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}, nil, "holds no candidate"},
		{"report without it", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string) {
			editReport(t, dir, func(r map[string]any) { r["candidates"] = []any{} })
		}, "no candidate candidate_"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := tt.sc.write(t)
			if tt.edit != nil {
				tt.edit(t, dir)
			}
			before := files(t, dir)
			old := mustRead(t, filepath.Join(dir, WorkflowFile))
			if _, err := ReplaceWorkflow(dir, append(old, "# x\n"...), evidence(1)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReplaceWorkflow = %v, want an error containing %q", err, tt.want)
			}
			if diff := cmp.Diff(before, files(t, dir)); diff != "" {
				t.Errorf("the bundle changed (-before +after):\n%s", diff)
			}
		})
	}
}
