package redact

import (
	"strings"
	"testing"
)

// segments builds a run from segments of one class each, 'l' lower, 'U'
// upper, 'd' digit, with the given lengths, cycling through letters past f
// and all digits so that the run is not hex and its bytes vary.
func segments(t *testing.T, spec string, lens ...int) string {
	t.Helper()
	if len(spec) != len(lens) {
		t.Fatalf("spec %q has %d segments, %d lengths", spec, len(spec), len(lens))
	}
	alpha := map[byte]string{'l': "ghijkmnpqrstuvwxyz", 'U': "GHJKLMNPQRSTUVWXYZ", 'd': "0123456789"}
	next := map[byte]int{}
	var b strings.Builder
	for i := 0; i < len(spec); i++ {
		a := alpha[spec[i]]
		for range lens[i] {
			b.WriteByte(a[next[spec[i]]%len(a)])
			next[spec[i]]++
		}
	}
	return b.String()
}

// TestCredentialRunThresholds pins the edges of the long-credential
// heuristic as its comment states them: the class changes between
// adjacent letters and digits at least minChange of the time (35 %,
// inclusive), and at most maxWordy (half, inclusive) of the bytes lie in
// runs of four or more of one class, counted wherever such a run is,
// the end of the text included.
func TestCredentialRunThresholds(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  string
		want bool
	}{
		// 41 bytes, 40 pairs, 15 segments: 14 changes, exactly 35 %.
		{"changes at the minimum", segments(t, "lUdlUdlUdlUdlUd", 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2), true},
		// 41 bytes, 14 segments: 13 changes, under 35 %.
		{"changes under the minimum", segments(t, "lUdlUdlUdlUdlU", 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2), false},
		// 40 bytes: five runs of four, 20 bytes, exactly half.
		{"wordy at the maximum", segments(t, "lUdlUdlUdlUdlUd", 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 2, 2, 2, 2, 2), true},
		// 40 bytes, 14 changes: six runs of four, the last at the end, 24
		// bytes.
		{"wordy over the maximum, ending in a run", segments(t, "lUdlUdlUdlUdlUd", 4, 2, 4, 2, 4, 2, 4, 2, 4, 2, 2, 2, 1, 1, 4), false},
		// 40 bytes, 14 changes: a run of five is wordy as a run of four.
		{"wordy over the maximum, runs of five", segments(t, "lUdlUdlUdlUdlUd", 5, 2, 5, 2, 5, 2, 5, 2, 5, 1, 1, 1, 1, 1, 2), false},
	} {
		if got := credentialRun(tc.run); got != tc.want {
			t.Errorf("%s: credentialRun(%q) = %v, want %v", tc.name, tc.run, got, tc.want)
		}
	}
}
