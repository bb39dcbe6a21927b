package cli

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
)

// TestShadowSummaryCountsUnlisted checks that the text summary of a
// shadow report counts the passing source examples it does not list,
// and says so only when there are some.
func TestShadowSummaryCountsUnlisted(t *testing.T) {
	sh := &candidate.ShadowReport{
		Pass: false, ComparedTraces: 1203, PassedNotListed: 1200,
		Traces: []candidate.ShadowTrace{
			{TraceID: "a", Role: candidate.RoleSource, Status: candidate.StatusPass},
			{TraceID: "b", Role: candidate.RoleSource, Status: candidate.StatusFail, Details: []candidate.Problem{{Code: "x", Message: "differs"}}},
			{TraceID: "h", Role: candidate.RoleHeldout, Status: candidate.StatusPass},
		},
	}
	got := shadowSummary(sh)
	for _, want := range []string{"1201/1202 source examples replay (1200 of them counted, not listed, in the report)", "1/1 held-out traces pass", "b x: differs"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary %q does not say %q", got, want)
		}
	}

	sh.PassedNotListed, sh.ComparedTraces = 0, 3
	if got := shadowSummary(sh); strings.Contains(got, "not listed") || !strings.Contains(got, "1/2 source examples replay;") && !strings.Contains(got, "1/2 source examples replay,") {
		t.Errorf("summary without unlisted examples: %q", got)
	}
}

// TestSummarySessions checks that the text summary says sessions where
// support counts sessions of several traces, and traces where every
// session is one trace (which keeps existing summaries as they were).
func TestSummarySessions(t *testing.T) {
	r := &candidate.Report{
		Mining: candidate.MiningSummary{MinExamples: 2, RepeatsFound: 1, EligibleTraces: 5, EligibleSessions: 3},
		Candidates: []candidate.Candidate{{
			ID: "candidate_x", Name: "bump", Support: 2,
			Steps:    []candidate.Step{{Index: 1, Name: "a"}, {Index: 2, Name: "b", Fallbacks: 1}},
			Examples: []candidate.Example{{TraceID: "s1"}, {TraceID: "s1.agent-a"}, {TraceID: "s2"}},
		}},
	}
	var b strings.Builder
	writeSummary(&b, r, pipeline.Outputs{}, nil)
	for _, want := range []string{"in ≥2 sessions)", "2 steps in 2 sessions (3 traces)", "needed it in 1 of 3 traces"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary does not say %q:\n%s", want, b.String())
		}
	}

	r.Mining.EligibleSessions = 0
	r.Candidates[0].Examples = r.Candidates[0].Examples[:2]
	b.Reset()
	writeSummary(&b, r, pipeline.Outputs{}, nil)
	for _, want := range []string{"in ≥2 traces)", "2 steps in 2 traces,"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary of one-trace sessions does not say %q:\n%s", want, b.String())
		}
	}
}
