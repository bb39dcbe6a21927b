package bundle

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestExampleActionsOnlyHeldTraces checks that an example whose trace the
// bundle does not hold as a source fixture is left out of the example
// actions, whatever action ids it names, rather than read from a path the
// manifest never gave.
func TestExampleActionsOnlyHeldTraces(t *testing.T) {
	s, h := releaseTraces(t, nil)
	withIDs := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		for e, tr := range examples {
			for _, a := range tr.Actions[len(tr.Actions)-len(c.Steps):] {
				c.Examples[e].ActionIDs = append(c.Examples[e].ActionIDs, a.ID)
			}
		}
		return c
	}
	dir, _ := scenario{sources: s, heldout: h, build: withIDs, opts: opts()}.write(t)
	// The report's first example now names a trace the bundle lacks.
	editReport(t, dir, func(r map[string]any) {
		ex := r["candidates"].([]any)[0].(map[string]any)["examples"].([]any)[0].(map[string]any)
		ex["source_hash"] = "sha256:" + strings.Repeat("0", 64)
	})
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := b.ExampleActions()
	if err != nil {
		t.Fatalf("ExampleActions with an example the bundle does not hold: %v", err)
	}
	// Three source examples, one of them no longer held.
	if len(acts) != 2 {
		t.Errorf("ExampleActions gave %d examples, want the 2 whose traces the bundle holds", len(acts))
	}
}

// TestShadowNeedsCandidateInReport checks that a shadow replay of a bundle
// whose report no longer holds the manifest's candidate is an error
// naming the report, not a replay of nothing.
func TestShadowNeedsCandidateInReport(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	editReport(t, dir, func(r map[string]any) { r["candidates"] = []any{} })
	if _, err := ReplayShadow(dir); err == nil || !strings.Contains(err.Error(), "no candidate "+m.CandidateID) || !strings.Contains(err.Error(), ReportFile) {
		t.Errorf("ReplayShadow without the candidate in the report = %v, want no candidate %s naming %s", err, m.CandidateID, ReportFile)
	}
}

// TestRejectedManifestSaysNoCandidate checks that a bundle without a
// selected candidate says so first among its rejection reasons.
func TestRejectedManifestSaysNoCandidate(t *testing.T) {
	s, h := releaseTraces(t, nil)
	_, m := scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}.write(t)
	if len(m.RejectionReasons) == 0 || m.RejectionReasons[0].Code != candidate.CodeNoCandidate {
		t.Errorf("rejection reasons %+v, want %s first", m.RejectionReasons, candidate.CodeNoCandidate)
	}
}
