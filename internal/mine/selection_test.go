package mine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The rules of candidate selection, each tested where it decides, so that
// replacing it by the identity fails a test: the noise rule (denoise),
// subsumption of patterns (subsumed) and the scan limit of both
// miners.

// TestDenoise applies the noise rule to patterns with a planted extra
// step: a build that is common elsewhere and sits between two steps in
// most runs is dropped, and so is a rare action present in only half the
// runs, while a rare action present in every run stays a step.
func TestDenoise(t *testing.T) {
	build := func() trace.Action { return cmd("", "go build", `{"arg1":"./..."}`) }
	lint := func() trace.Action { return cmd("", "golangci-lint run", "") }
	tests := []struct {
		name      string
		extra     func() trace.Action
		in        int  // sessions with the extra step between steps 2 and 3
		elsewhere bool // sessions without the procedure build too
		kept      bool // the extra step survives
	}{
		{"a common build in most runs is noise", build, 8, true, false},
		{"a rare action in half the runs is noise", lint, 5, false, false},
		{"a rare action in every run is a step", lint, 10, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 9))
			var traces []*trace.Trace
			for i := range 10 {
				steps := bumpSteps(i)
				if i < tt.in {
					steps = slices.Insert(steps, 2, tt.extra())
				}
				actions, _ := noisy(r, steps)
				traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
			}
			if tt.elsewhere {
				// Sessions that build without the procedure.
				for i := range 10 {
					actions, _ := noisy(r, []trace.Action{build(), build(), cmd("", "go test", `{"arg1":"./..."}`), build()})
					traces = append(traces, session(fmt.Sprintf("x%02d", i), actions...))
				}
			}
			symbols := map[string]int32{}
			p := prepare(traces, symbols)
			extra := tt.extra()
			var pattern, want []int32
			for k, a := range bumpSteps(0) {
				if k == 2 {
					pattern = append(pattern, symbols[extra.Signature()])
					if tt.kept {
						want = append(want, symbols[extra.Signature()])
					}
				}
				pattern = append(pattern, symbols[a.Signature()])
				want = append(want, symbols[a.Signature()])
			}
			got, matches, dropped := p.denoise(pattern, DefaultMaxGap)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("denoise(%v) (-want +got):\n%s", pattern, diff)
			}
			if wantDropped := len(pattern) - len(want); dropped != wantDropped {
				t.Errorf("dropped %d steps, want %d", dropped, wantDropped)
			}
			if len(matches) != 10 {
				t.Errorf("%d embeddings of what is left, want one per session", len(matches))
			}
		})
	}
}

// TestGapSubsumed checks each way a gapped pattern is subsumed, and the
// near misses that are not.
func TestGapSubsumed(t *testing.T) {
	seq := func(n int) []int32 {
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(i)
		}
		return out
	}
	built := []builtPattern{
		{syms: []int32{1, 2, 3, 4}, traces: []int32{0, 1, 2, 3}, sessions: 4},
		{syms: []int32{7, 8}, traces: seq(40), sessions: 40},
		// A pattern the noise rule shortened from 10 11 12 13 to 11 12 13.
		{syms: []int32{10, 11, 12, 13}, traces: []int32{0, 1, 2}, kept: []int32{11, 12, 13}},
	}
	tests := []struct {
		name   string
		syms   []int32
		traces []int32
		want   bool
	}{
		{"a built candidate with a step missing, in its traces", []int32{1, 3, 4}, []int32{0, 1, 2, 3}, true},
		{"with a step missing, in fewer of its traces", []int32{1, 2, 4}, []int32{1, 3}, true},
		{"with a step missing, in a trace it lacks", []int32{1, 2, 4}, []int32{1, 5}, false},
		{"its steps in another order", []int32{2, 1, 4}, []int32{0, 1}, false},
		{"the candidate plus a step, in under a tenth of its traces", []int32{7, 9, 8}, []int32{3, 8, 20}, true},
		{"the candidate plus a step, in a tenth of its traces", []int32{7, 9, 8}, []int32{0, 1, 2, 3}, false},
		{"the candidate itself", []int32{1, 2, 3, 4}, []int32{0, 1, 2, 3}, false},
		{"the shortened pattern's noisy step without one it kept", []int32{10, 11, 13}, []int32{0, 1, 2}, true},
		{"what the noise rule kept", []int32{11, 12, 13}, []int32{0, 1, 2}, false},
		{"the noisy step with all it kept is the shortened pattern's own", []int32{10, 11, 12, 13}, []int32{0, 1, 2}, false},
		{"part of a shortened pattern in a trace it lacks", []int32{10, 11, 13}, []int32{0, 4}, false},
	}
	for _, tt := range tests {
		if got := subsumed(built, tt.syms, tt.traces, len(tt.traces), isSubsequence); got != tt.want {
			t.Errorf("%s: subsumed(%v, %v) = %v, want %v", tt.name, tt.syms, tt.traces, got, tt.want)
		}
	}
}

