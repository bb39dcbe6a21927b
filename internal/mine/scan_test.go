package mine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// twoPass mines traces as a two-pass run does: summaries in order, then
// the second pass reading examples back through a Fetch that copies them
// (so the builder cannot depend on pointer identity) and counts them.
func twoPass(t *testing.T, traces []*trace.Trace, opts Options) (*candidate.Report, int) {
	t.Helper()
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
	fetched := 0
	fetch := func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
		out := make([]*trace.Trace, len(idx))
		for i, q := range idx {
			if i > 0 && idx[i-1] >= q {
				return nil, fmt.Errorf("indexes not increasing: %v", idx)
			}
			c := *eligible[q]
			out[i] = &c
		}
		fetched += len(idx)
		return out, nil
	}
	r, err := s.Mine(context.Background(), fetch)
	if err != nil {
		t.Fatal(err)
	}
	return r, fetched
}

func encode(t *testing.T, r *candidate.Report) []byte {
	t.Helper()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTwoPassMatchesMine checks that the two-pass miner writes the
// report Mine writes, byte for byte, on generated corpora of several
// seeds and with an example cache so small that every batch reads its
// examples again.
func TestTwoPassMatchesMine(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		corpus := tracetest.Generate(tracetest.Config{Traces: 300, Seed: seed, Support: 0.04, FuzzyEvery: 3})
		for _, tr := range corpus.Traces {
			trace.Normalize(tr)
		}
		for _, cache := range []int{1, 0} {
			t.Run(fmt.Sprintf("seed=%d/cache=%d", seed, cache), func(t *testing.T) {
				opts := Options{MinExamples: 3, MaxCandidates: 12, ExampleCache: cache, GeneratedAt: "2026-01-01T00:00:00Z"}
				want, err := Mine(context.Background(), corpus.Traces, opts)
				if err != nil {
					t.Fatal(err)
				}
				got, fetched := twoPass(t, corpus.Traces, opts)
				if a, b := encode(t, want), encode(t, got); !bytes.Equal(a, b) {
					t.Errorf("two-pass report differs from Mine's:\n%s", firstDiff(a, b))
				}
				if len(want.Candidates) == 0 {
					t.Error("no candidates: the comparison proves little")
				}
				if cache == 0 && fetched > len(corpus.Traces) {
					t.Errorf("read back %d traces of %d with the default cache, want each at most once", fetched, len(corpus.Traces))
				}
			})
		}
	}
}

// TestTwoPassSmallCorpora runs the comparison on the hand-made corpora of
// the other tests: exclusions, rejections, secrets, receipts.
func TestTwoPassSmallCorpora(t *testing.T) {
	corpora := map[string][]*trace.Trace{
		"exclusions": {
			mk("t1", act("a1", trace.KindToolCall, "x", ""), act("a2", trace.KindToolCall, "y", "")),
			mk("t2", act("a1", trace.KindToolCall, "x", ""), act("a2", trace.KindToolCall, "y", "")),
			mk("t3", act("a1", trace.KindToolCall, "x", `{"v":"1"}`), act("a2", trace.KindToolCall, "y", "")),
		},
		"too few": {mk("t1", act("a1", trace.KindToolCall, "x", ""))},
	}
	bad := mk("t4", act("a1", trace.KindToolCall, "x", ""), act("a2", trace.KindToolCall, "y", ""))
	f := false
	bad.Actions[0].Deterministic = &f
	bad.Actions[0].SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "a"}}
	corpora["exclusions"] = append(corpora["exclusions"], bad)
	for name, traces := range corpora {
		t.Run(name, func(t *testing.T) {
			want, err := Mine(context.Background(), traces, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := twoPass(t, traces, Options{})
			if a, b := encode(t, want), encode(t, got); !bytes.Equal(a, b) {
				t.Errorf("two-pass report differs from Mine's:\n%s", firstDiff(a, b))
			}
		})
	}
}

