package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestShadowPinnedPositions checks that a source example is compared at
// the positions or the start mining recorded, with the moves of that
// occurrence, while positions or a start that do not name the steps in
// the trace are not trusted: the trace is then aligned as if it recorded
// none, here at the first occurrence.
func TestShadowPinnedPositions(t *testing.T) {
	tests := []struct {
		name        string
		example     candidate.Example
		moves       []string
		interleaved int
	}{
		{"gapped, at its positions", candidate.Example{Positions: []int{2, 4}}, []string{"=1@2", "=2@4"}, 1},
		{"gapped, positions of other actions", candidate.Example{Positions: []int{1, 4}}, []string{"=1@0", "=2@1"}, 0},
		{"gapped, positions past the end", candidate.Example{Positions: []int{2, 5}}, []string{"=1@0", "=2@1"}, 0},
		{"contiguous, at its start", candidate.Example{StartIndex: 3}, []string{"=1@3", "=2@4"}, 0},
		{"contiguous, start past the end", candidate.Example{StartIndex: 4}, []string{"=1@0", "=2@1"}, 0},
		{"contiguous, negative start", candidate.Example{StartIndex: -1}, []string{"=1@0", "=2@1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := seq("t", "A B x A B")
			if tt.example.Positions != nil {
				tr = seq("t", "A B A read B")
				tr.Actions[3].Kind = trace.KindObservation
			}
			c := cand("A B")
			ex := tt.example
			ex.TraceID, ex.SourceHash = tr.ID, tr.SourceHash
			c.Examples = []candidate.Example{ex}
			if ex.Positions != nil {
				// The other examples say the candidate was mined with gaps.
				c.Examples = append(c.Examples, candidate.Example{TraceID: "o", SourceHash: "sha256:o", Positions: []int{0, 1}})
			}
			rep := Shadow(c, []*trace.Trace{tr}, nil)
			st := rep.Traces[0]
			if diff := cmp.Diff(tt.moves, short(st.Alignment)); diff != "" {
				t.Errorf("alignment (-want +got):\n%s", diff)
			}
			if st.Interleaved != tt.interleaved {
				t.Errorf("interleaved %d, want %d", st.Interleaved, tt.interleaved)
			}
		})
	}
}
