package bundle

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestBlockersEachReason checks each reason that blocks promotion, alone,
// with the counts its message gives the reviewer, and the edges of the
// thresholds: exactly the examples and the confidence required block
// nothing.
func TestBlockersEachReason(t *testing.T) {
	tr := func(role, status string) candidate.ShadowTrace {
		return candidate.ShadowTrace{TraceID: role + status, Role: role, Status: status}
	}
	passing := func() *candidate.ShadowReport {
		return &candidate.ShadowReport{Pass: true, ComparedTraces: 3, Traces: []candidate.ShadowTrace{
			tr(candidate.RoleSource, candidate.StatusPass), tr(candidate.RoleSource, candidate.StatusPass), tr(candidate.RoleHeldout, candidate.StatusPass),
		}}
	}
	drift := []DivergenceRecord{{TraceID: "t7", Path: "/effect_receipts/0/kind"}, {TraceID: "t8", Path: "/x"}}
	for _, tt := range []struct {
		name    string
		c       *candidate.Candidate
		samples int
		div     []DivergenceRecord
		want    string // "code: message" of each reason, "; "-joined
	}{
		{"nothing blocks", &candidate.Candidate{Confidence: 0.8, Shadow: passing()}, 2, nil, ""},
		{"no candidate", nil, 0, nil, ReasonNoCandidate + ": no safe candidate was selected"},
		{"no candidate, drifted", nil, 0, drift,
			ReasonNoCandidate + ": no safe candidate was selected; " + ReasonReceiptDrift + ": replay receipts drifted on 2 trace(s); first: t7 at /effect_receipts/0/kind"},
		{"shadow not run", &candidate.Candidate{Confidence: 0.8}, 2, nil, ReasonShadowMissing + ": shadow comparison has not run"},
		{"shadow failed", &candidate.Candidate{Confidence: 0.8, Shadow: &candidate.ShadowReport{ComparedTraces: 3, PassedNotListed: 1, Traces: []candidate.ShadowTrace{
			tr(candidate.RoleSource, candidate.StatusFail), tr(candidate.RoleHeldout, candidate.StatusPass),
		}}}, 2, nil, ReasonShadowFailed + ": shadow comparison did not pass: 2 of 3 compared traces passed"},
		{"held-out failed", &candidate.Candidate{Confidence: 0.8, Shadow: &candidate.ShadowReport{Pass: true, ComparedTraces: 3, Traces: []candidate.ShadowTrace{
			tr(candidate.RoleSource, candidate.StatusPass), tr(candidate.RoleHeldout, candidate.StatusFail), tr(candidate.RoleHeldout, candidate.StatusFail),
		}}}, 2, nil, ReasonHeldoutFailed + ": none of the 2 compared held-out traces passed"},
		{"held-out unmatched", &candidate.Candidate{Confidence: 0.8, Shadow: &candidate.ShadowReport{Pass: true, ComparedTraces: 1, PassedNotListed: 4, Traces: []candidate.ShadowTrace{
			tr(candidate.RoleSource, candidate.StatusPass), tr(candidate.RoleHeldout, candidate.StatusUnmatched),
		}}}, 2, nil, ReasonHeldoutRequired + ": no held-out trace containing the procedure was compared (1 unmatched); pass --shadow-from"},
		{"one held-out pass is enough", &candidate.Candidate{Confidence: 0.8, Shadow: &candidate.ShadowReport{Pass: true, ComparedTraces: 3, Traces: []candidate.ShadowTrace{
			tr(candidate.RoleHeldout, candidate.StatusFail), tr(candidate.RoleHeldout, candidate.StatusPass),
		}}}, 2, nil, ""},
		{"drifted", &candidate.Candidate{Confidence: 0.8, Shadow: passing()}, 2, drift,
			ReasonReceiptDrift + ": replay receipts drifted on 2 trace(s); first: t7 at /effect_receipts/0/kind"},
		{"too few examples", &candidate.Candidate{Confidence: 0.8, Shadow: passing()}, 1, nil,
			ReasonInsufficientExamples + ": 1 examples, fewer than the 2 required"},
		{"low confidence", &candidate.Candidate{Confidence: 0.79, Shadow: passing()}, 2, nil,
			ReasonLowConfidence + ": confidence 0.79 is below the minimum 0.8"},
	} {
		var got []string
		for _, r := range blockers(tt.c, tt.samples, tt.div, 2, 0.8) {
			got = append(got, r.Code+": "+r.Message)
		}
		if strings.Join(got, "; ") != tt.want {
			t.Errorf("%s: blockers\n  %s\nwant\n  %s", tt.name, strings.Join(got, "; "), tt.want)
		}
	}
}

// TestLatestDecisionForTheseBytes checks that the decision that counts
// is the latest one for the manifest's candidate and workflow sha256:
// later decisions about other bytes or another candidate do not count,
// and with none the bundle needs an approval.
func TestLatestDecisionForTheseBytes(t *testing.T) {
	m := &Manifest{CandidateID: "candidate_a", Workflow: WorkflowRef{SHA256: "new"}}
	rec := func(decision, id, sha string) ApprovalRecord {
		return ApprovalRecord{Decision: decision, CandidateID: id, WorkflowSHA256: sha}
	}
	for _, tt := range []struct {
		name    string
		history []ApprovalRecord
		want    string
	}{
		{"none", nil, ""},
		{"approved", []ApprovalRecord{rec(DecisionApproved, "candidate_a", "new")}, DecisionApproved},
		{"approved, then rejected", []ApprovalRecord{rec(DecisionApproved, "candidate_a", "new"), rec(DecisionRejected, "candidate_a", "new")}, DecisionRejected},
		{"rejected, then approved", []ApprovalRecord{rec(DecisionRejected, "candidate_a", "new"), rec(DecisionApproved, "candidate_a", "new")}, DecisionApproved},
		{"later decision on other bytes", []ApprovalRecord{rec(DecisionRejected, "candidate_a", "new"), rec(DecisionApproved, "candidate_a", "old")}, DecisionRejected},
		{"later decision on another candidate", []ApprovalRecord{rec(DecisionRejected, "candidate_a", "new"), rec(DecisionApproved, "candidate_b", "new")}, DecisionRejected},
		{"only other bytes", []ApprovalRecord{rec(DecisionApproved, "candidate_a", "old")}, ""},
	} {
		m.Promotion.ApprovalHistory = tt.history
		if got := latestDecision(m); got != tt.want {
			t.Errorf("%s: latestDecision = %q, want %q", tt.name, got, tt.want)
		}
	}
}
