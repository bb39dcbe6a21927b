package replay

import (
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
