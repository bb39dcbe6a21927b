package mine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestMineTooFewSessions checks that a corpus with enough eligible traces
// but fewer sessions than a candidate needs examples stops before mining
// and says both counts: a session's continuations are not more examples.
func TestMineTooFewSessions(t *testing.T) {
	steps := func(id string) []trace.Action {
		return []trace.Action{act(id+"-1", trace.KindToolCall, "a", ""), act(id+"-2", trace.KindToolCall, "b", "")}
	}
	traces := []*trace.Trace{
		mk("s1", steps("s1")...),
		continued(mk("s1.agent-a", steps("s1a")...), "s1"),
		continued(mk("s1.agent-b", steps("s1b")...), "s1"),
		mk("s2", steps("s2")...),
	}
	r := mustMine(t, traces, Options{MinExamples: 3})
	want := []candidate.Problem{{Code: candidate.CodeNoCandidate, Message: "4 eligible traces in 2 sessions, fewer than the 3 examples a candidate needs"}}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(r.Candidates) != 0 || len(r.RejectedCandidates) != 0 || r.Mining.RepeatsFound != 0 {
		t.Errorf("candidates %d, rejected %d, repeats %d; want nothing mined", len(r.Candidates), len(r.RejectedCandidates), r.Mining.RepeatsFound)
	}
}

// TestNoCandidateMessage checks the reason a report with no selected
// candidate gives: every candidate rejected, nothing repeating in enough
// sessions or traces, or, when repeats were found and none was built into
// a candidate, only that there is none.
func TestNoCandidateMessage(t *testing.T) {
	rejected := []candidate.Candidate{{}, {}}
	for _, tc := range []struct {
		name   string
		report candidate.Report
		want   string
	}{
		{"all rejected", candidate.Report{RejectedCandidates: rejected, Mining: candidate.MiningSummary{RepeatsFound: 2, MinExamples: 2}},
			"no safe crystallization candidate: 2 repeated sequences were found and all were rejected"},
		{"no repeat in sessions", candidate.Report{Mining: candidate.MiningSummary{MinExamples: 3, EligibleSessions: 4}},
			"no sequence of two or more actions repeats in 3 distinct sessions"},
		{"no repeat in traces", candidate.Report{Mining: candidate.MiningSummary{MinExamples: 3}},
			"no sequence of two or more actions repeats in 3 distinct traces"},
		{"repeats, none built", candidate.Report{Mining: candidate.MiningSummary{MinExamples: 3, RepeatsFound: 5, EligibleSessions: 4}},
			"no safe crystallization candidate"},
	} {
		if got := noCandidateMessage(&tc.report); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
