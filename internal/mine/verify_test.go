package mine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// failVerifier stands in for shadow replay's judgement: it lists every
// sixth example and fails the examples of the traces in fail.
type failVerifier struct {
	fail    map[string]bool
	checked *int
}

func (v failVerifier) Listed(n int) []bool {
	listed := make([]bool, n)
	for i := 0; i < n; i += 6 {
		listed[i] = true
	}
	return listed
}

func (v failVerifier) Check(c *candidate.Candidate) func([]*candidate.Example, []*trace.Trace) []bool {
	return func(exs []*candidate.Example, ts []*trace.Trace) []bool {
		out := make([]bool, len(exs))
		for i, t := range ts {
			if t.ID != exs[i].TraceID {
				panic(fmt.Sprintf("example of %s checked against trace %s", exs[i].TraceID, t.ID))
			}
			out[i] = !v.fail[t.ID]
			*v.checked++
		}
		return out
	}
}

// memVerdicts is an ExampleVerdicts in memory, counting what it is asked
// and told.
type memVerdicts struct {
	m               map[candidate.VerdictKey]candidate.Verdict
	asked, recorded int
}

func (m *memVerdicts) Passed(_ context.Context, keys []candidate.VerdictKey) ([]*candidate.Example, error) {
	out := make([]*candidate.Example, len(keys))
	for i, k := range keys {
		m.asked++
		if v, ok := m.m[k]; ok && v.Passed {
			ex := v.Example
			out[i] = &ex
		}
	}
	return out, nil
}

func (m *memVerdicts) Record(_ context.Context, verdicts []candidate.Verdict) error {
	for _, v := range verdicts {
		m.m[v.Key] = v
		m.recorded++
	}
	return nil
}

