package mine

import (
	"context"
	"errors"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

var errRead = errors.New("disk went away")

// failingRead is a second pass's reads of traces and windows that fail
// from the call numbered failAt on (1-based; 0 never fails), counting the
// calls and telling each to onCall when set.
type failingRead struct {
	eligible []*trace.Trace
	failAt   int
	calls    int
	onCall   func(call int)
}

func (f *failingRead) fail() bool {
	f.calls++
	if f.onCall != nil {
		f.onCall(f.calls)
	}
	return f.failAt > 0 && f.calls >= f.failAt
}

func (f *failingRead) fetch(_ context.Context, idx []int32) ([]*trace.Trace, error) {
	if f.fail() {
		return nil, errRead
	}
	out := make([]*trace.Trace, len(idx))
	for i, q := range idx {
		c := *f.eligible[q]
		out[i] = &c
	}
	return out, nil
}

func (f *failingRead) fetchWindows(_ context.Context, idx []int32, windows []trace.Window) ([]*trace.Trace, error) {
	if f.fail() {
		return nil, errRead
	}
	out := make([]*trace.Trace, len(idx))
	for i, q := range idx {
		out[i] = f.eligible[q].Window(windows[i])
	}
	return out, nil
}

// TestReadFailureStopsMining checks that a trace that cannot be read back
// in the second pass, whichever read it is (building a candidate, checking
// the examples outside its sample, reading them as windows or whole,
// judging one again on its whole trace), stops mining with that error
// instead of a report built without it.
func TestReadFailureStopsMining(t *testing.T) {
	allPass := failVerifier{fail: map[string]bool{}, checked: new(int)}
	cases := []struct {
		name    string
		traces  []*trace.Trace
		opts    Options
		windows bool
	}{
		{"contiguous, sampled, read whole", sampleCorpus(40, -1, -1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1}, false},
		{"contiguous, sampled, read as windows", sampleCorpus(40, -1, -1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1}, true},
		{"contiguous, sampled, judged again whole", sampleCorpus(40, -1, -1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1,
			Verify: failVerifier{fail: map[string]bool{"t013": true, "t021": true}, checked: new(int)}}, true},
		{"contiguous, judged on windows", sampleCorpus(40, -1, -1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1, Verify: allPass}, true},
		{"gapped, sampled", sessionCorpus(24, 1), Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := func(failAt int) (*candidate.Report, int, error) {
				s, err := NewScan(tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				read := &failingRead{failAt: failAt}
				for _, tr := range tc.traces {
					if s.Add(Summarize(tr)) >= 0 {
						read.eligible = append(read.eligible, tr)
					}
				}
				var windows FetchWindows
				if tc.windows {
					windows = read.fetchWindows
				}
				r, err := s.MineWindows(context.Background(), read.fetch, windows)
				return r, read.calls, err
			}
			want, calls, err := run(0)
			if err != nil {
				t.Fatal(err)
			}
			sampled := false
			for _, c := range want.Candidates {
				for _, w := range c.Warnings {
					sampled = sampled || w.Code == candidate.CodeExampleSample
				}
			}
			if !sampled {
				t.Fatal("no candidate was built from a sample: no example outside one is read")
			}
			for k := 1; k <= calls; k++ {
				r, _, err := run(k)
				if !errors.Is(err, errRead) || r != nil {
					t.Errorf("read %d of %d failing: report %v, error %v; want no report and the read's error", k, calls, r != nil, err)
				}
			}
		})
	}
}
