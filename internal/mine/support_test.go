package mine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// continued makes t a part of session parent: a subagent's trace, or the
// continuation of a session after compaction, names the session it
// belongs to.
func continued(t *trace.Trace, parent string) *trace.Trace {
	if t.Metadata == nil {
		t.Metadata = map[string]any{}
	}
	t.Metadata["parent_session_id"] = parent
	return t
}

// sessionCorpora returns, for each miner, a corpus where the bump
// procedure occurs in the traces of the given sessions (each a list of
// trace ids whose first is the session's own trace, the rest its
// continuations), with unrelated traces around them.
func sessionCorpora(sessions [][]string) map[string][]*trace.Trace {
	out := map[string][]*trace.Trace{}
	for _, mode := range []string{ModeExact, ModeGapped} {
		r := rand.New(rand.NewPCG(7, 11))
		var traces []*trace.Trace
		n := 0
		for _, ids := range sessions {
			for k, id := range ids {
				steps := bumpSteps(n)
				n++
				var t *trace.Trace
				if mode == ModeGapped {
					actions, _ := noisy(r, steps)
					t = session(id, actions...)
				} else {
					for j := range steps {
						steps[j].ID = fmt.Sprintf("%s-%d", id, j)
					}
					t = mk(id, append([]trace.Action{noise(id + "-a")}, append(steps, noise(id+"-z"))...)...)
				}
				if k > 0 {
					continued(t, ids[0])
				}
				traces = append(traces, t)
			}
		}
		for i := range 4 {
			id := fmt.Sprintf("other%d", i)
			if mode == ModeGapped {
				actions, _ := noisy(r, []trace.Action{cmd("", "make", `{"arg1":"t0"}`)})
				traces = append(traces, session(id, actions...))
			} else {
				traces = append(traces, mk(id, noise(id+"-a"), noise(id+"-b")))
			}
		}
		out[mode] = traces
	}
	return out
}

// TestSupportCountsSessions checks that a procedure's support counts
// sessions, not traces: done in one session and again in its
// continuations, it was done in one session.
func TestSupportCountsSessions(t *testing.T) {
	oneSession := sessionCorpora([][]string{{"s1", "s1.agent-a", "s1.agent-acompact-b"}})
	twoSessions := sessionCorpora([][]string{{"s1", "s1.agent-a", "s1.agent-acompact-b"}, {"s2"}})
	for _, mode := range []string{ModeExact, ModeGapped} {
		t.Run(mode, func(t *testing.T) {
			rep := mustMine(t, oneSession[mode], Options{Mode: mode, MinExamples: 2})
			if mode == ModeExact && (len(rep.Warnings) != 1 || rep.Warnings[0].Message != "no sequence of two or more actions repeats in 2 distinct sessions") {
				t.Errorf("one session's three traces: warnings %+v, want that nothing repeats in 2 distinct sessions", rep.Warnings)
			}
			for _, c := range append(slices.Clone(rep.Candidates), rep.RejectedCandidates...) {
				if slices.Contains(stepNames(&c), "go get") {
					t.Errorf("one session's three traces: candidate %v with support %d, want none (one session)", stepNames(&c), c.Support)
				}
			}

			rep = mustMine(t, twoSessions[mode], Options{Mode: mode, MinExamples: 2})
			if rep.Mining.EligibleSessions != 6 || rep.Mining.EligibleTraces != 8 {
				t.Errorf("two sessions: %d eligible sessions in %d traces, want 6 in 8", rep.Mining.EligibleSessions, rep.Mining.EligibleTraces)
			}
			if len(rep.Candidates) == 0 {
				t.Fatalf("two sessions: no candidate; warnings %v", rep.Warnings)
			}
			c := rep.Candidates[0]
			if got := stepNames(&c); !slices.Equal(got, bumpNames) {
				t.Fatalf("two sessions: candidate %v, want %v", got, bumpNames)
			}
			if c.Support != 2 {
				t.Errorf("two sessions: support %d, want 2 (sessions, not traces)", c.Support)
			}
			if c.Score != int(Score(2, len(bumpNames))) {
				t.Errorf("two sessions: score %d, want %d", c.Score, Score(2, len(bumpNames)))
			}
			if len(c.Examples) != 4 {
				t.Errorf("two sessions: %d examples, want every trace (4)", len(c.Examples))
			}
			// 6 eligible sessions in 8 traces: s1 (3 traces), s2 and 4
			// others.
			if want := round4(2.0 / 6); c.ConfidenceFactors.Support != want {
				t.Errorf("two sessions: support factor %v, want %v (sessions / eligible sessions)", c.ConfidenceFactors.Support, want)
			}
		})
	}
}

// TestSupportOneTraceSessions checks that a corpus whose sessions are
// each one trace mines as it did when support counted traces: nothing
// says sessions.
func TestSupportOneTraceSessions(t *testing.T) {
	corpora := sessionCorpora([][]string{{"s1"}, {"s2"}, {"s3"}})
	for _, mode := range []string{ModeExact, ModeGapped} {
		rep := mustMine(t, corpora[mode], Options{Mode: mode, MinExamples: 2})
		if rep.Mining.EligibleSessions != 0 {
			t.Errorf("%s: eligible_sessions %d, want it left out", mode, rep.Mining.EligibleSessions)
		}
		if len(rep.Candidates) == 0 || rep.Candidates[0].Support != 3 || rep.Candidates[0].ConfidenceFactors.Support != round4(3.0/7) {
			t.Errorf("%s: candidates %+v, want the bump procedure with support 3 of 7", mode, rep.Candidates)
		}
	}
}

// TestRepeatsByColour checks RepeatsBy against Repeats: colours that are
// all distinct change nothing, and sequences of one colour count once.
func TestRepeatsByColour(t *testing.T) {
	seqs := [][]int32{{1, 2, 3}, {9, 1, 2, 3}, {1, 2, 3, 8}, {5, 6}}
	idx := NewIndex(seqs)
	plain := idx.Repeats(2, 2)
	if got := idx.RepeatsBy(2, 2, []int32{0, 1, 2, 3}); !slices.Equal(got, plain) {
		t.Errorf("RepeatsBy with distinct colours = %+v, want Repeats' %+v", got, plain)
	}
	got := idx.RepeatsBy(2, 2, []int32{0, 0, 1, 2})
	if len(got) != 1 || got[0].Support != 2 || got[0].Length != 3 || len(idx.Examples(got[0])) != 3 {
		t.Fatalf("RepeatsBy with two sequences of one colour = %+v, want 1 2 3 with support 2 in 3 sequences", got)
	}
	if got := idx.RepeatsBy(2, 2, []int32{0, 0, 0, 1}); len(got) != 0 {
		t.Errorf("RepeatsBy with the repeat in one colour = %+v, want none", got)
	}
}
