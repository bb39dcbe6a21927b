package mine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// write is an action with a side effect: writing a message file, say.
func write(path string) trace.Action { return writeWith("Write", path) }

// writeWith is write by a tool of the given name.
func writeWith(tool, path string) trace.Action {
	a := act("", trace.KindToolCall, tool, `{"file_path":"`+path+`"}`)
	a.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: path, Capability: "fs.write"}}
	return a
}

var prSteps = []string{"git add", "git push", "gh pr create"}

func prRun(i int, between trace.Action) []trace.Action {
	return []trace.Action{
		cmd("", "git add", `{"arg1":"f`+fmt.Sprint(i)+`.go"}`),
		between,
		cmd("", "git push", `{"arg1":"origin"}`),
		cmd("", "gh pr create", `{"title":"change `+fmt.Sprint(i)+`"}`),
	}
}

// TestGappedGapRule checks that mining counts as support, and picks as
// examples, only the occurrences whose gaps hold nothing but what the gap
// rule (candidate.MayInterleave) lets sit between steps: an occurrence
// with a side-effecting action between two steps is not a run of the
// procedure, so shadow replay would refuse it.
func TestGappedGapRule(t *testing.T) {
	clean := obs("", "Read", `{"file_path":"msg.txt"}`)
	// A different tool each time, so that it is not a step of its own.
	dirty := func(i int) trace.Action { return writeWith(fmt.Sprintf("tool%d", i), "msg.txt") }
	t.Run("side effect in the gap of most traces", func(t *testing.T) {
		// Found in all ten sessions, supported by two.
		var traces []*trace.Trace
		for i := range 10 {
			between := clean
			if i >= 2 {
				between = dirty(i)
			}
			traces = append(traces, session(fmt.Sprintf("s%d", i), prRun(i, between)...))
		}
		rep := mustMine(t, traces, Options{Mode: ModeGapped, MinExamples: 3})
		for _, c := range rep.Candidates {
			if names := stepNames(&c); slices.Contains(names, "git add") && slices.Contains(names, "git push") {
				t.Errorf("found %v in %d examples; want it supported by s0 and s1 alone", names, len(c.Examples))
			}
		}
	})
	t.Run("a clean later occurrence in the same trace", func(t *testing.T) {
		var traces []*trace.Trace
		for i := range 10 {
			between := clean
			if i >= 2 {
				between = dirty(i)
			}
			actions := prRun(i, between)
			if i >= 2 {
				actions = append(actions, cmd("", "make", `{"arg1":"t"}`))
				actions = append(actions, prRun(i+10, clean)...)
			}
			traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
		}
		rep := mustMine(t, traces, Options{Mode: ModeGapped, MinExamples: 3})
		var sel *candidate.Candidate
		var found [][]string
		for i := range rep.Candidates {
			names := stepNames(&rep.Candidates[i])
			found = append(found, names)
			if slices.Equal(names, prSteps) {
				sel = &rep.Candidates[i]
			}
		}
		if sel == nil {
			t.Fatalf("candidates %v, want %v among them", found, prSteps)
		}
		if len(sel.Examples) != 10 {
			t.Fatalf("%d examples, want 10", len(sel.Examples))
		}
		for _, ex := range sel.Examples {
			// From s2 on the clean occurrence starts after the dirty
			// one (4 actions) and the make.
			want := []int{0, 2, 3}
			if ex.TraceID != "s0" && ex.TraceID != "s1" {
				want = []int{5, 7, 8}
			}
			if !slices.Equal(ex.Positions, want) {
				t.Errorf("example %s at %v, want %v", ex.TraceID, ex.Positions, want)
			}
		}
	})
}

// TestEmbedGapRule checks embed against every rule of the stops bitmap: a
// step may not be followed across an item that may not interleave, nor
// across a dropped action that may not, but may be followed by such an
// item as its next step.
func TestEmbedGapRule(t *testing.T) {
	// Items a x b c b: x (item 1) may not sit in a gap.
	items := []int32{0, 9, 1, 2, 1}
	embed := func(stops []int, syms []int32, wide int) []int32 {
		p := &prepared{seqs: []gseq{{items: items}}}
		for _, b := range stops {
			p.seqs[0].setStop(b)
		}
		p.seqs[0].index()
		return p.embed(0, syms, 8, wide)
	}
	tests := []struct {
		name  string
		stops []int
		syms  []int32
		want  []int32
	}{
		{"no stops", nil, []int32{0, 1, 2}, []int32{0, 2, 3}},
		{"item in the gap", []int{3}, []int32{0, 1, 2}, nil},
		{"dropped action in the gap", []int{4}, []int32{0, 1, 2}, nil},
		{"the stop is a step itself", []int{3}, []int32{0, 9, 1}, []int32{0, 1, 2}},
		{"dropped action before the first step", []int{0}, []int32{0, 1, 2}, []int32{0, 2, 3}},
		{"a later occurrence is clean", []int{6}, []int32{2, 1}, []int32{3, 4}},
		{"stop between the second pair", []int{6}, []int32{1, 2}, nil},
	}
	for _, tt := range tests {
		if got := embed(tt.stops, tt.syms, -1); !slices.Equal(got, tt.want) {
			t.Errorf("%s: embed %v = %v, want %v", tt.name, tt.syms, got, tt.want)
		}
	}
	// The noise rule's wide gap holds the dropped step: the rule does
	// not apply there.
	if got := embed([]int{3}, []int32{0, 1}, 1); !slices.Equal(got, []int32{0, 2}) {
		t.Errorf("wide: embed = %v, want [0 2]", got)
	}
}

