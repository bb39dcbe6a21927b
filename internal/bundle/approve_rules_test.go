package bundle

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestApproveRefusesChangesNothing checks that a decision Approve refuses
// (on a bundle without a candidate, or whose workflow is not the bytes
// the bundle was written with) says why and leaves every file as it was.
func TestApproveRefusesChangesNothing(t *testing.T) {
	s, h := releaseTraces(t, nil)
	for _, tt := range []struct {
		name string
		sc   scenario
		edit func(t *testing.T, dir string)
		want string
	}{
		{"no candidate", scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}, nil, "holds no candidate"},
		{"workflow changed", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, WorkflowFile)
			mustWrite(t, p, append(mustRead(t, p), "# edited\n"...))
		}, "not the"},
		{"workflow gone", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string) {
			rewriteManifest(t, dir, func(g map[string]any) { g["workflow"].(map[string]any)["path"] = "flows/none.star" })
		}, "none.star"},
		{"workflow outside the bundle", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string) {
			rewriteManifest(t, dir, func(g map[string]any) { g["workflow"].(map[string]any)["path"] = "../" + WorkflowFile })
			mustWrite(t, filepath.Join(filepath.Dir(dir), WorkflowFile), mustRead(t, filepath.Join(dir, WorkflowFile)))
		}, "leaves the bundle"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := tt.sc.write(t)
			if tt.edit != nil {
				tt.edit(t, dir)
			}
			before := files(t, dir)
			_, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T09:00:00Z"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Approve = %v, want an error containing %q", err, tt.want)
			}
			if diff := cmp.Diff(before, files(t, dir)); diff != "" {
				t.Errorf("a refused Approve changed the bundle (-before +after):\n%s", diff)
			}
		})
	}
}

// TestApproveRecordsTheDecision checks the record a decision appends: who,
// when, why, which candidate and which workflow bytes, and whether it
// approves or rejects.
func TestApproveRecordsTheDecision(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	got, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T09:00:00Z", Reason: "not yet", Reject: true})
	if err != nil {
		t.Fatal(err)
	}
	want := ApprovalRecord{Actor: "lead@example.com", Decision: DecisionRejected, RecordedAt: "2026-04-27T09:00:00Z", Reason: "not yet", CandidateID: m.CandidateID, WorkflowSHA256: m.Workflow.SHA256}
	if n := len(got.Promotion.ApprovalHistory); n != 1 || got.Promotion.ApprovalHistory[0] != want {
		t.Fatalf("approval_history %+v, want [%+v]", got.Promotion.ApprovalHistory, want)
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Promotion, b.Manifest.Promotion); diff != "" {
		t.Errorf("candidate.json differs from the returned manifest (-returned +read):\n%s", diff)
	}
}
