package mine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// commitCorpus returns sessions that stage and commit in 6 sessions, and
// in the first `after` of them do after (when not nil) right after the
// commit; elsewhere puts after at random places in every session too,
// and adds sessions without the procedure that do it, as agents do with a
// build.
func commitCorpus(seed uint64, after func() trace.Action, in int, elsewhere bool) []*trace.Trace {
	r := rand.New(rand.NewPCG(seed, 5))
	var traces []*trace.Trace
	for i := range 6 {
		steps := []trace.Action{
			cmd("", "git add", fmt.Sprintf(`{"paths":"f%d.go"}`, i)),
			cmd("", "git commit", fmt.Sprintf(`{"message":"change %d"}`, i)),
		}
		if i < in {
			steps = append(steps, after())
		}
		actions, _ := noisy(r, steps)
		if elsewhere {
			for range 3 + r.IntN(4) {
				actions = slices.Insert(actions, r.IntN(len(actions)+1), after())
			}
		}
		traces = append(traces, session(fmt.Sprintf("s%02d", i), actions...))
	}
	if elsewhere {
		for i := range 6 {
			actions, _ := noisy(r, []trace.Action{after(), after(), cmd("", "go test", `{"arg1":"./..."}`), after()})
			traces = append(traces, session(fmt.Sprintf("x%02d", i), actions...))
		}
	}
	return traces
}

func findSteps(cs []candidate.Candidate, names ...string) *candidate.Candidate {
	for i := range cs {
		if slices.Equal(stepNames(&cs[i]), names) {
			return &cs[i]
		}
	}
	return nil
}

// TestGappedLongerVariant checks that a step the noise rule drops for
// coverage still makes a candidate of the longer procedure where that
// holds in enough sessions of its own: stage and commit in 6 sessions,
// and push after them in 4, are two procedures people name.
func TestGappedLongerVariant(t *testing.T) {
	push := func() trace.Action { return cmd("", "git push", `{"remote":"origin","branch":"main"}`) }
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rep := mustMine(t, commitCorpus(seed, push, 4, false), Options{})
			core := findSteps(rep.Candidates, "git add", "git commit")
			long := findSteps(rep.Candidates, "git add", "git commit", "git push")
			if core == nil || long == nil {
				var got [][]string
				for i := range rep.Candidates {
					got = append(got, stepNames(&rep.Candidates[i]))
				}
				t.Fatalf("candidates %v, want add→commit and add→commit→push", got)
			}
			if core.Support != 6 || long.Support != 4 {
				t.Errorf("support: add→commit %d, add→commit→push %d; want 6 and 4", core.Support, long.Support)
			}
			if rep.Candidates[0].ID != core.ID {
				t.Errorf("selected %v, want add→commit, which ranks first (6²×2 > 4²×3)", stepNames(&rep.Candidates[0]))
			}
			n := 0
			for i := range rep.Candidates {
				if slices.Equal(stepNames(&rep.Candidates[i]), []string{"git add", "git commit"}) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("add→commit listed %d times, want once", n)
			}

			// In one session of its own it is no candidate.
			rep = mustMine(t, commitCorpus(seed, push, 1, false), Options{})
			if c := findSteps(rep.Candidates, "git add", "git commit", "git push"); c != nil {
				t.Errorf("add→commit→push in one session: a candidate with support %d", c.Support)
			}
		})
	}
}

// TestGappedNoVariantOfNoise checks that a common action that sits after
// the procedure in most runs, as a build does, makes no longer variant:
// it is there no more than chance puts it there.
func TestGappedNoVariantOfNoise(t *testing.T) {
	build := func() trace.Action { return cmd("", "go build", `{"arg1":"./..."}`) }
	for seed := range uint64(3) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rep := mustMine(t, commitCorpus(seed, build, 4, true), Options{})
			if findSteps(rep.Candidates, "git add", "git commit") == nil {
				t.Fatalf("no add→commit candidate: %+v", rep.Warnings)
			}
			for i := range rep.Candidates {
				names := stepNames(&rep.Candidates[i])
				if len(names) > 2 && slices.Contains(names, "git commit") {
					t.Errorf("candidate %v: the build is noise, not a step", names)
				}
			}
		})
	}
}

// TestDenoiseVariants applies the noise rule to add→commit→X directly,
// whatever the search would grow: push, rare elsewhere, after the commit
// in 4 of 6 runs is dropped from the procedure for coverage and makes a
// variant; a build, common everywhere, after the commit in 4 of 6 runs is
// dropped too but makes none: chance puts it there in most runs anyway,
// so it is not there significantly more often.
func TestDenoiseVariants(t *testing.T) {
	push := func() trace.Action { return cmd("", "git push", `{"remote":"origin","branch":"main"}`) }
	build := func() trace.Action { return cmd("", "go build", `{"arg1":"./..."}`) }
	tests := []struct {
		name      string
		after     func() trace.Action
		elsewhere bool
		variant   bool
	}{
		{"a rare push after the commit", push, false, true},
		{"a common build after the commit", build, true, false},
	}
	for _, tt := range tests {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed=%d", tt.name, seed), func(t *testing.T) {
				s, err := NewScan(Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, tr := range commitCorpus(seed, tt.after, 4, tt.elsewhere) {
					s.Add(Summarize(tr))
				}
				p := prepareSeqs(s.seqs, s.flags, len(s.symbols))
				add, commit := s.symbols["tool_call:git add:paths"], s.symbols["tool_call:git commit:message"]
				xa := tt.after()
				x := s.symbols[xa.Signature()]
				kept, _, dropped, variants := p.denoiseVariants([]int32{add, commit, x}, DefaultMaxGap, true)
				if !slices.Equal(kept, []int32{add, commit}) || dropped != 1 {
					t.Fatalf("kept %v (dropped %d), want add→commit %v", kept, dropped, []int32{add, commit})
				}
				switch {
				case tt.variant && (len(variants) != 1 || !slices.Equal(variants[0].syms, []int32{add, commit, x}) || len(variants[0].matches) != 4):
					t.Errorf("variants %+v, want add→commit→x in its 4 runs", variants)
				case !tt.variant && len(variants) != 0:
					t.Errorf("variants %+v, want none", variants)
				}
				if _, _, _, none := p.denoiseVariants([]int32{add, commit, x}, DefaultMaxGap, false); none != nil {
					t.Errorf("variants %+v when not asked for", none)
				}
			})
		}
	}
}

// TestGappedNoVariantOfCommonActions mines sessions with five planted
// procedures among reads, edits, builds and test runs, which follow a
// procedure about as often as anything: at a few thousand sessions an
// edit or a test run right after a procedure in some more of its runs
// than chance is significant, yet it is not a procedure of its own.
// Exactly the five come out.
func TestGappedNoVariantOfCommonActions(t *testing.T) {
	if testing.Short() {
		t.Skip("mines 4,000 sessions")
	}
	rep := mustMine(t, sessionCorpus(4000, 1), Options{MinExamples: 3})
	if len(rep.Candidates) != 5 {
		var got [][]string
		for i := range rep.Candidates {
			got = append(got, stepNames(&rep.Candidates[i]))
		}
		t.Fatalf("%d candidates %v, want the 5 planted procedures", len(rep.Candidates), got)
	}
}