// TestSubsumedRun checks the same rule with the exact miner's notion of
// containment, a contiguous run: a repeat inside a longer built one in the
// same traces is subsumed, but steps of it that are not a run of it are a
// procedure of their own.
func TestSubsumedRun(t *testing.T) {
	built := []builtPattern{
		{syms: []int32{1, 2, 3, 4}, traces: []int32{0, 1, 2, 3}, sessions: 4},
		{syms: []int32{7, 8}, traces: []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, sessions: 11},
	}
	tests := []struct {
		name   string
		syms   []int32
		traces []int32
		want   bool
	}{
		{"a run of a built candidate, in its traces", []int32{2, 3}, []int32{0, 1, 2, 3}, true},
		{"a run of a built candidate, in more traces", []int32{2, 3}, []int32{0, 1, 2, 3, 4}, false},
		{"its steps with one between them missing", []int32{1, 3, 4}, []int32{0, 1, 2, 3}, false},
		{"the candidate plus a step, in under a tenth of its sessions", []int32{7, 8, 9}, []int32{5}, true},
		{"the candidate with a step inside it", []int32{7, 9, 8}, []int32{5}, false},
		{"the candidate plus a step, in a trace it lacks", []int32{7, 8, 9}, []int32{12}, false},
	}
	for _, tt := range tests {
		if got := subsumed(built, tt.syms, tt.traces, len(tt.traces), containsRun); got != tt.want {
			t.Errorf("%s: subsumed(%v, %v) = %v, want %v", tt.name, tt.syms, tt.traces, got, tt.want)
		}
	}
}

// scanLimitCorpus returns two traces that share n two-step procedures, x_j
// then y_j, each rejected because y_j writes a different target in each
// trace. Between two procedures stand more unrelated actions than the
// gapped miner's gap, so no procedure joins the next.
func scanLimitCorpus(n int) []*trace.Trace {
	var traces []*trace.Trace
	for i := range 2 {
		id := fmt.Sprintf("t%d", i)
		var actions []trace.Action
		for j := range n {
			y := act("", trace.KindToolCall, fmt.Sprintf("y%d", j), "")
			y.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: fmt.Sprintf("out-%d-%d", i, j)}}
			actions = append(actions, act("", trace.KindToolCall, fmt.Sprintf("x%d", j), ""), y)
			for k := range DefaultMaxGap + 1 {
				actions = append(actions, act("", trace.KindToolCall, fmt.Sprintf("sep%d-%d-%d", i, j, k), ""))
			}
		}
		for k := range actions {
			actions[k].ID = fmt.Sprintf("%s-%d", id, k)
		}
		traces = append(traces, mk(id, actions...))
	}
	return traces
}

