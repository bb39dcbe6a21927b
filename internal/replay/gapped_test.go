package replay

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestShadowGapped checks that a candidate mined with gaps is compared the
// way it was mined: its examples at their matched positions, with the
// observations, failed attempts, retry repairs and side-effect-free
// actions between steps tolerated and counted, while an interleaved action
// that changes something or needs a person still fails the trace, and a
// contiguous candidate still fails on any extra action.
func TestShadowGapped(t *testing.T) {
	observe := func(tr *trace.Trace, i int) { tr.Actions[i].Kind = trace.KindObservation }
	fail := func(tr *trace.Trace, i int) { tr.Actions[i].Metadata = map[string]any{"exit_code": json.Number("1")} }
	write := func(tr *trace.Trace, i int) {
		tr.Actions[i].SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "x", Capability: "fs.write"}}
	}
	approve := func(tr *trace.Trace, i int) { tr.Actions[i].Approval = &trace.Approval{Required: true} }

	tests := []struct {
		name            string
		actions         string
		edit            func(*trace.Trace)
		positions       []int // the example's positions; nil: held out
		contiguous      bool  // the candidate records no positions
		failures        int   // the examples in which step B failed
		wantStatus      string
		wantInterleaved int
		wantCode        string // a detail the trace must report
	}{
		{
			name: "source at its positions", actions: "A read B lint C", positions: []int{0, 2, 4},
			edit:       func(tr *trace.Trace) { observe(tr, 1) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			name: "held out with reads between steps", actions: "X A read B read C Y",
			edit:       func(tr *trace.Trace) { observe(tr, 2); observe(tr, 4) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			name: "retried step pairs with its success", actions: "A B edit B C",
			edit:       func(tr *trace.Trace) { fail(tr, 1); write(tr, 2); tr.Actions[2].Kind = trace.KindFileMutation },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			// Only the repair edits of a retry are tolerated, as mining
			// folds only those: another write in the window is
			// something the workflow would not do.
			name: "write that is no edit inside a retry fails", actions: "A B deploy B C",
			edit:       func(tr *trace.Trace) { fail(tr, 1); write(tr, 2) },
			wantStatus: candidate.StatusFail, wantInterleaved: 1,
		},
		{
			name: "interleaved write fails", actions: "A B edit C",
			edit:       func(tr *trace.Trace) { write(tr, 2) },
			wantStatus: candidate.StatusFail,
		},
		{
			name: "interleaved approval fails", actions: "A B ask C",
			edit:       func(tr *trace.Trace) { approve(tr, 2) },
			wantStatus: candidate.StatusFail,
		},
		{
			name: "source whose gap holds a write falls back and fails", actions: "A edit B C", positions: []int{0, 2, 3},
			edit:       func(tr *trace.Trace) { write(tr, 1) },
			wantStatus: candidate.StatusFail,
		},
		// Positions come from report.json and may have been edited: any
		// that do not name the steps in order are not trusted, and the
		// trace is aligned as if it recorded none.
		{
			name: "positions past the end fall back", actions: "A read B lint C", positions: []int{0, 2, 99},
			edit:       func(tr *trace.Trace) { observe(tr, 1) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			name: "negative positions fall back", actions: "A read B lint C", positions: []int{-1, 2, 4},
			edit:       func(tr *trace.Trace) { observe(tr, 1) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			name: "positions out of order fall back", actions: "A read B lint C", positions: []int{4, 2, 0},
			edit:       func(tr *trace.Trace) { observe(tr, 1) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			name: "too few positions fall back", actions: "A read B lint C", positions: []int{0, 2},
			edit:       func(tr *trace.Trace) { observe(tr, 1) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			// A rejected push, a pull, the push that went through: one
			// step, as mining folds it, with the pull between.
			name: "retry with another action between pairs with its success", actions: "A B pull B C",
			edit:       func(tr *trace.Trace) { fail(tr, 1) },
			wantStatus: candidate.StatusPass, wantInterleaved: 2,
		},
		{
			// A failure no success retried is an action like any other:
			// it pairs with its step, which succeeded in every example.
			name: "step that failed where every example succeeded fails", actions: "A B C",
			edit:       func(tr *trace.Trace) { fail(tr, 1) },
			wantStatus: candidate.StatusFail, wantCode: candidate.CodeUnexpectedFailure,
		},
		{
			name: "step that failed as an example did passes", actions: "A B C", failures: 1,
			edit:       func(tr *trace.Trace) { fail(tr, 1) },
			wantStatus: candidate.StatusPass,
		},
		{
			name: "source example whose step failed in every run passes", actions: "A read B C", positions: []int{0, 2, 3}, failures: 2,
			edit:       func(tr *trace.Trace) { observe(tr, 1); fail(tr, 2) },
			wantStatus: candidate.StatusPass, wantInterleaved: 1,
		},
		{
			name: "contiguous candidate fails on a read", actions: "A read B C", contiguous: true,
			edit:       func(tr *trace.Trace) { observe(tr, 1) },
			wantStatus: candidate.StatusFail,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := seq("t", tt.actions)
			tt.edit(tr)
			c := cand("A B C")
			c.Steps[1].Failures = tt.failures
			// The examples say how the candidate was mined.
			ex := candidate.Example{TraceID: "other", SourceHash: "sha256:other", Positions: []int{0, 1, 2}}
			if tt.contiguous {
				ex.Positions = nil
			}
			sources := []*trace.Trace{seq("other", "A B C")}
			var heldout []*trace.Trace
			c.Examples = []candidate.Example{ex}
			if tt.positions != nil {
				c.Examples = append(c.Examples, candidate.Example{TraceID: "t", SourceHash: "sha256:t", StartIndex: tt.positions[0], Positions: tt.positions})
				sources = append(sources, tr)
			} else {
				heldout = []*trace.Trace{tr}
			}
			rep := Shadow(c, sources, heldout)
			st := rep.Traces[len(rep.Traces)-1]
			if st.Status != tt.wantStatus || st.Interleaved != tt.wantInterleaved {
				t.Errorf("status %s, interleaved %d; want %s, %d (details %v)", st.Status, st.Interleaved, tt.wantStatus, tt.wantInterleaved, st.Details)
			}
			if tt.wantCode != "" && !slices.ContainsFunc(st.Details, func(p candidate.Problem) bool { return p.Code == tt.wantCode }) {
				t.Errorf("details %v, want one with code %s", st.Details, tt.wantCode)
			}
			if st.Status == candidate.StatusPass && st.Fitness != 1 {
				t.Errorf("fitness %v of a passing trace, want 1", st.Fitness)
			}
		})
	}
}
