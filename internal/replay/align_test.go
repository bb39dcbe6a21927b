package replay

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// short renders moves compactly: "=1@0" is step 1 synchronous with action
// 0, "+@2" the extra action 2, "-3" the missing step 3.
func short(moves []candidate.Move) []string {
	out := []string{}
	for _, m := range moves {
		switch m.Kind {
		case candidate.MoveSync:
			out = append(out, fmt.Sprintf("=%d@%d", m.Step, m.ActionIndex))
		case candidate.MoveLog:
			out = append(out, fmt.Sprintf("+@%d", m.ActionIndex))
		case candidate.MoveModel:
			out = append(out, fmt.Sprintf("-%d", m.Step))
		}
	}
	return out
}

// fit is the fitness of an alignment with bad non-synchronous moves over
// den steps and region actions, computed as the implementation must: in
// float64 (a constant expression would be exact and differ in the last
// bit).
func fit(bad, den int) float64 { return 1 - float64(bad)/float64(den) }

func alignWith(c *candidate.Candidate, t *trace.Trace) alignment {
	al := newPlan(c).newAligner()
	al.intern(t)
	return al.align(t)
}

func TestAlign(t *testing.T) {
	tests := []struct {
		name    string
		cand    string
		trace   string
		moves   []string
		fitness float64
	}{
		{"identical", "a b c d", "a b c d", []string{"=1@0", "=2@1", "=3@2", "=4@3"}, 1},
		{"free prefix and suffix", "a b c d", "x a b c d y", []string{"=1@1", "=2@2", "=3@3", "=4@4"}, 1},
		// 1 model move; 4 steps and 3 region actions.
		{"missing step", "a b c d", "a b d", []string{"=1@0", "=2@1", "-3", "=4@2"}, fit(1, 7)},
		// 1 log move; 4 steps and 5 region actions.
		{"extra step", "a b c d", "a b x c d", []string{"=1@0", "=2@1", "+@2", "=3@3", "=4@4"}, fit(1, 9)},
		// A swapped pair costs one model and one log move: 4 steps, 4
		// actions. Of the equally good alignments the table prefers the
		// one that keeps the earlier step.
		{"reordered pair", "a b c d", "a c b d", []string{"=1@0", "+@1", "=2@2", "-3", "=4@3"}, fit(2, 8)},
		{"completely different", "a b c d", "x y z", []string{"-1", "-2", "-3", "-4"}, 0},
		{"empty trace", "a b", "", []string{"-1", "-2"}, 0},
		// Of the two occurrences the first is taken.
		{"repeated procedure", "a b", "a b x a b", []string{"=1@0", "=2@1"}, 1},
		// "a x b" pairs both steps at cost 1, "a" alone pairs one at the
		// same cost: more synchronous moves win.
		{"tie prefers more sync", "a b", "a x b", []string{"=1@0", "+@1", "=2@2"}, fit(1, 5)},
		// Either "a" step may be the missing one; the table takes the
		// later as the synchronous one.
		{"repeated step", "a a b", "a b", []string{"-1", "=2@0", "=3@1"}, fit(1, 5)},
		{"best region is the cheaper one", "a b c", "a x x x b y a b c", []string{"=1@6", "=2@7", "=3@8"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := alignWith(cand(tt.cand), seq("t", tt.trace))
			if diff := cmp.Diff(tt.moves, short(res.moves)); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
			m := len(cand(tt.cand).SequenceSignature)
			if got := res.fitness(m); got != tt.fitness {
				t.Errorf("fitness = %v, want %v", got, tt.fitness)
			}
		})
	}
}

// TestAlignParameterKeys checks that the parameter keys are part of the
// signature: the same tool called with other keys is another step.
func TestAlignParameterKeys(t *testing.T) {
	c := &candidate.Candidate{}
	for i, a := range []trace.Action{act("", "a", "x", "y"), act("", "b"), act("", "a", "x")} {
		c.SequenceSignature = append(c.SequenceSignature, a.Signature())
		c.Steps = append(c.Steps, candidate.Step{Index: i + 1, Kind: a.Kind, Name: a.Name})
	}
	tr := &trace.Trace{ID: "t", Actions: []trace.Action{
		act("0", "a", "y", "x"), act("1", "b"), act("2", "a", "x", "z"), act("3", "a", "x"),
	}}
	res := alignWith(c, tr)
	if diff := cmp.Diff([]string{"=1@0", "=2@1", "+@2", "=3@3"}, short(res.moves)); diff != "" {
		t.Errorf("moves (-want +got):\n%s", diff)
	}
	if got := res.moves[2].Signature; got != "tool_call:a:x,z" {
		t.Errorf("log move signature = %q, want %q", got, "tool_call:a:x,z")
	}
	// The index agrees with Action.Signature even where the signature
	// format is ambiguous: a key "x,y" reads as the keys x and y.
	odd := &trace.Trace{ID: "t", Actions: []trace.Action{act("0", "a", "x,y"), act("1", "b"), act("2", "a", "x")}}
	if odd.Actions[0].Signature() != c.SequenceSignature[0] {
		t.Fatalf("Signature(%v) = %q, want %q", odd.Actions[0].Parameters, odd.Actions[0].Signature(), c.SequenceSignature[0])
	}
	if diff := cmp.Diff([]string{"=1@0", "=2@1", "=3@2"}, short(alignWith(c, odd).moves)); diff != "" {
		t.Errorf("moves with a comma in a key (-want +got):\n%s", diff)
	}
}

// TestAlignWithoutSteps checks a candidate that has signatures but no
// step details, so the index cannot take signatures apart.
func TestAlignWithoutSteps(t *testing.T) {
	c := cand("a b")
	c.Steps = nil
	res := alignWith(c, seq("t", "x a b"))
	if diff := cmp.Diff([]string{"=1@1", "=2@2"}, short(res.moves)); diff != "" {
		t.Errorf("moves (-want +got):\n%s", diff)
	}
}

func TestJoinedEqual(t *testing.T) {
	tests := []struct {
		keys []string
		s    string
		want bool
	}{
		{nil, "", true},
		{nil, "a", false},
		{[]string{""}, "", true},
		{[]string{"a"}, "a", true},
		{[]string{"a", "b"}, "a,b", true},
		{[]string{"a", "b"}, "a;b", false},
		{[]string{"a,b"}, "a,b", true},
		{[]string{"a", "bc"}, "ab,c", false},
		{[]string{"a", "b"}, "a,bb", false},
	}
	for _, tt := range tests {
		if got := joinedEqual(tt.keys, tt.s); got != tt.want {
			t.Errorf("joinedEqual(%q, %q) = %v, want %v", tt.keys, tt.s, got, tt.want)
		}
	}
}
