package synth

import "testing"

// TestCycleMovesEveryRow pins what permute_rows promises: the permutation
// is one cycle through all rows, so no row stays in place and a property
// cannot pass because the transform happened to leave the data as it was.
func TestCycleMovesEveryRow(t *testing.T) {
	for n := 2; n <= 40; n++ {
		for seed := uint64(0); seed < 20; seed++ {
			perm := cycle(n, seed)
			seen := make([]bool, n)
			for i, j := range perm {
				if j == i {
					t.Fatalf("cycle(%d, %d) = %v leaves row %d in place", n, seed, perm, i)
				}
				if j < 0 || j >= n || seen[j] {
					t.Fatalf("cycle(%d, %d) = %v is not a permutation", n, seed, perm)
				}
				seen[j] = true
			}
			length, i := 0, 0
			for {
				i = perm[i]
				length++
				if i == 0 {
					break
				}
			}
			if length != n {
				t.Fatalf("cycle(%d, %d) = %v has a cycle of %d, want one of %d", n, seed, perm, length, n)
			}
		}
	}
}
