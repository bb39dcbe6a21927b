package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestStepApprovalBoundaries: examples that all stopped for a person but
// at different boundaries reject the step; keeping the first example's
// boundary would promise a gate the other runs did not stop at.
func TestStepApprovalBoundaries(t *testing.T) {
	gate := func(boundary string) *trace.Action {
		return &trace.Action{Kind: trace.KindToolCall, Name: "deploy", Approval: &trace.Approval{Required: true, Boundary: boundary}}
	}
	if _, p := stepApproval(stepView{index: 2, actions: []*trace.Action{gate("prod"), gate("prod")}}); p != nil {
		t.Fatalf("one boundary: %v, want no problem", p)
	}
	first, p := stepApproval(stepView{index: 2, actions: []*trace.Action{gate("staging"), gate("prod")}})
	if p == nil || p.Code != "divergent_approval" || p.Path != "steps[2].approval.boundary" {
		t.Fatalf("two boundaries: problem %+v, want divergent_approval at steps[2].approval.boundary", p)
	}
	if first == nil || first.Boundary != "staging" {
		t.Errorf("two boundaries: approval %+v, want the first example's, reported with the problem", first)
	}
}

// TestArtifactTypeBlank: a side effect whose artifact_type is blank is
// typed from its kind, as one without it; a blank type would count as an
// artifact type of its own and split a cluster.
func TestArtifactTypeBlank(t *testing.T) {
	for _, tt := range []struct {
		se   trace.SideEffect
		want string
	}{
		{trace.SideEffect{Kind: "git_commit", Metadata: map[string]any{"artifact_type": "  "}}, "git"},
		{trace.SideEffect{Kind: "git_commit"}, "git"},
		{trace.SideEffect{Kind: "git_commit", Metadata: map[string]any{"artifact_type": "release_tag"}}, "release_tag"},
	} {
		if got := artifactType(tt.se); got != tt.want {
			t.Errorf("artifactType(%+v) = %q, want %q", tt.se, got, tt.want)
		}
	}
}
