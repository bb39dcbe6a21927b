package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestConsensusOutput pins what makes a step's outputs agree: the same
// shape where outputs were recorded. A run with no output recorded (an
// agent's log keeps none for a command that printed nothing) is no
// evidence against the others, but it keeps the step from asserting an
// expected output; outputs of different shapes disagree.
func TestConsensusOutput(t *testing.T) {
	view := func(outs ...any) stepView {
		v := stepView{index: 1}
		for _, o := range outs {
			v.actions = append(v.actions, &trace.Action{Output: o})
		}
		return v
	}
	for _, tc := range []struct {
		name                 string
		v                    stepView
		wantOut              any
		recorded, consistent bool
	}{
		{"all the same", view("ok", "ok"), "ok", true, true},
		{"values differ", view("[main 1a2b] x", "[main 3c4d] y"), nil, true, true},
		{"one run recorded none", view(nil, "To origin\n", "To origin\n"), nil, true, true},
		{"shapes differ", view("text", map[string]any{"n": "1"}), nil, true, false},
		{"shapes differ, one recorded none", view(nil, "text", map[string]any{"n": "1"}), nil, true, false},
		{"none recorded", view(nil, nil), nil, false, false},
	} {
		out, recorded, consistent := consensusOutput(tc.v)
		if out != tc.wantOut || recorded != tc.recorded || consistent != tc.consistent {
			t.Errorf("%s: consensusOutput = %v, %v, %v; want %v, %v, %v", tc.name, out, recorded, consistent, tc.wantOut, tc.recorded, tc.consistent)
		}
	}
}