func TestScanGappedAndErrors(t *testing.T) {
	if _, err := NewScan(Options{MinExamples: 1}); !errors.Is(err, ErrMinExamples) {
		t.Errorf("NewScan(MinExamples 1) = %v, want ErrMinExamples", err)
	}
	if _, err := NewScan(Options{Mode: "fuzzy"}); !errors.Is(err, ErrMode) {
		t.Errorf("NewScan(Mode fuzzy) = %v, want ErrMode", err)
	}
	obs := mk("t1", act("a1", trace.KindObservation, "ls", ""))
	for _, tc := range []struct {
		mode string
		tr   *trace.Trace
		want bool
	}{
		{ModeAuto, obs, true},
		{ModeExact, obs, false},
		{ModeGapped, mk("t2", noise("a")), true},
		{ModeAuto, mk("t3", noise("a")), false},
	} {
		s, err := NewScan(Options{Mode: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		s.Add(Summarize(tc.tr))
		if got := s.Gapped(); got != tc.want {
			t.Errorf("mode %s, trace %s: Gapped() = %v, want %v", tc.mode, tc.tr.ID, got, tc.want)
		}
		if tc.want {
			r, err := s.Mine(context.Background(), nil)
			if err != nil || r.Mining.Miner != ModeGapped {
				t.Errorf("mode %s: Mine of a gapped scan = %v, miner %q; want the gapped miner", tc.mode, err, r.Mining.Miner)
			}
		}
	}
}

// TestScanExamples checks that Examples reads back a candidate's examples
// in order, and refuses before Mine and for a candidate it did not build.
func TestScanExamples(t *testing.T) {
	corpus := tracetest.Generate(tracetest.Config{Traces: 100, Seed: 2})
	for _, tr := range corpus.Traces {
		trace.Normalize(tr)
	}
	s, err := NewScan(Options{MinExamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range corpus.Traces {
		s.Add(Summarize(tr))
	}
	if _, err := s.Examples(context.Background(), "candidate_x"); err == nil {
		t.Error("Examples before Mine succeeded")
	}
	fetch := func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
		out := make([]*trace.Trace, len(idx))
		for i, q := range idx {
			out[i] = corpus.Traces[q]
		}
		return out, nil
	}
	r, err := s.Mine(context.Background(), fetch)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) == 0 {
		t.Fatal("no candidates")
	}
	c := &r.Candidates[0]
	got, err := s.Examples(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(c.Examples) {
		t.Fatalf("%d examples read back, want %d", len(got), len(c.Examples))
	}
	for i, tr := range got {
		if tr.ID != c.Examples[i].TraceID || tr.SourceHash != c.Examples[i].SourceHash {
			t.Errorf("example %d read back as %s, want %s", i, tr.ID, c.Examples[i].TraceID)
		}
	}
	if _, err := s.Examples(context.Background(), "candidate_x"); err == nil {
		t.Error("Examples of an unknown candidate succeeded")
	}
}

func firstDiff(a, b []byte) string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	lo := max(0, n-200)
	return fmt.Sprintf("at byte %d:\nMine:     %q\ntwo-pass: %q", n, a[lo:min(len(a), n+200)], b[lo:min(len(b), n+200)])
}

// TestScanFetchMismatch checks that a second pass whose Fetch hands back
// the wrong number of traces, or a trace that changed since the scan,
// stops with an error instead of building from it.
func TestScanFetchMismatch(t *testing.T) {
	traces := []*trace.Trace{
		mk("t1", act("a1", trace.KindToolCall, "x", ""), act("a2", trace.KindToolCall, "y", "")),
		mk("t2", act("a1", trace.KindToolCall, "x", ""), act("a2", trace.KindToolCall, "y", "")),
	}
	for _, tc := range []struct {
		name  string
		fetch Fetch
		want  string
	}{
		{"too few", func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
			return []*trace.Trace{traces[0]}[:min(1, len(idx)-1)], nil
		}, "read back"},
		{"shorter trace", func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
			out := make([]*trace.Trace, len(idx))
			for i, q := range idx {
				c := *traces[q]
				c.Actions = c.Actions[:1]
				out[i] = &c
			}
			return out, nil
		}, "changed between the passes"},
		{"nil trace", func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
			return make([]*trace.Trace, len(idx)), nil
		}, "changed between the passes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewScan(Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range traces {
				s.Add(Summarize(tr))
			}
			_, err = s.Mine(context.Background(), tc.fetch)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Mine = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestGappedTwoPassMatchesMine: the gapped miner reading its examples
// back gives Mine's report byte for byte, with the cache at its default
// and at one action, and reads back only the examples of what it builds.
func TestGappedTwoPassMatchesMine(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		corpus := sessionCorpus(300, seed)
		for _, cache := range []int{1, 0} {
			t.Run(fmt.Sprintf("seed=%d/cache=%d", seed, cache), func(t *testing.T) {
				opts := Options{MinExamples: 3, ExampleCache: cache, GeneratedAt: "2026-01-01T00:00:00Z"}
				want, err := Mine(context.Background(), corpus, opts)
				if err != nil {
					t.Fatal(err)
				}
				if want.Mining.Miner != ModeGapped || len(want.Candidates) == 0 {
					t.Fatalf("miner %q, %d candidates: the comparison proves little", want.Mining.Miner, len(want.Candidates))
				}
				got, fetched := twoPass(t, corpus, opts)
				if a, b := encode(t, want), encode(t, got); !bytes.Equal(a, b) {
					t.Errorf("two-pass gapped report differs from Mine's:\n%s", firstDiff(a, b))
				}
				if cache == 0 && fetched > len(corpus) {
					t.Errorf("read back %d traces of %d with the default cache, want each at most once", fetched, len(corpus))
				}
			})
		}
	}
}

