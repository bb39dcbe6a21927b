package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// Values of CorpusOptions.Passes.
const (
	PassesAuto = "auto"
	PassesOne  = "1"
	PassesTwo  = "2"
)

// PassesError is a CorpusOptions.Passes that is not one of its values.
type PassesError struct{ Value string }

func (e *PassesError) Error() string { return "corpus options: Passes " + e.Problem() }

// Problem is the error without the field's name, for a caller that names
// the value by its own name (a flag).
func (e *PassesError) Problem() string { return fmt.Sprintf("must be auto, 1 or 2, got %q", e.Value) }

// CheckPasses reports, as a *PassesError, a Passes value as given that is
// not PassesAuto, PassesOne or PassesTwo. ReadCorpus reads an empty
// Passes as PassesAuto before it checks it.
func CheckPasses(passes string) error {
	switch passes {
	case PassesAuto, PassesOne, PassesTwo:
		return nil
	}
	return &PassesError{Value: passes}
}

// HeldoutBatch is how many held-out traces shadow replay compares at a
// time when they are streamed: enough to keep every core busy.
const HeldoutBatch = 512

// Progress reports how reading and mining a corpus advances. Any field
// may be nil.
type Progress struct {
	// Scan reports the first pass over a corpus that is scanned.
	Scan func(source.ScanProgress)
	// Load reports a whole-corpus load, in source.Load's units of work.
	Load func(done, total int)
	// StartBuild says the pass that builds candidates begins.
	StartBuild func()
	// Build reports candidate building: done of total ranked repeats.
	Build func(done, total int)
	// Reread counts traces read a second time, to build candidates.
	Reread func(n int)
	// Done says the corpus is read and mined, before shadow replay.
	Done func()
}

// CorpusOptions says how ReadCorpus reads and mines a directory.
type CorpusOptions struct {
	// Dir is the directory of traces (*.json, *.jsonl; recursive).
	Dir string
	// Passes is PassesAuto (the default when empty), PassesOne or
	// PassesTwo.
	Passes string
	// SkipInvalid loads the valid traces and lists each invalid file
	// instead of failing.
	SkipInvalid bool
	// Rules extend the normalization of agent sessions.
	Rules *normalize.Rules
	// Mine configures the miner; Mine.Mode chooses it.
	Mine mine.Options
	// MemoryLimit sets a soft memory limit (debug.SetMemoryLimit) sized
	// to the corpus once its size is known, and for agent sessions read
	// in two passes the collector's percent (SessionGCPercent). A caller
	// that sets it should restore both when the run ends (see
	// LimitMemory).
	MemoryLimit bool
	Progress    Progress
	// Holdout holds the most recent eligible traces of the corpus out of
	// mining, for shadow replay to compare every candidate with (see
	// SplitHoldout): HoldoutNone, which an empty Holdout means,
	// HoldoutAuto, a count ("3") or a fraction ("0.2"). A corpus it
	// holds traces out of is read whole, since the most recent are known
	// only once every trace's time is.
	Holdout string
	// Store, when set, is the corpus instead of Dir: the traces of the
	// trace store, mined from their stored symbols, with only the
	// candidates' examples decoded (see tracestore.Corpus.Mine). The
	// store must stay open until the outputs are written.
	Store *tracestore.Corpus
}

// Corpus is what ReadCorpus found: the report, the source traces that
// Publish needs (at least every example of every listed candidate), and
// what the load left out.
type Corpus struct {
	Report  *candidate.Report
	Sources []*trace.Trace
	// All loads every trace of the corpus when Sources holds only the
	// examples (a bundle without a candidate takes every trace); nil
	// when Sources is every trace.
	All func(context.Context) ([]*trace.Trace, error)
	// Examples, when set, reads back the examples of one candidate;
	// Sources is then empty.
	Examples func(context.Context, *candidate.Candidate) ([]*trace.Trace, error)
	// ExampleBatches, set with Examples, hands the same traces over in
	// batches of bounded size, for shadow replay.
	ExampleBatches func(context.Context, *candidate.Candidate, func([]*trace.Trace) error) error
	// Verified, when set, says which examples of a candidate mining
	// verified for shadow replay (mine.Options.Verify): shadow replay
	// takes it as replay.Options.Verified, and ExampleBatches then leaves
	// out the traces of those examples.
	Verified        func(*candidate.Candidate) []bool
	Skipped         []source.Skipped
	SkippedSessions []source.SkippedSession
	// Heldout are the traces CorpusOptions.Holdout held out of mining,
	// in corpus order; Report.Holdout lists them.
	Heldout []*trace.Trace
	// HeldoutBatches, when set instead of Heldout, reads the held-out
	// traces back and hands them over in batches of HeldoutBatch, in
	// corpus order, so that they are never decoded at once.
	HeldoutBatches replay.HeldoutFunc
	// Notes are what the load read past (source.Note): records of
	// unknown types, files that are not session logs, and sessions that
	// repeat another, which are not counted.
	Notes []source.Note
}

