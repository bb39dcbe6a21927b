package redact

import (
	"math/rand/v2"
	"testing"
)

// TestCredentialRunRecall measures the long-credential heuristic on
// uniform random strings, the shape of generated credentials, and pins its
// miss rate by length.
func TestCredentialRunRecall(t *testing.T) {
	const base62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		alphabet string
		n        int
		maxMiss  float64
	}{
		{base62, 32, 0.03},
		{base62, 40, 0.01},
		{base62, 64, 0.005},
		{base62 + "+/", 32, 0.03},
		{base62 + "+/", 44, 0.01},
		{base62 + "-_", 86, 0.005},
	} {
		const trials = 5000
		miss := 0
		b := make([]byte, tc.n)
		for range trials {
			for i := range b {
				b[i] = tc.alphabet[r.IntN(len(tc.alphabet))]
			}
			if !credentialRun(string(b)) {
				miss++
			}
		}
		rate := float64(miss) / trials
		t.Logf("alphabet of %d, length %d: miss rate %.4f", len(tc.alphabet), tc.n, rate)
		if rate > tc.maxMiss {
			t.Errorf("alphabet of %d, length %d: miss rate %.4f, want at most %.4f", len(tc.alphabet), tc.n, rate, tc.maxMiss)
		}
	}
}
