package bundle

import (
	"errors"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestReadinessErrSaysWhy checks the refusal a bundle that may not run
// gets: the recomputed status (unknown when the manifest could not be
// read), the claimed one only when it differs, and every problem with
// its code and, where known, its place; the codes once each, in order.
func TestReadinessErrSaysWhy(t *testing.T) {
	probs := []candidate.Problem{
		{Code: CodeWorkflowHash, Path: WorkflowFile, Message: "sha256 differs"},
		{Code: CodeManifestInvalid, Message: "bad"},
		{Code: CodeWorkflowHash, Path: "other", Message: "again"},
	}
	for _, tt := range []struct {
		name string
		r    Readiness
		want string
	}{
		{"unreadable", Readiness{Problems: probs[1:2]},
			"promotion status is unknown, not ready; validation: manifest_invalid\n  manifest_invalid: bad"},
		{"claims ready", Readiness{Status: StatusNeedsApproval, Claimed: StatusReady},
			"promotion status is needs_approval (candidate.json claims ready, which decides nothing), not ready"},
		{"claims what it is", Readiness{Status: StatusBlocked, Claimed: StatusBlocked},
			"promotion status is blocked, not ready"},
		{"ready with problems", Readiness{Status: StatusReady, Claimed: StatusReady, Problems: probs},
			"promotion status is ready; validation: workflow_hash, manifest_invalid" +
				"\n  workflow_hash workflow.star: sha256 differs\n  manifest_invalid: bad\n  workflow_hash other: again"},
	} {
		err := tt.r.Err()
		if !errors.Is(err, ErrNotReady) || err.Error() != ErrNotReady.Error()+": "+tt.want || tt.r.OK() {
			t.Errorf("%s: Err() = %v\nwant %v: %s", tt.name, err, ErrNotReady, tt.want)
		}
	}
	if got := (&Readiness{Problems: probs}).Codes(); !slices.Equal(got, []string{CodeWorkflowHash, CodeManifestInvalid}) {
		t.Errorf("Codes() = %v", got)
	}
	ok := &Readiness{Status: StatusReady, Claimed: StatusNeedsApproval}
	if !ok.OK() || ok.Err() != nil {
		t.Errorf("a ready bundle with no problems: OK %v, Err %v", ok.OK(), ok.Err())
	}
}