// MemoryLimit is the soft memory limit of a mining run that keeps its
// corpus decoded, for inputBytes of trace JSON. Decoded traces take about
// 2.5 times their JSON size; the limit leaves room for that plus the
// garbage of decoding, and never goes below 896 MiB, where small corpora
// never reach it. A limit below the live heap would make the collector
// run without pause, so it grows with the input instead of being fixed.
func MemoryLimit(inputBytes int64) int64 {
	return max(896<<20, 4*inputBytes)
}

// TwoPassMemoryLimit is the soft memory limit of a mining run that does
// not keep the corpus decoded, for inputBytes of trace JSON, estimated at
// one action per 400 bytes. What such a run holds grows with the actions:
// about 10 bytes each that the scan keeps (the symbol, and the trace's
// source hash and location spread over its actions) and, while the suffix
// structure is built, about 17 more, of which 8 are let go before any
// candidate is built, when the example cache (at most half a gigabyte)
// and the candidates fill up. 768 MiB plus 20 bytes an action covers both
// peaks up to a few million traces, and keeps the collector working near
// the live set instead of letting the heap double; at a million traces of
// 50 actions it is 1.7 GiB. It never goes below 896 MiB, where small
// corpora never reach it.
func TwoPassMemoryLimit(inputBytes int64) int64 {
	return max(896<<20, 768<<20+20*(inputBytes/400))
}

// SessionMemoryLimit is the soft memory limit of a mining run that reads
// agent sessions in two passes (sessionCorpus), for inputBytes of session
// logs. What such a run holds grows with the actions: while the logs are
// read, a thin copy of each session (about 250 bytes an action) and its
// summary (about 50), then the miner's symbols and suffix structure, and
// a bounded cache of decoded examples (SessionExampleCache). A session
// log takes about 2 KB an action (Claude Code's records carry the model's
// text and the tools' outputs), so a sixth of the input covers the thin
// sessions several times over, and 256 MiB the rest; at 10,000 generated
// Claude Code sessions (1.1 GB) the limit is 440 MiB.
func SessionMemoryLimit(inputBytes int64) int64 {
	return max(384<<20, 256<<20+inputBytes/6)
}

// SessionGCPercent is the garbage collector's percent (debug.SetGCPercent)
// of a run that reads agent sessions in two passes under
// SessionMemoryLimit. What such a run keeps is small beside what it
// allocates (every record of every log is parsed and let go), so at the
// default of 100 the collector ran every time the heap doubled a small
// live set, a fifth of the run's CPU; at 400 it lets the heap grow to
// five times the live set, the memory limit still bounding it. On 10,000
// Claude Code sessions that took about a tenth off the CPU, at the same
// bound.
const SessionGCPercent = 400

// limitSessionMemory sets the soft memory limit and the collector's
// percent of a run reading inputBytes of agent sessions in two passes. A
// percent other than the default, which the user set (GOGC), is kept.
func limitSessionMemory(inputBytes int64) {
	debug.SetMemoryLimit(SessionMemoryLimit(inputBytes))
	if old := debug.SetGCPercent(SessionGCPercent); old != 100 {
		debug.SetGCPercent(old)
	}
}

// LimitMemory lets a run set its own soft memory limit and collector's
// percent, and returns the function that restores those in force before
// it.
func LimitMemory() (restore func()) {
	old := debug.SetMemoryLimit(-1)
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return func() {
		debug.SetMemoryLimit(old)
		debug.SetGCPercent(percent)
	}
}

