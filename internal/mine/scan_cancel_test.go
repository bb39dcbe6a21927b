package mine

import (
	"context"
	"errors"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestCancelWhileReadingStops checks that a run cancelled while the
// second pass reads traces (an interrupted run over a large corpus)
// stops with context.Canceled and no report, reading nothing more once
// the read in progress is judged: neither the next batch of candidates
// nor the next chunk of a sample's other examples.
func TestCancelWhileReadingStops(t *testing.T) {
	cases := []struct {
		name    string
		traces  []*trace.Trace
		opts    Options
		windows bool
		// maxAfter is the reads allowed after the cancelled one: an
		// example failing on its window is judged again on its whole
		// trace before the chunk is done.
		maxAfter int
	}{
		{"contiguous, sampled", sampleCorpus(40, -1, -1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1}, true, 0},
		{"contiguous, sampled, judged again whole", sampleCorpus(40, -1, -1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1,
			Verify: failVerifier{fail: map[string]bool{"t013": true, "t021": true}, checked: new(int)}}, true, 1},
		{"contiguous, many candidates", tracetest.Generate(tracetest.Config{Traces: 30, Seed: 2}).Traces, Options{MinExamples: 3, ExampleCache: 1}, false, 0},
		{"gapped, sampled", sessionCorpus(24, 1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1}, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := func(cancelAt int) (*candidate.Report, int, int, error) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s, err := NewScan(tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				read := &failingRead{}
				for _, tr := range tc.traces {
					if s.Add(Summarize(tr)) >= 0 {
						read.eligible = append(read.eligible, tr)
					}
				}
				after := 0
				read.onCall = func(call int) {
					if call == cancelAt {
						cancel()
					}
					if cancelAt > 0 && call > cancelAt {
						after++
					}
				}
				var windows FetchWindows
				if tc.windows {
					windows = read.fetchWindows
				}
				r, err := s.MineWindows(ctx, read.fetch, windows)
				return r, read.calls, after, err
			}
			_, calls, _, err := run(0)
			if err != nil {
				t.Fatal(err)
			}
			if calls < 3 {
				t.Fatalf("%d reads: too few to cancel between", calls)
			}
			for k := 1; k < calls; k++ {
				r, _, after, err := run(k)
				if !errors.Is(err, context.Canceled) || r != nil {
					t.Errorf("cancelled in read %d of %d: report %v, error %v; want no report and context.Canceled", k, calls, r != nil, err)
				}
				if after > tc.maxAfter {
					t.Errorf("cancelled in read %d of %d: %d reads after it, want at most %d", k, calls, after, tc.maxAfter)
				}
			}
		})
	}
}