// TestNewSummaryRebuildsSummarize checks that a summary rebuilt from the
// parts a store keeps (exclusion, evidence, signatures, action flags) is
// the summary Summarize computes, for eligible and excluded traces, agent
// sessions whose actions carry flags, and a trace with no action; and that
// the gapped miner fed the rebuilt summaries writes Mine's report.
func TestNewSummaryRebuildsSummarize(t *testing.T) {
	corpus := sessionCorpus(200, 3)
	synthetic := tracetest.Generate(tracetest.Config{Traces: 60, Seed: 4, FuzzyEvery: 3})
	for _, tr := range synthetic.Traces {
		trace.Normalize(tr)
	}
	empty := &trace.Trace{ID: "empty", Source: "empty.json", Metadata: map[string]any{}}
	violating := *corpus[0]
	violating.ID = "violating"
	violating.Metadata = map[string]any{"policy_violation": true}
	all := append(append(slices.Clone(corpus), synthetic.Traces...), empty, &violating)
	var excluded, flagged int
	for _, tr := range all {
		want := Summarize(tr)
		agent, observation := want.Evidence()
		got := NewSummary(want.Exclusion(), agent, observation, want.Session(), want.Signatures(), want.Flags())
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trace %s: NewSummary of Summarize's parts = %+v, want %+v", tr.ID, got, want)
		}
		if want.Exclusion() != nil {
			excluded++
			if want.Flags() != nil {
				t.Errorf("trace %s: excluded, yet flags %v", tr.ID, want.Flags())
			}
			continue
		}
		if len(want.Flags()) != len(tr.Actions) {
			t.Errorf("trace %s: %d flags for %d actions", tr.ID, len(want.Flags()), len(tr.Actions))
		}
		for _, f := range want.Flags() {
			if f != 0 {
				flagged++
			}
		}
	}
	if excluded == 0 || flagged == 0 {
		t.Fatalf("%d excluded traces, %d flagged actions: the comparison proves little", excluded, flagged)
	}

	opts := Options{MinExamples: 3, GeneratedAt: "2026-01-01T00:00:00Z"}
	want, err := Mine(context.Background(), corpus, opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScan(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range corpus {
		sum := Summarize(tr)
		agent, observation := sum.Evidence()
		// Copies, so that the rebuilt summary shares nothing with the trace's.
		s.Add(NewSummary(sum.Exclusion(), agent, observation, sum.Session(), slices.Clone(sum.Signatures()), slices.Clone(sum.Flags())))
	}
	got, err := s.Mine(context.Background(), func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
		out := make([]*trace.Trace, len(idx))
		for i, q := range idx {
			out[i] = corpus[q]
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want.Mining.Miner != ModeGapped || len(want.Candidates) == 0 {
		t.Fatalf("miner %q, %d candidates: the comparison proves little", want.Mining.Miner, len(want.Candidates))
	}
	if a, b := encode(t, want), encode(t, got); !bytes.Equal(a, b) {
		t.Errorf("gapped report from rebuilt summaries differs from Mine's:\n%s", firstDiff(a, b))
	}
}

// TestScanExampleBatches checks that ExampleBatches hands over Examples'
// traces, in order, in batches that fit the example cache, and stops at
// yield's error.
func TestScanExampleBatches(t *testing.T) {
	corpus := tracetest.Generate(tracetest.Config{Traces: 100, Seed: 2})
	for _, tr := range corpus.Traces {
		trace.Normalize(tr)
	}
	longest := 0
	for _, tr := range corpus.Traces {
		longest = max(longest, len(tr.Actions))
	}
	budget := 3 * longest
	s, err := NewScan(Options{MinExamples: 3, ExampleCache: budget})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range corpus.Traces {
		s.Add(Summarize(tr))
	}
	ctx := context.Background()
	if err := s.ExampleBatches(ctx, "candidate_x", func([]*trace.Trace) error { return nil }); err == nil {
		t.Error("ExampleBatches before Mine succeeded")
	}
	fetch := func(_ context.Context, idx []int32) ([]*trace.Trace, error) {
		out := make([]*trace.Trace, len(idx))
		for i, q := range idx {
			out[i] = corpus.Traces[q]
		}
		return out, nil
	}
	r, err := s.Mine(ctx, fetch)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) == 0 {
		t.Fatal("no candidates")
	}
	c := &r.Candidates[0]
	want, err := s.Examples(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []*trace.Trace
	batches := 0
	err = s.ExampleBatches(ctx, c.ID, func(batch []*trace.Trace) error {
		batches++
		actions := 0
		for _, tr := range batch {
			actions += len(tr.Actions)
		}
		if actions > budget && len(batch) > 1 {
			t.Errorf("batch of %d traces holds %d actions, more than the cache's %d", len(batch), actions, budget)
		}
		got = append(got, batch...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if batches < 2 {
		t.Errorf("%d examples came in %d batch(es), want several with a cache of %d actions", len(want), batches, budget)
	}
	if !slices.Equal(got, want) {
		t.Errorf("ExampleBatches handed over %d traces, not Examples' %d in order", len(got), len(want))
	}
	boom := errors.New("stop")
	calls := 0
	err = s.ExampleBatches(ctx, c.ID, func([]*trace.Trace) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Errorf("ExampleBatches = %v after %d calls, want %v after one", err, calls, boom)
	}
	if err := s.ExampleBatches(ctx, "candidate_x", func([]*trace.Trace) error { return nil }); err == nil {
		t.Error("ExampleBatches of an unknown candidate succeeded")
	}
}
