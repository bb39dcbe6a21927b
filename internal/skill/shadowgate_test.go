package skill

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// TestShadowGate checks the one mapping from a shadow report to gate
// traces: pass → passed, unmatched → unmatched, anything else → failed,
// held-out kept and every other role a source.
func TestShadowGate(t *testing.T) {
	c := &candidate.Candidate{ID: "c", Name: "flow", Shadow: &candidate.ShadowReport{Traces: []candidate.ShadowTrace{
		{TraceID: "s1", SourceHash: "h", Role: candidate.RoleSource, Status: candidate.StatusPass},
		{TraceID: "s2", Role: "", Status: candidate.StatusFail},
		{TraceID: "h1", Role: candidate.RoleHeldout, Status: candidate.StatusPass},
		{TraceID: "h2", Role: candidate.RoleHeldout, Status: candidate.StatusUnmatched},
		{TraceID: "h3", Role: candidate.RoleHeldout, Status: "diverged"},
	}}}
	g := ShadowGate(c, workflowFor(c, codegen.Options{}))
	want := []GateTrace{
		{TraceID: "s1", SourceHash: "h", Role: RoleSource, Status: candidate.StatusPass},
		{TraceID: "s2", Role: RoleSource, Status: candidate.StatusFail},
		{TraceID: "h1", Role: RoleHeldout, Status: candidate.StatusPass},
		{TraceID: "h2", Role: RoleHeldout, Status: candidate.StatusUnmatched},
		{TraceID: "h3", Role: RoleHeldout, Status: candidate.StatusFail},
	}
	if diff := cmp.Diff(want, g.ComparedTraces); diff != "" {
		t.Errorf("ShadowGate traces (-want +got):\n%s", diff)
	}
	if g.SourceReplay != (GateReplay{Compared: 2, Passed: 1}) || g.HeldoutReplay != (GateHeldout{Compared: 2, Passed: 1, Unmatched: 1}) {
		t.Errorf("ShadowGate counts = %+v %+v", g.SourceReplay, g.HeldoutReplay)
	}
	if g.Accepted() {
		t.Errorf("ShadowGate accepted a skill whose source trace failed")
	}

	// No shadow report: nothing was compared.
	bare := &candidate.Candidate{ID: "c"}
	if g := ShadowGate(bare, workflowFor(bare, codegen.Options{})); len(g.ComparedTraces) != 0 || g.Accepted() {
		t.Errorf("ShadowGate(no shadow) = %+v, want no traces and rejected", g)
	}
}