// ReadCorpus reads and mines the traces under o.Dir.
//
// The first pass scans the corpus (source.Scan), keeping of each trace its
// symbol sequence and its location; the miner then reads back the traces
// it builds candidates from. Whether the decoded traces are also kept, so
// that nothing is read twice, is o.Passes: PassesOne keeps them,
// PassesTwo and PassesAuto do not. Reading back is the default at every
// size since the first pass skims its traces instead of decoding them:
// measured on 1,000 and 10,000 trace files and on 10,000 traces as JSON
// Lines, two passes took 30 to 55 % less CPU than one and half or less of
// its memory, as the examples a candidate is built from are a fraction of
// the corpus. The report is the same in every case, with either miner.
// A corpus with agent session logs is read in two passes too
// (sessionCorpus), unless o.Passes is PassesOne, which loads it whole with
// source.Load and mines it with mine.Mine: the load keeps a summary of
// each session and writes the session itself to a spool, from which the
// examples and the held-out sessions are read back. On 10,000 generated
// Claude Code sessions, whose examples and held-out sessions are two
// thirds of the corpus, that takes a quarter of one pass's memory (440
// MiB instead of 1.7 GiB) for about the same CPU; reading them back by
// decoding their logs again took twice one pass's CPU.
func ReadCorpus(ctx context.Context, o CorpusOptions) (*Corpus, error) {
	if o.Passes == "" {
		o.Passes = PassesAuto
	}
	if err := CheckPasses(o.Passes); err != nil {
		return nil, err
	}
	// Before the corpus is read, which can take minutes.
	if err := o.Mine.Validate(); err != nil {
		return nil, err
	}
	if err := CheckHoldout(o.Holdout); err != nil {
		return nil, err
	}
	if o.Store != nil {
		return storeCorpus(ctx, o)
	}
	// A count or fraction always holds traces out; auto is decided by
	// the scan.
	if o.Holdout == HoldoutNone || o.Holdout == "" || o.Holdout == HoldoutAuto {
		c, err := scanCorpus(ctx, o)
		if errors.Is(err, errSessionLogs) && o.Passes != PassesOne {
			c, err = sessionCorpus(ctx, o)
		}
		if err == nil || !errors.Is(err, errWhole) {
			return c, err
		}
	}
	found := func(int, int64) {}
	if o.MemoryLimit {
		found = func(_ int, bytes int64) { debug.SetMemoryLimit(MemoryLimit(bytes)) }
	}
	res, err := source.Load(ctx, o.Dir, source.Options{SkipInvalid: o.SkipInvalid, Progress: o.Progress.Load, Found: found, Rules: o.Rules})
	if err != nil {
		return nil, fmt.Errorf("reading traces from %s: %w", o.Dir, err)
	}
	c, err := mineWhole(ctx, o, res.Traces)
	if err != nil {
		return nil, err
	}
	c.Skipped, c.SkippedSessions, c.Notes = res.Skipped, res.SkippedSessions, res.Notes
	return c, nil
}

// mineWhole mines a corpus held in memory, less the traces o.Holdout
// holds out.
func mineWhole(ctx context.Context, o CorpusOptions, traces []*trace.Trace) (*Corpus, error) {
	mined, held, rec, err := SplitHoldout(traces, o.Holdout, o.Mine.MinExamples)
	if err != nil {
		return nil, err
	}
	opts := o.Mine
	opts.Progress = o.Progress.Build
	report, err := mine.Mine(ctx, mined, opts)
	if err != nil {
		return nil, err
	}
	report.Holdout = rec
	return &Corpus{Report: report, Sources: mined, Heldout: held}, nil
}

// holdsOut reports whether o.Holdout holds traces out of a corpus with
// eligible traces, byAgent when one names its agent: the question every
// road asks before it mines, answered by planHoldout from counts a first
// pass has without decoding a trace.
func holdsOut(o CorpusOptions, eligible int, byAgent bool) bool {
	k, _, err := planHoldout(o.Holdout, eligible, byAgent, o.Mine.MinExamples)
	// An error is SplitHoldout's to report, on the whole corpus.
	return k > 0 || err != nil
}

