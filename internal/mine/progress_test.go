package mine

import (
	"context"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

type progressCall struct{ done, total int }

// TestProgressCountsScannedPatterns checks what a progress bar is told
// while candidates are built: how many of the ranked patterns were looked
// at, of the most that will be (all found, or the scan limit when fewer),
// each count once and growing.
func TestProgressCountsScannedPatterns(t *testing.T) {
	corpus := tracetest.Generate(tracetest.Config{Traces: 100, Seed: 2})
	for _, tr := range corpus.Traces {
		trace.Normalize(tr)
	}
	gapped := sessionCorpus(60, 1)
	for _, tc := range []struct {
		name   string
		traces []*trace.Trace
		opts   Options
		// limited: the scan limit is below the patterns found.
		limited bool
	}{
		{"every pattern", corpus.Traces, Options{MinExamples: 3, MaxCandidates: 1000}, false},
		{"the scan limit", corpus.Traces, Options{MinExamples: 2, MaxCandidates: 1}, true},
		{"gapped", gapped, Options{MinExamples: 3, MaxCandidates: 1000}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls []progressCall
			opts := tc.opts
			opts.Progress = func(done, total int) { calls = append(calls, progressCall{done, total}) }
			r, err := Mine(context.Background(), tc.traces, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) == 0 {
				t.Fatal("progress never told")
			}
			wantTotal := min(r.Mining.RepeatsFound, opts.scanLimit())
			if tc.limited != (wantTotal < r.Mining.RepeatsFound) {
				t.Fatalf("%d patterns found, scan limit %d: want limited %v", r.Mining.RepeatsFound, opts.scanLimit(), tc.limited)
			}
			last := 0
			for _, c := range calls {
				if c.total != wantTotal || c.done <= last || c.done > c.total {
					t.Fatalf("progress told %v, want growing counts of at most %d", calls, wantTotal)
				}
				last = c.done
			}
			if r.Mining.Miner == ModeExact && !tc.limited && last != wantTotal {
				t.Errorf("progress ended at %v, want every one of the %d patterns looked at", calls[len(calls)-1], wantTotal)
			}
		})
	}
}
