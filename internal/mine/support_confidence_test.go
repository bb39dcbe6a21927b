package mine

import (
	"slices"
	"testing"
)

// TestSupportConfidenceCountsSessions checks that when a session spans
// several traces, a candidate's confidence is computed from its support
// in sessions, as its support factor says, and not from the trace count
// the builder first gave it; and that a rejected candidate still has no
// confidence.
func TestSupportConfidenceCountsSessions(t *testing.T) {
	corpora := sessionCorpora([][]string{{"s1", "s1.agent-a", "s1.agent-acompact-b"}, {"s2"}})
	for _, mode := range []string{ModeExact, ModeGapped} {
		t.Run(mode, func(t *testing.T) {
			rep := mustMine(t, corpora[mode], Options{Mode: mode, MinExamples: 2})
			if len(rep.Candidates) == 0 {
				t.Fatalf("no candidate; warnings %v", rep.Warnings)
			}
			c := rep.Candidates[0]
			if got := stepNames(&c); !slices.Equal(got, bumpNames) {
				t.Fatalf("candidate %v, want %v", got, bumpNames)
			}
			// Counted by traces the support factor would be 4/8; by
			// sessions it is 2/6, and the confidence must follow it.
			if c.ConfidenceFactors.Support != round4(2.0/6) {
				t.Fatalf("support factor %v, want %v", c.ConfidenceFactors.Support, round4(2.0/6))
			}
			if want := Confidence(c.ConfidenceFactors); c.Confidence != want {
				t.Errorf("confidence %v, want %v from its factors %+v", c.Confidence, want, c.ConfidenceFactors)
			}
			for _, r := range rep.RejectedCandidates {
				if r.Confidence != 0 {
					t.Errorf("rejected candidate %v has confidence %v, want 0", stepNames(&r), r.Confidence)
				}
			}
		})
	}
}
