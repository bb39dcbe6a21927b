package bundle

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
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