// storeCorpus mines the traces of the trace store o.Store.
func storeCorpus(ctx context.Context, o CorpusOptions) (*Corpus, error) {
	c := o.Store
	if o.Holdout != "" && o.Holdout != HoldoutNone {
		eligible, byAgent := 0, false
		for i := range c.Len() {
			sum, err := c.Summary(i)
			if err != nil {
				return nil, err
			}
			if sum.Exclusion() == nil {
				eligible++
				if agent, _ := sum.Evidence(); agent != "" {
					byAgent = true
				}
			}
		}
		if holdsOut(o, eligible, byAgent) {
			// As mining the imported directory would: decoded whole.
			traces, err := c.All(ctx)
			if err != nil {
				return nil, err
			}
			skipped, err := c.SkippedSessions(ctx)
			if err != nil {
				return nil, err
			}
			mc, err := mineWhole(ctx, o, traces)
			if err != nil {
				return nil, err
			}
			mc.SkippedSessions = skipped
			return mc, nil
		}
	}
	if o.MemoryLimit {
		var bytes int64
		for i := range c.Len() {
			bytes += c.Row(i).Bytes
		}
		debug.SetMemoryLimit(TwoPassMemoryLimit(bytes))
	}
	opts := o.Mine
	opts.Progress = o.Progress.Build
	// Verdicts of examples are kept in the store across mines: mining it
	// again after adding traces does not read the examples verified before.
	if opts.Verdicts == nil {
		opts.Verdicts = c.Verdicts()
	}
	if o.Progress.StartBuild != nil {
		o.Progress.StartBuild()
	}
	m, err := c.Mine(ctx, opts, o.Progress.Reread)
	if err != nil {
		return nil, err
	}
	return &Corpus{Report: m.Report, Examples: m.Examples, ExampleBatches: m.ExampleBatches, Verified: m.Verified, All: m.All, SkippedSessions: m.SkippedSessions}, nil
}

// SessionExampleCache is the example cache (mine.Options.ExampleCache)
// of a corpus of agent sessions mined in two passes, in actions: about
// 64 MB of decoded traces.
const SessionExampleCache = 1 << 16

// errWhole says that the corpus must be loaded whole.
var errWhole = errors.New("corpus to load whole")

// errSessionLogs says that the corpus has agent session logs, which the
// scan cannot read: sessionCorpus can, or a whole load.
var errSessionLogs = fmt.Errorf("corpus of agent session logs: %w", errWhole)

