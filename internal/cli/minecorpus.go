package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// twoPassBytes is the corpus size above which mine, with --passes auto,
// keeps no decoded trace after reading it: the report is the same either
// way, but held decoded a corpus takes about four times its JSON size
// (905 MiB of peak RSS for 210 MB at 10,000 traces), while read back it
// takes the symbol arrays, the suffix structure and the examples being
// built. Below it, reading the examples back would only cost time.
const twoPassBytes = 256 << 20

// Values of --passes.
const (
	passesAuto = "auto"
	passesOne  = "1"
	passesTwo  = "2"
)

// mined is what readCorpus found: the report, the source traces that
// publish needs (at least every example of every listed candidate), and
// what the load left out.
type mined struct {
	report  *candidate.Report
	sources []*trace.Trace
	// all loads every trace of the corpus when sources holds only the
	// examples (a bundle without a candidate takes every trace); nil
	// when sources is every trace.
	all func(context.Context) ([]*trace.Trace, error)
	// examples, when set, reads back the examples of one candidate;
	// sources is then empty.
	examples        func(context.Context, *candidate.Candidate) ([]*trace.Trace, error)
	Skipped         []source.Skipped
	SkippedSessions []source.SkippedSession
}

// readCorpus reads and mines the traces under f.from.
//
// The first pass scans the corpus (source.Scan), keeping of each trace its
// symbol sequence and its location; the miner then reads back the traces
// it builds candidates from. Whether the decoded traces are also kept, so
// that nothing is read twice, is --passes: 1 keeps them, 2 does not, auto
// keeps them when the corpus is at most twoPassBytes. The report is the
// same in every case, with either miner. A corpus with agent session
// logs is loaded whole with source.Load and mined with mine.Mine: a
// session is put together from many records and cannot be read back by
// location.
func readCorpus(ctx context.Context, e *env, f *mineFlags, rules *normalize.Rules, opts mine.Options, prog *mineProgress) (*mined, error) {
	setLimit := e.getenv("GOMEMLIMIT") == ""
	m, err := scanCorpus(ctx, f, opts, prog, setLimit)
	if err == nil || !errors.Is(err, errWhole) {
		return m, err
	}
	found := func(int, int64) {}
	if setLimit {
		found = func(_ int, bytes int64) { debug.SetMemoryLimit(memoryLimit(bytes)) }
	}
	res, err := source.Load(ctx, f.from, source.Options{SkipInvalid: f.skipInvalid, Progress: prog.load, Found: found, Rules: rules})
	if err != nil {
		return nil, fmt.Errorf("reading traces from %s: %w", f.from, err)
	}
	opts.Progress = prog.build
	report, err := mine.Mine(ctx, res.Traces, opts)
	if err != nil {
		return nil, err
	}
	return &mined{report: report, sources: res.Traces, Skipped: res.Skipped, SkippedSessions: res.SkippedSessions}, nil
}

// errWhole says that the corpus must be loaded whole.
var errWhole = errors.New("corpus of agent session logs")

// scannedTrace is what the first pass keeps of a trace: its summary, and the
// trace itself when the corpus is kept decoded.
type scannedTrace struct {
	summary mine.Summary
	trace   *trace.Trace
}

func scanCorpus(ctx context.Context, f *mineFlags, opts mine.Options, prog *mineProgress, setLimit bool) (*mined, error) {
	opts.Progress = prog.build
	s, err := mine.NewScan(opts)
	if err != nil {
		return nil, err
	}
	keep := f.passes == passesOne
	found := func(_ int, bytes int64) {
		if f.passes == passesAuto {
			keep = bytes <= twoPassBytes
		}
		if setLimit {
			if keep {
				debug.SetMemoryLimit(memoryLimit(bytes))
			} else {
				debug.SetMemoryLimit(twoPassMemoryLimit(bytes))
			}
		}
	}
	var (
		locs     []source.Location // of the eligible traces
		all      []*trace.Trace    // every trace, when kept
		eligible []*trace.Trace    // the eligible ones, when kept
	)
	res, err := source.Scan(ctx, f.from, source.Options{SkipInvalid: f.skipInvalid, Found: found},
		func(t *trace.Trace) scannedTrace {
			st := scannedTrace{summary: mine.Summarize(t)}
			if keep {
				st.trace = t
			}
			return st
		},
		func(loc source.Location, st scannedTrace) error {
			if keep {
				all = append(all, st.trace)
			}
			if s.Add(st.summary) >= 0 {
				locs = append(locs, loc)
				if keep {
					eligible = append(eligible, st.trace)
				}
			}
			return nil
		}, prog.scan)
	switch {
	case errors.Is(err, source.ErrSessionLog):
		return nil, errWhole
	case err != nil:
		return nil, fmt.Errorf("reading traces from %s: %w", f.from, err)
	}
	fetch := func(ctx context.Context, idx []int32) ([]*trace.Trace, error) {
		if keep {
			out := make([]*trace.Trace, len(idx))
			for i, q := range idx {
				out[i] = eligible[q]
			}
			return out, nil
		}
		want := make([]source.Location, len(idx))
		for i, q := range idx {
			want[i] = locs[q]
		}
		traces, err := res.Catalog.ReadAt(ctx, want)
		if err != nil {
			return nil, fmt.Errorf("reading traces from %s again: %w", f.from, err)
		}
		prog.reread(len(traces))
		return traces, nil
	}
	prog.startBuild()
	report, err := s.Mine(ctx, fetch)
	if err != nil {
		return nil, err
	}
	if keep {
		return &mined{report: report, sources: all, Skipped: res.Skipped}, nil
	}
	// Shadow replay and the bundle read each candidate's examples when
	// they get to it, so that the examples of every candidate are never
	// decoded at once.
	examples := func(ctx context.Context, c *candidate.Candidate) ([]*trace.Trace, error) {
		return s.Examples(ctx, c.ID)
	}
	return &mined{report: report, examples: examples, Skipped: res.Skipped,
		all: func(ctx context.Context) ([]*trace.Trace, error) {
			res, err := source.Load(ctx, f.from, source.Options{SkipInvalid: f.skipInvalid})
			if err != nil {
				return nil, fmt.Errorf("reading traces from %s: %w", f.from, err)
			}
			return res.Traces, nil
		}}, nil
}

// twoPassMemoryLimit is the soft memory limit of a mining run that does
// not keep the corpus decoded: the example cache (half a gigabyte at most)
// and room for the symbol arrays and the suffix structure, about 48 bytes
// per action, estimated at one action per 400 bytes of JSON.
func twoPassMemoryLimit(inputBytes int64) int64 {
	return max(896<<20, 1<<30+48*(inputBytes/400))
}
