package mine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestScanSourcesEveryExampleOnce checks that the sources of a mined
// scan are the example traces of every candidate it lists, safe and
// rejected, each read back once and in corpus order: what shadow replay
// and the bundle index by trace.
func TestScanSourcesEveryExampleOnce(t *testing.T) {
	// A safe procedure in some traces, one whose side effects diverge
	// (rejected) in others, and traces with neither between them.
	var traces []*trace.Trace
	for i := range 9 {
		id := fmt.Sprintf("t%d", i)
		checkout := act(id+"-c", trace.KindToolCall, "git.checkout", fmt.Sprintf(`{"v":"%d"}`, i))
		checkout.SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: []string{"main", "release"}[i%2]}}
		push := act(id+"-p", trace.KindToolCall, "push", "")
		switch i % 3 {
		case 0:
			// An example of both procedures: read back once.
			traces = append(traces, mk(id, act(id+"-1", trace.KindToolCall, "lint", ""), act(id+"-2", trace.KindToolCall, "fmt", ""), noise(id+"-n"), checkout, push))
		case 1:
			traces = append(traces, mk(id, checkout, push))
		default:
			traces = append(traces, mk(id, noise(id+"-a"), noise(id+"-b")))
		}
	}
	s, err := NewScan(Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	for i, tr := range traces {
		s.Add(Summarize(tr))
		at[tr.ID] = i
	}
	fetch := func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
		out := make([]*trace.Trace, len(idx))
		for i, q := range idx {
			out[i] = traces[q]
		}
		return out, nil
	}
	r, err := s.Mine(context.Background(), fetch)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) == 0 || len(r.RejectedCandidates) == 0 {
		t.Fatalf("%d candidates and %d rejected, want some of each", len(r.Candidates), len(r.RejectedCandidates))
	}
	var want []int
	examples := 0
	// safe is whether a trace is an example of a safe candidate.
	safe := map[int]bool{}
	for k, list := range [][]candidateExamples{examplesOf(r.Candidates), examplesOf(r.RejectedCandidates)} {
		for _, ids := range list {
			for _, id := range ids {
				want = append(want, at[id])
				safe[at[id]] = safe[at[id]] || k == 0
				examples++
			}
		}
	}
	slices.Sort(want)
	want = slices.Compact(want)
	if len(want) == examples {
		t.Fatal("no trace is an example of two candidates; the test cannot tell whether each is read once")
	}
	if !slices.ContainsFunc(want, func(q int) bool { return !safe[q] }) {
		t.Fatal("the rejected candidates add no example trace; the test cannot tell whether their sources are read")
	}

	got, err := s.Sources(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	gotAt := make([]int, len(got))
	for i, tr := range got {
		gotAt[i] = at[tr.ID]
		if tr != traces[gotAt[i]] {
			t.Errorf("source %d is not the trace %s as read", i, tr.ID)
		}
	}
	if !slices.Equal(gotAt, want) {
		t.Errorf("sources at corpus positions %v, want %v", gotAt, want)
	}
}

// candidateExamples is the trace ids of one candidate's examples.
type candidateExamples []string

func examplesOf(cs []candidate.Candidate) []candidateExamples {
	out := make([]candidateExamples, len(cs))
	for i := range cs {
		for _, e := range cs[i].Examples {
			out[i] = append(out[i], e.TraceID)
		}
	}
	return out
}