// sessionCorpus mines a corpus of agent session logs in two passes, as
// scanCorpus mines one of trace files: the load keeps of each session
// its summary and a thin trace (source.Options.Summarize), the hold-out
// is chosen from the thin traces, and the traces a candidate is built
// from, and the held-out ones, are decoded again from their files
// (source.Result.Reread). A session is put together from many records,
// so it is read back by its file, not by a location in it. The report
// is the one mineWhole makes of the corpus loaded whole, which is what a
// load in which a session was cut or renamed gets (errWhole).
func sessionCorpus(ctx context.Context, o CorpusOptions) (*Corpus, error) {
	found := func(int, int64) {}
	if o.MemoryLimit {
		found = func(_ int, bytes int64) { limitSessionMemory(bytes) }
	}
	res, err := source.Load(ctx, o.Dir, source.Options{SkipInvalid: o.SkipInvalid, Progress: o.Progress.Load, Found: found, Rules: o.Rules,
		Summarize: func(t *trace.Trace) any { return mine.Summarize(t) }})
	if errors.Is(err, source.ErrThinChanged) {
		return nil, errWhole
	}
	if err != nil {
		return nil, fmt.Errorf("reading traces from %s: %w", o.Dir, err)
	}
	sums := make([]mine.Summary, len(res.Traces))
	for i, t := range res.Traces {
		if sum, ok := res.Summaries[i].(mine.Summary); ok {
			sums[i] = sum
		} else {
			sums[i] = mine.Summarize(t)
		}
	}
	held, rec, err := planSplit(res.Traces, func(i int) bool { return sums[i].Exclusion() != nil }, o.Holdout, o.Mine.MinExamples)
	if err != nil {
		return nil, err
	}
	opts := o.Mine
	opts.Progress = o.Progress.Build
	// Reading an example back from the load's spool costs a small part of
	// decoding it from its log, so the cache of decoded examples that
	// saves candidates sharing examples from reading them twice is kept
	// small: at its default it would hold most of a corpus decoded.
	if opts.ExampleCache <= 0 {
		opts.ExampleCache = SessionExampleCache
	}
	s, err := mine.NewScan(opts)
	if err != nil {
		return nil, err
	}
	var eligible, heldIdx []int // indexes into res.Traces
	for i := range res.Traces {
		if held != nil && held[i] {
			heldIdx = append(heldIdx, i)
			continue
		}
		if s.Add(sums[i]) >= 0 {
			eligible = append(eligible, i)
		}
	}
	sums = nil
	res.ReleaseThin()
	fetch := func(ctx context.Context, idx []int32) ([]*trace.Trace, error) {
		want := make([]int, len(idx))
		for i, q := range idx {
			want[i] = eligible[q]
		}
		traces, err := res.Reread(ctx, want)
		if err != nil {
			return nil, fmt.Errorf("reading traces from %s again: %w", o.Dir, err)
		}
		if o.Progress.Reread != nil {
			o.Progress.Reread(len(traces))
		}
		return traces, nil
	}
	if o.Progress.StartBuild != nil {
		o.Progress.StartBuild()
	}
	report, err := s.MineWindows(ctx, fetch, nil)
	if err != nil {
		return nil, err
	}
	report.Holdout = rec
	var heldout replay.HeldoutFunc
	if len(heldIdx) > 0 {
		heldout = func(yield func([]*trace.Trace) error) error {
			for batch := range slices.Chunk(heldIdx, HeldoutBatch) {
				ts, err := res.Reread(ctx, batch)
				if err != nil {
					return fmt.Errorf("reading traces from %s again: %w", o.Dir, err)
				}
				if err := yield(ts); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return &Corpus{
		Report: report,
		Examples: func(ctx context.Context, c *candidate.Candidate) ([]*trace.Trace, error) {
			return s.Examples(ctx, c.ID)
		},
		ExampleBatches: func(ctx context.Context, c *candidate.Candidate, yield func([]*trace.Trace) error) error {
			return s.UnverifiedExampleBatches(ctx, c.ID, yield)
		},
		Verified: func(c *candidate.Candidate) []bool { return s.Verified(c.ID) },
		// Every trace mined, as mineWhole's Sources are: the corpus less
		// the held-out traces, which a second load finds at the same
		// places.
		All: func(ctx context.Context) ([]*trace.Trace, error) {
			all, err := source.Load(ctx, o.Dir, source.Options{SkipInvalid: o.SkipInvalid, Rules: o.Rules})
			if err != nil {
				return nil, fmt.Errorf("reading traces from %s: %w", o.Dir, err)
			}
			if held == nil {
				return all.Traces, nil
			}
			if len(all.Traces) != len(held) {
				return nil, fmt.Errorf("reading traces from %s: the directory changed since it was mined", o.Dir)
			}
			var mined []*trace.Trace
			for i, t := range all.Traces {
				if !held[i] {
					mined = append(mined, t)
				}
			}
			return mined, nil
		},
		HeldoutBatches:  heldout,
		Skipped:         res.Skipped,
		SkippedSessions: res.SkippedSessions,
		Notes:           res.Notes,
	}, nil
}

// scannedTrace is what the first pass keeps of a trace: its summary, and the
// trace itself when the corpus is kept decoded.
type scannedTrace struct {
	summary mine.Summary
	trace   *trace.Trace
}

func scanCorpus(ctx context.Context, o CorpusOptions) (*Corpus, error) {
	opts := o.Mine
	opts.Progress = o.Progress.Build
	s, err := mine.NewScan(opts)
	if err != nil {
		return nil, err
	}
	keep := o.Passes == PassesOne
	found := func(_ int, bytes int64) {
		if o.MemoryLimit {
			if keep {
				debug.SetMemoryLimit(MemoryLimit(bytes))
			} else {
				debug.SetMemoryLimit(TwoPassMemoryLimit(bytes))
			}
		}
	}
	var (
		locs     []source.Location // of the eligible traces
		all      []*trace.Trace    // every trace, when kept
		eligible []*trace.Trace    // the eligible ones, when kept
		byAgent  bool              // an eligible trace names its agent
	)
	// A trace that is not kept is summarized from its skim, without
	// decoding it (see mine.SummarizeSkim); the summary is the same.
	summarize := source.Summarizer[scannedTrace]{
		Trace: func(t *trace.Trace) scannedTrace {
			st := scannedTrace{summary: mine.Summarize(t)}
			if keep {
				st.trace = t
			}
			return st
		},
		Skim:    func(t *trace.Skim) scannedTrace { return scannedTrace{summary: mine.SummarizeSkim(t)} },
		UseSkim: func() bool { return !keep },
	}
	res, err := source.ScanWith(ctx, o.Dir, source.Options{SkipInvalid: o.SkipInvalid, Found: found}, summarize,
		func(loc source.Location, st scannedTrace) error {
			if keep {
				all = append(all, st.trace)
			}
			if s.Add(st.summary) >= 0 {
				if agent, _ := st.summary.Evidence(); agent != "" {
					byAgent = true
				}
				locs = append(locs, loc)
				if keep {
					eligible = append(eligible, st.trace)
				}
			}
			return nil
		}, o.Progress.Scan)
	switch {
	case errors.Is(err, source.ErrSessionLog):
		return nil, errSessionLogs
	case err != nil:
		return nil, fmt.Errorf("reading traces from %s: %w", o.Dir, err)
	}
	// Traces held out are chosen by their times, which the scan did not
	// read: such a corpus is read whole.
	if holdsOut(o, len(locs), byAgent) {
		return nil, errWhole
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
			return nil, fmt.Errorf("reading traces from %s again: %w", o.Dir, err)
		}
		if o.Progress.Reread != nil {
			o.Progress.Reread(len(traces))
		}
		return traces, nil
	}
	var windows mine.FetchWindows
	if !keep {
		windows = func(ctx context.Context, idx []int32, w []trace.Window) ([]*trace.Trace, error) {
			want := make([]source.Location, len(idx))
			for i, q := range idx {
				want[i] = locs[q]
			}
			traces, err := res.Catalog.ReadWindows(ctx, want, w)
			if err != nil {
				return nil, fmt.Errorf("reading traces from %s again: %w", o.Dir, err)
			}
			if o.Progress.Reread != nil {
				o.Progress.Reread(len(traces))
			}
			return traces, nil
		}
	}
	if o.Progress.StartBuild != nil {
		o.Progress.StartBuild()
	}
	report, err := s.MineWindows(ctx, fetch, windows)
	if err != nil {
		return nil, err
	}
	verified := func(c *candidate.Candidate) []bool { return s.Verified(c.ID) }
	if keep {
		return &Corpus{Report: report, Sources: all, Verified: verified, Skipped: res.Skipped}, nil
	}
	// Shadow replay and the bundle read each candidate's examples when
	// they get to it, so that the examples of every candidate are never
	// decoded at once.
	examples := func(ctx context.Context, c *candidate.Candidate) ([]*trace.Trace, error) {
		return s.Examples(ctx, c.ID)
	}
	// The sample check verified examples for shadow replay as it read
	// them (mine.Options.Verify); shadow replay reads the others.
	batches := func(ctx context.Context, c *candidate.Candidate, yield func([]*trace.Trace) error) error {
		return s.UnverifiedExampleBatches(ctx, c.ID, yield)
	}
	return &Corpus{Report: report, Examples: examples, ExampleBatches: batches, Verified: verified, Skipped: res.Skipped,
		All: func(ctx context.Context) ([]*trace.Trace, error) {
			res, err := source.Load(ctx, o.Dir, source.Options{SkipInvalid: o.SkipInvalid})
			if err != nil {
				return nil, fmt.Errorf("reading traces from %s: %w", o.Dir, err)
			}
			return res.Traces, nil
		}}, nil
}

// HeldoutOptions says how the held-out directories are read.
type HeldoutOptions struct {
	// Dirs are the held-out trace directories, read in order; their
	// traces are never mined.
	Dirs        []string
	SkipInvalid bool
	// Rules extend the normalization of agent sessions.
	Rules *normalize.Rules
}

// LoadHeldout reads every held-out directory whole. The traces Screen
// leaves out are listed in r's excluded traces with role "heldout", and
// the invalid files skipped with o.SkipInvalid in its skipped files.
func LoadHeldout(ctx context.Context, r *candidate.Report, o HeldoutOptions) ([]*trace.Trace, error) {
	var out []*trace.Trace
	for _, dir := range o.Dirs {
		if source.IsReleaseHarnessDir(dir) {
			t, err := loadHarnessHeldout(dir)
			if err != nil {
				return nil, err
			}
			out = append(out, Screen(r, t)...)
			continue
		}
		res, err := source.Load(ctx, dir, source.Options{SkipInvalid: o.SkipInvalid, Rules: o.Rules})
		if err != nil {
			return nil, fmt.Errorf("reading held-out traces from %s: %w", dir, err)
		}
		addSkipped(r, res.Skipped)
		out = append(out, Screen(r, res.Traces)...)
	}
	return out, nil
}

// StreamHeldout reads the held-out directories as LoadHeldout does, but
// hands the traces to shadow replay in batches of HeldoutBatch as they are
// decoded, so the held-out corpus is never held whole. A directory of
// agent session logs, which cannot be scanned, is loaded whole.
func StreamHeldout(ctx context.Context, r *candidate.Report, o HeldoutOptions) replay.HeldoutFunc {
	return func(yield func([]*trace.Trace) error) error {
		for _, dir := range o.Dirs {
			if source.IsReleaseHarnessDir(dir) {
				t, err := loadHarnessHeldout(dir)
				if err != nil {
					return err
				}
				if err := yield(Screen(r, t)); err != nil {
					return err
				}
				continue
			}
			var batch []*trace.Trace
			// A session log is found only when the scan reaches its
			// file, after earlier files' traces may have been handed on:
			// what was handed on is remembered so that the whole load
			// that follows hands on only the rest, and the exclusions
			// screened so far are screened again by that load.
			handed := map[string]bool{}
			excluded, excludedCount := len(r.ExcludedTraces), r.ExcludedTraceCount
			send := func(ts []*trace.Trace) error {
				for _, t := range ts {
					handed[heldoutKey(t)] = true
				}
				return yield(ts)
			}
			res, err := source.Scan(ctx, dir, source.Options{SkipInvalid: o.SkipInvalid},
				func(t *trace.Trace) *trace.Trace { return t },
				func(_ source.Location, t *trace.Trace) error {
					if screenOut(r, t) {
						return nil
					}
					if batch = append(batch, t); len(batch) == HeldoutBatch {
						err := send(batch)
						batch = nil
						return err
					}
					return nil
				}, nil)
			if errors.Is(err, source.ErrSessionLog) {
				r.ExcludedTraces, r.ExcludedTraceCount = r.ExcludedTraces[:excluded], excludedCount
				one := o
				one.Dirs = []string{dir}
				all, err := LoadHeldout(ctx, r, one)
				if err != nil {
					return err
				}
				rest := all[:0]
				for _, t := range all {
					if !handed[heldoutKey(t)] {
						rest = append(rest, t)
					}
				}
				if err := yield(rest); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("reading held-out traces from %s: %w", dir, err)
			}
			if len(batch) > 0 {
				if err := yield(batch); err != nil {
					return err
				}
			}
			addSkipped(r, res.Skipped)
		}
		return nil
	}
}

// loadHarnessHeldout reads a release-harness fixture directory, one
// release run, as one held-out trace: a second run of a release is the
// held-out evidence for the workflow ingested from the first.
func loadHarnessHeldout(dir string) ([]*trace.Trace, error) {
	t, _, err := source.LoadReleaseHarness(dir)
	if err != nil {
		return nil, fmt.Errorf("reading held-out release-harness run %s: %w", dir, err)
	}
	return []*trace.Trace{t}, nil
}

// heldoutKey names a held-out trace by its id and where it was read.
func heldoutKey(t *trace.Trace) string { return t.ID + "\x00" + t.Source }

// addSkipped lists the invalid files a load skipped in r.
func addSkipped(r *candidate.Report, skipped []source.Skipped) {
	for _, s := range skipped {
		r.SkippedFiles = append(r.SkippedFiles, candidate.SkippedFile{Path: s.Path, Line: s.Line, Errors: s.Errors})
	}
}
