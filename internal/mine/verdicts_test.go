package mine

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// alteredVerdicts answers from remembered verdicts, each row passed
// through alter first, and fails as told.
type alteredVerdicts struct {
	*memVerdicts
	alter     func(*candidate.Example)
	short     bool
	passedErr error
	recordErr error
}

func (a alteredVerdicts) Passed(ctx context.Context, keys []candidate.VerdictKey) ([]*candidate.Example, error) {
	if a.passedErr != nil {
		return nil, a.passedErr
	}
	out, err := a.memVerdicts.Passed(ctx, keys)
	for _, ex := range out {
		if ex != nil && a.alter != nil {
			a.alter(ex)
		}
	}
	if a.short {
		out = out[:len(out)-1]
	}
	return out, err
}

func (a alteredVerdicts) Record(ctx context.Context, verdicts []candidate.Verdict) error {
	if a.recordErr != nil {
		return a.recordErr
	}
	return a.memVerdicts.Record(ctx, verdicts)
}

// TestRememberedVerdictsTrustedOnlyWhenTheyFit checks that a verdict an
// earlier run remembered lets an example go unread only when its row fits
// the example (the same source, start and number of actions): a row that
// does not is not trusted, the example is read and judged again, and the
// report is the same. A verdict store that fails, or answers for fewer
// examples than asked, stops mining with an error.
func TestRememberedVerdictsTrustedOnlyWhenTheyFit(t *testing.T) {
	const n, bound = 30, 5
	traces := sampleCorpus(n, -1, -1)
	base := Options{MinExamples: 3, ExampleSample: bound, GeneratedAt: "2026-01-01T00:00:00Z"}
	checked := 0
	v := failVerifier{fail: map[string]bool{}, checked: &checked}
	run := func(store candidate.ExampleVerdicts) (*candidate.Report, *Scan, int, error) {
		opts := base
		opts.Verify, opts.Verdicts = v, store
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
		return r, s, fetched, err
	}
	remembered := &memVerdicts{m: map[candidate.VerdictKey]candidate.Verdict{}}
	want, first, fetched, err := run(remembered)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Candidates) != 1 || len(want.Candidates[0].Examples) != n {
		t.Fatalf("want one candidate of %d examples, got %d candidates", n, len(want.Candidates))
	}
	id := want.Candidates[0].ID
	verified := first.Verified(id)
	if !slices.Contains(verified, true) {
		t.Fatal("no example verified: nothing is remembered to skip")
	}
	// Trusted, the remembered verdicts save reads: the case the misfits
	// are measured against.
	if _, _, fetchedAgain, err := run(remembered); err != nil || fetchedAgain >= fetched {
		t.Fatalf("with fitting verdicts: read %d traces (error %v), first run %d; want fewer", fetchedAgain, err, fetched)
	}

	for name, alter := range map[string]func(*candidate.Example){
		"another source":     func(ex *candidate.Example) { ex.SourceHash = "sha256:other" },
		"another start":      func(ex *candidate.Example) { ex.StartIndex++ },
		"another step count": func(ex *candidate.Example) { ex.ActionIDs = ex.ActionIDs[1:] },
	} {
		t.Run(name, func(t *testing.T) {
			got, s, fetchedAgain, err := run(alteredVerdicts{memVerdicts: remembered, alter: alter})
			if err != nil {
				t.Fatal(err)
			}
			if fetchedAgain != fetched {
				t.Errorf("read %d traces, want all %d the first run read: a row that does not fit is not trusted", fetchedAgain, fetched)
			}
			if !bytes.Equal(encode(t, got), encode(t, want)) {
				t.Errorf("report differs:\n%s", firstDiff(encode(t, got), encode(t, want)))
			}
			if !slices.Equal(s.Verified(id), verified) {
				t.Errorf("verified %v, want %v", s.Verified(id), verified)
			}
		})
	}

	errStore := errors.New("verdict store unreachable")
	for name, store := range map[string]alteredVerdicts{
		"asking fails":    {memVerdicts: remembered, passedErr: errStore},
		"recording fails": {memVerdicts: &memVerdicts{m: map[candidate.VerdictKey]candidate.Verdict{}}, recordErr: errStore},
		"answers too few": {memVerdicts: remembered, short: true},
	} {
		t.Run(name, func(t *testing.T) {
			r, _, _, err := run(store)
			if err == nil || r != nil || (!store.short && !errors.Is(err, errStore)) {
				t.Errorf("report %v, error %v; want no report and the store's error", r != nil, err)
			}
		})
	}
}