// TestVerifyInSampleRead mines a corpus whose one candidate is built from
// a sample of 10 of its 60 examples, with shadow replay's judgement asked
// in the read that checks the other 50: the report is the same as
// without, each of the 50 is judged once, Verified marks exactly the
// passing ones the shadow report does not list, and
// UnverifiedExampleBatches hands over only the others. Remembered
// verdicts then let a second run skip reading those, with the same
// report.
func TestVerifyInSampleRead(t *testing.T) {
	const n, bound = 60, 10
	traces := sampleCorpus(n, -1, -1)
	base := Options{MinExamples: 3, ExampleSample: bound, GeneratedAt: "2026-01-01T00:00:00Z"}
	want, _ := twoPass(t, traces, base)
	if len(want.Candidates) != 1 || len(want.Candidates[0].Examples) != n {
		t.Fatalf("want one candidate of %d examples, got %d candidates", n, len(want.Candidates))
	}

	checked := 0
	v := failVerifier{fail: map[string]bool{"t013": true, "t020": true}, checked: &checked}
	cache := &memVerdicts{m: map[candidate.VerdictKey]candidate.Verdict{}}
	run := func() (*candidate.Report, *Scan, int) {
		opts := base
		opts.Verify, opts.Verdicts = v, cache
		s, err := NewScan(opts)
		if err != nil {
			t.Fatal(err)
		}
		var eligible []*trace.Trace
		for _, tr := range traces {
			if s.Add(Summarize(tr)) >= 0 {
				eligible = append(eligible, tr)
			}
		}
		s.opts.SourceHash = func(q int32) string { return eligible[q].SourceHash }
		fetched := 0
		r, err := s.Mine(context.Background(), func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
			out := make([]*trace.Trace, len(idx))
			for i, q := range idx {
				c := *eligible[q]
				out[i] = &c
			}
			fetched += len(idx)
			return out, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return r, s, fetched
	}
	got, s, fetched := run()
	if !bytes.Equal(encode(t, got), encode(t, want)) {
		t.Fatalf("report with verification differs:\n%s", firstDiff(encode(t, got), encode(t, want)))
	}
	c := got.Candidates[0]
	picked := sampleIndexes(n, bound)
	// An example that fails on the window of its steps is judged again
	// on its whole trace.
	failedOutside := 0
	for e, ex := range c.Examples {
		if v.fail[ex.TraceID] && !slices.Contains(picked, e) {
			failedOutside++
		}
	}
	if failedOutside == 0 {
		t.Fatal("no failing example outside the sample: the test checks nothing of the second judgement")
	}
	if checked != n-bound+failedOutside {
		t.Errorf("judged %d examples, want the %d outside the sample and the %d that failed again", checked, n-bound, failedOutside)
	}
	listed := v.Listed(n)
	verified := s.Verified(c.ID)
	var wantUnverified []string
	for e, ex := range c.Examples {
		want := !slices.Contains(picked, e) && !listed[e] && !v.fail[ex.TraceID]
		if verified[e] != want {
			t.Errorf("example %d (%s): verified %v, want %v", e, ex.TraceID, verified[e], want)
		}
		if !want {
			wantUnverified = append(wantUnverified, ex.TraceID)
		}
	}
	var handed []string
	err := s.UnverifiedExampleBatches(context.Background(), c.ID, func(batch []*trace.Trace) error {
		for _, tr := range batch {
			handed = append(handed, tr.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(handed, wantUnverified) {
		t.Errorf("unverified batches handed over %v\nwant %v", handed, wantUnverified)
	}
	if cache.recorded != n-bound || cache.asked == 0 {
		t.Errorf("cache asked %d times, told %d verdicts; want asked, and told the %d examples read", cache.asked, cache.recorded, n-bound)
	}

	// Again, with what the first run remembered: the examples it
	// verified are not read, the report and Verified are the same.
	checked = 0
	again, s2, fetchedAgain := run()
	if !bytes.Equal(encode(t, again), encode(t, want)) {
		t.Fatalf("report with remembered verdicts differs:\n%s", firstDiff(encode(t, again), encode(t, want)))
	}
	skipped := 0
	for _, ok := range verified {
		if ok {
			skipped++
		}
	}
	if fetched-fetchedAgain != skipped || checked != n-bound-skipped+failedOutside {
		t.Errorf("second run read %d traces and judged %d, first %d and %d; want %d fewer", fetchedAgain, checked, fetched, n-bound, skipped)
	}
	if !slices.Equal(s2.Verified(c.ID), verified) {
		t.Errorf("second run verified %v, first %v", s2.Verified(c.ID), verified)
	}
}

// TestGappedSampled mines agent sessions with the gapped miner above the
// example bound: a candidate built from a sample says so, lists every
// example and counts them all in its support, one pass and two give the
// same report, and the ids and supports are those of the unsampled run.
func TestGappedSampled(t *testing.T) {
	corpus := sessionCorpus(300, 1)
	opts := Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1, GeneratedAt: "2026-01-01T00:00:00Z"}
	want, err := Mine(context.Background(), corpus, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want.Mining.Miner != ModeGapped {
		t.Fatalf("miner %q, want gapped", want.Mining.Miner)
	}
	got, _ := twoPass(t, corpus, opts)
	if a, b := encode(t, want), encode(t, got); !bytes.Equal(a, b) {
		t.Errorf("two-pass sampled gapped report differs from Mine's:\n%s", firstDiff(a, b))
	}
	full, err := Mine(context.Background(), corpus, Options{MinExamples: 3, ExampleSample: -1, GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(r *candidate.Report) []string {
		var out []string
		for _, c := range append(slices.Clone(r.Candidates), r.RejectedCandidates...) {
			out = append(out, fmt.Sprintf("%s %d %d", c.ID, c.Support, len(c.Examples)))
		}
		slices.Sort(out)
		return out
	}
	if a, b := ids(want), ids(full); !slices.Equal(a, b) {
		t.Errorf("sampled candidates %v\nunsampled %v", a, b)
	}
	sampledOnes := 0
	for _, c := range want.Candidates {
		for _, w := range c.Warnings {
			if w.Code == candidate.CodeExampleSample {
				sampledOnes++
				if len(c.Examples) <= 5 || c.Examples[len(c.Examples)-1].Positions == nil {
					t.Errorf("candidate %s: sample warning with %d examples, positions %v", c.Name, len(c.Examples), c.Examples[len(c.Examples)-1].Positions)
				}
			}
		}
	}
	if sampledOnes == 0 {
		t.Fatal("no candidate was built from a sample: the test proves nothing")
	}
}
