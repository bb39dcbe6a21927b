package pipeline

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// The JSON summary of a shadow report counts the passing source examples
// the report does not list, and names them only when there are some.
func TestSummaryShadowCountsUnlisted(t *testing.T) {
	sh := &candidate.ShadowReport{
		Pass: false, ComparedTraces: 1203, PassedNotListed: 1200,
		Traces: []candidate.ShadowTrace{
			{TraceID: "a", Role: candidate.RoleSource, Status: candidate.StatusPass},
			{TraceID: "b", Role: candidate.RoleSource, Status: candidate.StatusFail, Details: []candidate.Problem{{Code: "x", Message: "differs"}}},
			{TraceID: "h", Role: candidate.RoleHeldout, Status: candidate.StatusPass},
		},
	}
	b, err := json.Marshal(summaryShadow(sh))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"compared":1203`) || !strings.Contains(string(b), `"source_passed":1201`) || !strings.Contains(string(b), `"source_passed_not_listed":1200`) {
		t.Errorf("JSON summary %s does not count the unlisted examples", b)
	}
	sh.PassedNotListed, sh.ComparedTraces = 0, 3
	if b, _ := json.Marshal(summaryShadow(sh)); strings.Contains(string(b), "not_listed") {
		t.Errorf("JSON summary without unlisted examples names them: %s", b)
	}
}

func TestSummarize(t *testing.T) {
	id := "c1"
	r := &candidate.Report{
		SelectedCandidateID: &id, SourceTraceCount: 4, ExcludedTraceCount: 1,
		SkippedFiles: []candidate.SkippedFile{{}},
		Candidates: []candidate.Candidate{{
			ID: "c1", Name: "bump", Support: 3, Confidence: 0.9,
			Steps:             []candidate.Step{{Segment: candidate.Fuzzy}, {}},
			Parameters:        []candidate.Parameter{{Name: "module"}, {Name: "version"}},
			DerivedParameters: []candidate.DerivedParameter{{Parameter: candidate.Parameter{Name: "branch"}, Expression: `"deps/" + module`}},
		}},
		RejectedCandidates: []candidate.Candidate{{ID: "c2", Name: "x", RejectionReasons: []candidate.Problem{{Code: "b"}, {Code: "a"}, {Code: "b"}}}},
		ExcludedTraces:     []candidate.Exclusion{{TraceID: "t9", Code: "no_actions"}},
		Warnings:           []candidate.Problem{{Code: "w", Message: "m"}},
	}
	m := &bundle.Manifest{Kind: "candidate", RiskLevel: "low", Fixtures: make([]bundle.Fixture, 2)}
	m.Promotion.Criteria.Status = bundle.StatusNeedsApproval
	got := Summarize(r, Outputs{Out: "w.star", Report: "r.json", Bundle: "b"}, &Published{Workflows: []string{"all/bump.star"}, Manifest: m})
	want := &Summary{
		SelectedCandidateID: &id, SourceTraceCount: 4, ExcludedTraceCount: 1, SkippedFileCount: 1,
		Candidates: []SummaryCandidate{{
			ID: "c1", Name: "bump", Steps: 2, Support: 3, Confidence: 0.9,
			Parameters: []string{"module", "version"}, DerivedParameters: map[string]string{"branch": `"deps/" + module`}, FuzzySteps: 1,
		}},
		RejectedCandidates: []SummaryRejected{{ID: "c2", Name: "x", Codes: []string{"a", "b"}}},
		ExcludedTraces:     []SummaryExcluded{{TraceID: "t9", Code: "no_actions"}},
		Warnings:           []SummaryWarning{{Code: "w", Message: "m"}},
		Outputs:            SummaryOutputs{Workflow: "w.star", Report: "r.json", Workflows: []string{"all/bump.star"}},
		Bundle: &SummaryBundle{
			Summary:  bundle.Summary{Path: "b", Kind: "candidate", RiskLevel: "low", PromotionStatus: bundle.StatusNeedsApproval, PromotionReasons: []string{}},
			Fixtures: 2,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Summarize (-want +got):\n%s", diff)
	}
	// The bundle's own fields and its Summary's sit side by side in JSON.
	b, err := candidate.EncodeJSON(got.Bundle)
	if err != nil {
		t.Fatal(err)
	}
	const wantBundle = `{
  "fixtures": 2,
  "kind": "candidate",
  "path": "b",
  "promotion_reasons": [],
  "promotion_status": "needs_approval",
  "risk_level": "low",
  "skill_accepted": false
}
`
	if string(b) != wantBundle {
		t.Errorf("bundle summary as JSON = %s, want %s", b, wantBundle)
	}
	// Nothing to list is [], never null.
	empty := Summarize(&candidate.Report{}, Outputs{}, &Published{})
	b, err = candidate.EncodeJSON(empty)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"candidates": []`, `"rejected_candidates": []`, `"excluded_traces": []`, `"warnings": []`, `"selected_candidate_id": null`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("empty summary %s lacks %s", b, key)
		}
	}
}
