package mine

import (
	"slices"
	"testing"
)

// TestIndexAnySeesCallerSymbols checks that any, which ranking uses to
// tell procedures without copying a repeat's symbols, hands f the
// caller's symbols in order, as Symbols returns them, also when the
// alphabet was compressed (symbols negative or sparse); that it stops at
// the first that f accepts; and that a repeat not of the index holds
// none.
func TestIndexAnySeesCallerSymbols(t *testing.T) {
	for name, seqs := range map[string][][]int32{
		"dense":  {{0, 1, 2, 3}, {4, 1, 2, 3}, {1, 2, 5}},
		"sparse": {{900, -7, 4000, 12}, {55, -7, 4000, 12}, {-7, 4000, 31}},
	} {
		t.Run(name, func(t *testing.T) {
			idx := NewIndex(seqs)
			repeats := idx.Repeats(2, 2)
			if len(repeats) == 0 {
				t.Fatal("no repeat")
			}
			for _, r := range repeats {
				var seen []int32
				if idx.any(r, func(y int32) bool { seen = append(seen, y); return false }) {
					t.Errorf("any(%v) with f never true = true", idx.Symbols(r))
				}
				if !slices.Equal(seen, idx.Symbols(r)) {
					t.Errorf("any handed %v, want the repeat's symbols %v", seen, idx.Symbols(r))
				}
				second := idx.Symbols(r)[1]
				calls := 0
				if !idx.any(r, func(y int32) bool { calls++; return y == second }) || calls != 2 {
					t.Errorf("any(%v) looking for its second symbol: %d calls, want true after 2", idx.Symbols(r), calls)
				}
			}
			if idx.any(Repeat{}, func(int32) bool { return true }) {
				t.Error("any of a repeat not of the index = true")
			}
		})
	}
}
