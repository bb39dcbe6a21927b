package mine

import (
	"math"
	"testing"
)

// TestExcessBeyondChance checks the effect size the noise rule reads: the
// share of runs with an action beyond what chance gives, the share
// itself when chance gives none, and none when chance gives every run.
func TestExcessBeyondChance(t *testing.T) {
	for _, tt := range []struct{ r, p, want float64 }{
		{0.4, 0, 0.4},
		{0.75, 0.5, 0.5},
		{0.5, 0.5, 0},
		{1, 1, 0},
		{0.9, 1, 0},
	} {
		if got := excess(tt.r, tt.p); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("excess(%v, %v) = %v, want %v", tt.r, tt.p, got, tt.want)
		}
	}
}

// TestChernoffBound checks the bound on how likely chance alone puts an
// action in a share r of n runs: certain when r is no more than chance,
// impossible when chance never does, p^n for every run, and
// exp(−n·KL(r‖p)) between.
func TestChernoffBound(t *testing.T) {
	kl := func(r, p float64) float64 { return r*math.Log(r/p) + (1-r)*math.Log((1-r)/(1-p)) }
	for _, tt := range []struct{ r, p, n, want float64 }{
		{0.3, 0.3, 10, 1},
		{0.2, 0.3, 10, 1},
		{0.5, 0, 10, 0},
		{1, 0.5, 4, math.Pow(0.5, 4)},
		{0.5, 0.25, 10, math.Exp(-10 * kl(0.5, 0.25))},
		{0.9, 0.6, 20, math.Exp(-20 * kl(0.9, 0.6))},
	} {
		if got := chernoff(tt.r, tt.p, tt.n); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("chernoff(%v, %v, %v) = %v, want %v", tt.r, tt.p, tt.n, got, tt.want)
		}
	}
}