// TestPrepareStops checks that prepare marks, once per action, what the
// gap rule keeps out of a gap, from the flags the first pass keeps.
func TestPrepareStops(t *testing.T) {
	ask := cmd("", "deploy", "")
	ask.Approval = &trace.Approval{Required: true}
	askRead := obs("", "Read", "")
	askRead.Approval = &trace.Approval{Required: true}
	tr := session("s",
		cmd("", "a", ""),
		write("x"),          // item 1: changes something
		failing(write("y")), // item 2: a failure did nothing
		askRead,             // dropped, but needs a person
		cmd("", "b", ""),    // item 3
		ask,                 // item 4
		obs("", "Read", ""), // dropped, tolerated
		edit("", "f.go"),    // item 5: an edit is a side effect only when it says so
	)
	p := prepare([]*trace.Trace{tr}, map[string]int32{})
	s := p.seqs[0]
	var got []int
	for b := range 2*len(s.items) + 2 {
		if s.stops != nil && s.stop(int32(b)) {
			got = append(got, b)
		}
	}
	if want := []int{2*1 + 1, 2 * 3, 2*4 + 1}; !slices.Equal(got, want) {
		t.Errorf("stop bits = %v, want %v", got, want)
	}
}

// TestMatchAllAgreesWithGapRule is a property test: on random traces, the
// embedding matchAll picks in each trace has only actions between its
// steps that candidate.MayInterleave admits, and a trace it finds no
// embedding in has none whose gaps hold only such actions.
func TestMatchAllAgreesWithGapRule(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		var traces []*trace.Trace
		for i := range 4 {
			var actions []trace.Action
			for range 4 + r.IntN(10) {
				var a trace.Action
				name := string(rune('a' + r.IntN(3)))
				switch r.IntN(6) {
				case 0:
					a = obs("", "Read", "")
				case 1:
					a = write(name)
				case 2:
					a = failing(cmd("", name, ""))
				case 3:
					a = cmd("", name, "")
					a.Approval = &trace.Approval{Required: true}
				default:
					a = cmd("", name, "")
				}
				actions = append(actions, a)
			}
			traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
		}
		symbols := map[string]int32{}
		p := prepare(traces, symbols)
		gap := int32(r.IntN(3))
		sym := func(name string) int32 {
			a := cmd("", name, "")
			if y, ok := symbols[a.Signature()]; ok {
				return y
			}
			return -1
		}
		syms := []int32{sym("a"), sym("b")}
		if r.IntN(2) == 0 {
			syms = append(syms, sym("c"))
		}
		if slices.Contains(syms, -1) {
			continue
		}
		found := map[int32]bool{}
		for _, m := range p.matchAll(syms, gap, -1, 0) {
			found[m.seq] = true
			pos := make([]int, len(m.at))
			for k, q := range m.at {
				pos[k] = int(p.seqs[m.seq].pos[q])
			}
			if !cleanGaps(traces[m.seq], pos) {
				t.Errorf("seed %d: %v embedded in %s at actions %v, whose gaps the gap rule refuses", seed, syms, traces[m.seq].ID, pos)
			}
		}
		for i, s := range p.seqs {
			if !found[int32(i)] && bruteClean(traces[i], s, syms, gap) {
				t.Errorf("seed %d: %v not embedded in %s, which has a clean embedding", seed, syms, traces[i].ID)
			}
		}
	}
}

// cleanGaps applies the gap rule to the actions between the steps at pos
// directly, from the trace.
func cleanGaps(t *trace.Trace, pos []int) bool {
	n := len(t.Actions)
	attempts := make([]candidate.Attempt, n)
	keys := map[string]int32{}
	for j := range t.Actions {
		a := &t.Actions[j]
		sig := a.Signature()
		if _, ok := keys[sig]; !ok {
			keys[sig] = int32(len(keys))
		}
		attempts[j] = candidate.Attempt{Key: keys[sig], Observation: a.Kind == trace.KindObservation, Failed: a.Failed(),
			Edit: a.Kind == trace.KindFileMutation, Changes: len(a.SideEffects) > 0 || a.Kind == trace.KindHumanApproval,
			NeedsPerson: a.Approval != nil && a.Approval.Required}
	}
	folds := make([]candidate.Fold, n)
	candidate.FoldRetries(attempts, folds, make([]int32, n), nil)
	for k := 1; k < len(pos); k++ {
		for j := pos[k-1] + 1; j < pos[k]; j++ {
			if !candidate.MayInterleave(attempts[j], folds[j]) {
				return false
			}
		}
	}
	return true
}

// bruteClean reports whether syms has an embedding in s, with at most gap
// items between steps, whose gaps are clean, trying every embedding.
func bruteClean(t *trace.Trace, s gseq, syms []int32, gap int32) bool {
	var try func(k int, from int32, pos []int) bool
	try = func(k int, from int32, pos []int) bool {
		if k == len(syms) {
			return cleanGaps(t, pos)
		}
		hi := int32(len(s.items)) - 1
		if k > 0 {
			hi = min(hi, from+gap)
		}
		for q := from; q <= hi; q++ {
			if s.items[q] == syms[k] && try(k+1, q+1, append(pos, int(s.pos[q]))) {
				return true
			}
		}
		return false
	}
	return try(0, 0, nil)
}