// TestScanLimit checks that each miner stops building at the scan limit
// when it has found fewer safe candidates than asked for, and says so.
func TestScanLimit(t *testing.T) {
	opts := Options{MaxCandidates: 1}
	limit := opts.scanLimit()
	for _, tc := range []struct {
		mode, what string
	}{{ModeExact, "repeated sequences"}, {ModeGapped, "patterns"}} {
		t.Run(tc.mode, func(t *testing.T) {
			opts := opts
			opts.Mode = tc.mode
			rep := mustMine(t, scanLimitCorpus(limit+10), opts)
			if rep.Mining.RepeatsFound != limit+10 {
				t.Fatalf("%d repeats found, want %d", rep.Mining.RepeatsFound, limit+10)
			}
			if rep.Mining.CandidatesBuilt != limit {
				t.Errorf("%d candidates built, want the scan limit %d", rep.Mining.CandidatesBuilt, limit)
			}
			want := fmt.Sprintf("looked at the %d highest-ranked of %d %s and found fewer than 1 distinct safe candidates", limit, limit+10, tc.what)
			var found bool
			for _, w := range rep.Warnings {
				found = found || w.Code == candidate.CodeScanLimit && strings.Contains(w.Message, want)
			}
			if !found {
				t.Errorf("warnings %+v, want %s %q", rep.Warnings, candidate.CodeScanLimit, want)
			}
			// Rejected candidates are listed up to the safe ones asked
			// for, and the others counted.
			if len(rep.RejectedCandidates) != 1 {
				t.Errorf("%d rejected candidates listed, want 1", len(rep.RejectedCandidates))
			}
			omitted := fmt.Sprintf("%d more rejected candidates are not listed", limit-1)
			if !slices.ContainsFunc(rep.Warnings, func(w candidate.Problem) bool {
				return w.Code == "rejected_candidates_omitted" && w.Message == omitted
			}) {
				t.Errorf("warnings %+v, want rejected_candidates_omitted %q", rep.Warnings, omitted)
			}

			// Under the limit, nothing is cut and nothing is said.
			rep = mustMine(t, scanLimitCorpus(limit-10), opts)
			for _, w := range rep.Warnings {
				if w.Code == candidate.CodeScanLimit {
					t.Errorf("%d repeats under a limit of %d: warning %+v", limit-10, limit, w)
				}
			}
			if rep.Mining.CandidatesBuilt != limit-10 {
				t.Errorf("%d candidates built, want all %d", rep.Mining.CandidatesBuilt, limit-10)
			}
		})
	}
}

// TestCommitVariants mines the shape commits have in real sessions: git
// add comes before every commit, but the commit that follows it is one of
// several variants (a message, a message file), so each variant follows
// git add in a minority of its runs; and a session commits more than once,
// pushing only after a later commit. Both "add, commit" and "add, commit,
// push" are procedures a person would name. The first needs the noise rule
// to keep a pair whose other step anchors it (anchors); the second needs
// the rule to look at every time a session does add and commit, not the
// first only (embedAll).
func TestCommitVariants(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	add := func(i int) trace.Action {
		return cmd("", "git add", fmt.Sprintf(`{"paths":["f%d.go","g%d.go"]}`, i, i))
	}
	commit := func(i int) trace.Action { return cmd("", "git commit", fmt.Sprintf(`{"message":"change %d"}`, i)) }
	commitFile := func() trace.Action { return cmd("", "git commit", `{"file":"msg.txt"}`) }
	push := func() trace.Action { return cmd("", "git push", "") }
	// other is work unrelated to committing, more than the gap.
	other := func() []trace.Action {
		var out []trace.Action
		for range DefaultMaxGap + 4 {
			out = append(out, cmd("", fmt.Sprintf("tool%d", r.IntN(40)), ""))
		}
		return out
	}
	var traces []*trace.Trace
	for i := range 20 {
		var actions []trace.Action
		switch {
		case i < 8:
			actions = append([]trace.Action{add(i), commit(i)}, other()...)
			if i < 6 {
				actions = append(actions, add(100+i), commit(100+i), push())
			}
		case i < 14:
			actions = append([]trace.Action{add(i), commitFile()}, other()...)
		default:
			actions = append([]trace.Action{add(i)}, other()...)
		}
		traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
	}
	rep := mustMine(t, traces, Options{Mode: ModeGapped})
	found := map[string]int{}
	for _, c := range rep.Candidates {
		if len(c.SequenceSignature) < 2 || c.SequenceSignature[1] != "tool_call:git commit:message" {
			continue
		}
		found[strings.Join(stepNames(&c), " → ")] = c.Support
	}
	want := map[string]int{"git add → git commit": 8, "git add → git commit → git push": 6}
	if diff := cmp.Diff(want, found); diff != "" {
		var got []string
		for _, c := range rep.Candidates {
			got = append(got, strings.Join(stepNames(&c), " → "))
		}
		t.Errorf("procedures with git commit -m, by sessions (-want +got):\n%s\ncandidates: %q", diff, got)
	}
}
