package mine

import (
	"context"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestScanFetchWindowsMismatch checks that a second pass whose
// FetchWindows hands back the wrong number of windows, or a window whose
// actions are not the ones asked for (the trace changed since the scan),
// stops with an error instead of checking the examples against it.
func TestScanFetchWindowsMismatch(t *testing.T) {
	traces := sampleCorpus(40, -1, -1)
	for _, tc := range []struct {
		name    string
		windows func(eligible []*trace.Trace) FetchWindows
		want    string
	}{
		{"too few", func(eligible []*trace.Trace) FetchWindows {
			return func(_ context.Context, idx []int32, w []trace.Window) ([]*trace.Trace, error) {
				return []*trace.Trace{eligible[idx[0]].Window(w[0])}, nil
			}
		}, "read back 1 windows"},
		{"shorter window", func(eligible []*trace.Trace) FetchWindows {
			return func(_ context.Context, idx []int32, w []trace.Window) ([]*trace.Trace, error) {
				out := make([]*trace.Trace, len(idx))
				for i, q := range idx {
					out[i] = eligible[q].Window(trace.Window{Lo: w[i].Lo, Hi: w[i].Hi - 1})
				}
				return out, nil
			}
		}, "changed between the passes"},
		{"nil window", func([]*trace.Trace) FetchWindows {
			return func(_ context.Context, idx []int32, _ []trace.Window) ([]*trace.Trace, error) {
				return make([]*trace.Trace, len(idx)), nil
			}
		}, "changed between the passes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewScan(Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1})
			if err != nil {
				t.Fatal(err)
			}
			read := &failingRead{}
			for _, tr := range traces {
				if s.Add(Summarize(tr)) >= 0 {
					read.eligible = append(read.eligible, tr)
				}
			}
			r, err := s.MineWindows(context.Background(), read.fetch, tc.windows(read.eligible))
			if err == nil || !strings.Contains(err.Error(), tc.want) || r != nil {
				t.Errorf("MineWindows = report %v, error %v; want no report and an error containing %q", r != nil, err, tc.want)
			}
		})
	}
}
