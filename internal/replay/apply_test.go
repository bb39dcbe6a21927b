package replay

import (
	"encoding/json"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestApply(t *testing.T) {
	t1, t2 := seq("t1", "a b c"), seq("t2", "x a b c")
	good := cand("a b c")
	good.ID = "candidate_good"
	good.Confidence = 0.9
	good.Examples = []candidate.Example{
		{TraceID: "t1", SourceHash: t1.SourceHash, StartIndex: 0},
		{TraceID: "t2", SourceHash: t2.SourceHash, StartIndex: 1},
	}
	// A candidate whose second example is not among the sources cannot be
	// replayed against its own evidence: it is rejected.
	orphan := cand("a b")
	orphan.ID = "candidate_orphan"
	orphan.Confidence = 0.8
	orphan.Examples = []candidate.Example{
		{TraceID: "t1", SourceHash: t1.SourceHash, StartIndex: 0},
		{TraceID: "gone", SourceHash: "sha256:gone", StartIndex: 0},
	}
	first := orphan.ID
	r := &candidate.Report{
		SelectedCandidateID: &first,
		Candidates:          []candidate.Candidate{*orphan, *good},
		RejectedCandidates:  []candidate.Candidate{},
	}
	heldout := []*trace.Trace{seq("h1", "a b c"), seq("h2", "a c"), seq("h3", "p q")}
	Apply(r, []*trace.Trace{t1, t2}, heldout)

	if r.SelectedCandidateID == nil || *r.SelectedCandidateID != "candidate_good" {
		t.Fatalf("selected = %v, want candidate_good", r.SelectedCandidateID)
	}
	if len(r.Candidates) != 1 || len(r.RejectedCandidates) != 1 {
		t.Fatalf("%d safe, %d rejected; want 1 and 1", len(r.Candidates), len(r.RejectedCandidates))
	}
	rej := r.RejectedCandidates[0]
	if rej.ID != "candidate_orphan" || rej.Confidence != 0 || len(rej.RejectionReasons) != 1 ||
		rej.RejectionReasons[0].Code != candidate.CodeShadowFailed || rej.RejectionReasons[0].TraceID != "gone" {
		t.Errorf("rejected = %s confidence %v reasons %+v", rej.ID, rej.Confidence, rej.RejectionReasons)
	}
	c := r.Candidates[0]
	// Compared: t1, t2, h1 pass; h2 fails (missing step); h3 is unmatched
	// and not compared. 3 of 4 pass.
	if c.Shadow == nil || c.Shadow.ComparedTraces != 4 || c.Shadow.Pass {
		t.Fatalf("shadow = %+v", c.Shadow)
	}
	if c.ConfidenceFactors.ShadowPassRate == nil || *c.ConfidenceFactors.ShadowPassRate != 0.75 || c.Confidence != 0.675 {
		t.Errorf("confidence %v, pass rate %v; want 0.675 and 0.75", c.Confidence, c.ConfidenceFactors.ShadowPassRate)
	}
}

// TestApplyReceiptDrift checks that a held-out trace whose receipt drifts
// rejects the candidate with receipt_drift at the receipt's path, so
// nothing is selected, while a held-out trace that recorded no replay run
// lowers confidence but does not reject.
func TestApplyReceiptDrift(t *testing.T) {
	s1, s2 := release("s1", "release-1"), release("s2", "release-2")
	drift := release("drift", "release-3")
	drift.ReplayRun = map[string]any{
		"run_id":          "run_drift",
		"effect_receipts": []any{map[string]any{"receipt_id": "r", "sha256": "changed", "size": json.Number("12")}},
	}
	noReplay := release("no-replay", "release-4")
	noReplay.ReplayRun = nil

	run := func(heldout ...*trace.Trace) *candidate.Report {
		c := releaseCandidate(s1, s2)
		c.Confidence = 0.9
		id := c.ID
		r := &candidate.Report{SelectedCandidateID: &id, Candidates: []candidate.Candidate{*c}, RejectedCandidates: []candidate.Candidate{}}
		Apply(r, []*trace.Trace{s1, s2}, heldout)
		return r
	}

	r := run(drift)
	if r.SelectedCandidateID != nil || len(r.Candidates) != 0 || len(r.RejectedCandidates) != 1 {
		t.Fatalf("selected %v, %d safe, %d rejected; want nothing selected and the candidate rejected", r.SelectedCandidateID, len(r.Candidates), len(r.RejectedCandidates))
	}
	// A report lists no candidates as an empty list, never null.
	if r.Candidates == nil {
		t.Error("Candidates = nil with every candidate rejected, want an empty list")
	}
	var got []candidate.Problem
	for _, p := range r.RejectedCandidates[0].RejectionReasons {
		if p.Code == candidate.CodeReceiptDrift {
			got = append(got, p)
		}
	}
	if len(got) != 1 || got[0].Path != "/effect_receipts/0/sha256" || got[0].TraceID != "drift" {
		t.Errorf("receipt_drift reasons = %+v, want one for trace drift at /effect_receipts/0/sha256", got)
	}

	r = run(noReplay)
	if r.SelectedCandidateID == nil || len(r.RejectedCandidates) != 0 {
		t.Errorf("held-out trace without a replay run: selected %v, rejected %d; want the candidate still selected", r.SelectedCandidateID, len(r.RejectedCandidates))
	}
	if r.RejectedCandidates == nil {
		t.Error("RejectedCandidates = nil with none rejected, want an empty list")
	}
}
