package tracestore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Corpus is the stored traces in the order mining reads a directory: by
// origin path (segment by segment, as a directory walk meets the files),
// then line. Traces imported from one directory are therefore in the
// order mining that directory reads them, so the two give one report;
// traces of several directories are interleaved by their paths relative
// to their own directory.
type Corpus struct {
	db         *store.DB
	rows       []store.TraceRow
	signatures []string
	// decoded counts the documents this Corpus decoded (Decoded).
	decoded atomic.Int64
}

// Open reads the index of the stored traces: every row but the
// documents.
func Open(ctx context.Context, db *store.DB) (*Corpus, error) {
	idx, err := db.TraceIndex(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(idx.Traces, func(a, b store.TraceRow) int {
		if c := comparePaths(a.OriginPath, b.OriginPath); c != 0 {
			return c
		}
		return cmp.Compare(a.OriginLine, b.OriginLine)
	})
	return &Corpus{db: db, rows: idx.Traces, signatures: idx.Signatures}, nil
}

// comparePaths orders slash-separated paths as filepath.WalkDir visits
// them: a directory's entries by name, each directory's files where its
// name sorts ("a/b.json" before "a.json", since "a" < "a.json").
func comparePaths(a, b string) int {
	for {
		ai, bi := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		as, bs := a, b
		if ai >= 0 {
			as = a[:ai]
		}
		if bi >= 0 {
			bs = b[:bi]
		}
		if c := strings.Compare(as, bs); c != 0 || ai < 0 || bi < 0 {
			if c != 0 {
				return c
			}
			// One is a prefix directory of the other, which cannot be
			// both a file and a directory; order the shorter first.
			return cmp.Compare(ai, bi)
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

// Verdicts returns the verdicts of examples the store keeps across
// mines, for mine.Options.Verdicts, checked against the traces the
// corpus holds (see Verdicts).
func (c *Corpus) Verdicts() *Verdicts {
	v := NewVerdicts(c.db)
	v.traces = make(map[string][]*store.TraceRow, len(c.rows))
	for i := range c.rows {
		r := &c.rows[i]
		v.traces[r.SourceHash] = append(v.traces[r.SourceHash], r)
	}
	return v
}

// Len is the number of stored traces.
func (c *Corpus) Len() int { return len(c.rows) }

// Row is the i-th stored trace, without its document.
func (c *Corpus) Row(i int) *store.TraceRow { return &c.rows[i] }

// Summary is the miner's summary of the i-th trace, as mine.Summarize
// computed it when the trace was imported.
func (c *Corpus) Summary(i int) (mine.Summary, error) {
	s, _, err := rowSummary(&c.rows[i], c.signatures)
	return s, err
}

// Decoded returns how many stored documents this Corpus has decoded (Read,
// All, a mine's read backs, FillFlags): what a mine of the store cost in
// decoding, counted apart for each Corpus so that runs side by side do
// not mix their counts.
func (c *Corpus) Decoded() int64 { return c.decoded.Load() }

// Read decodes the traces at the given corpus indexes, on every core, and
// returns them in that order.
func (c *Corpus) Read(ctx context.Context, idx []int) ([]*trace.Trace, error) {
	ids := make([]int64, len(idx))
	for i, q := range idx {
		ids[i] = c.rows[q].BodyID
	}
	bodies, err := c.db.TraceBodies(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*trace.Trace, len(idx))
	errs := make([]error, len(idx))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(idx)) {
		wg.Go(func() {
			var p trace.Parser
			for {
				i := int(next.Add(1)) - 1
				if i >= len(idx) || ctx.Err() != nil {
					return
				}
				out[i], errs[i] = Decode(bodies[i], &c.rows[idx[i]], &p)
				c.decoded.Add(1)
				bodies[i] = nil
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading stored traces: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// readChunk is how many traces All and Each decode at a time.
const readChunk = 1024

// All decodes every stored trace, in corpus order.
func (c *Corpus) All(ctx context.Context) ([]*trace.Trace, error) {
	out := make([]*trace.Trace, 0, len(c.rows))
	for start := 0; start < len(c.rows); start += readChunk {
		idx := make([]int, 0, readChunk)
		for i := start; i < min(start+readChunk, len(c.rows)); i++ {
			idx = append(idx, i)
		}
		part, err := c.Read(ctx, idx)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

// Each calls f with every stored trace's row, format and document, in
// corpus order, reading the documents a chunk at a time.
func (c *Corpus) Each(ctx context.Context, f func(row *store.TraceRow, format string, body []byte) error) error {
	for start := 0; start < len(c.rows); start += readChunk {
		end := min(start+readChunk, len(c.rows))
		ids := make([]int64, 0, end-start)
		for i := start; i < end; i++ {
			ids = append(ids, c.rows[i].BodyID)
		}
		bodies, err := c.db.TraceBodies(ctx, ids)
		if err != nil {
			return err
		}
		for i := start; i < end; i++ {
			_, format, err := rowSummary(&c.rows[i], c.signatures)
			if err != nil {
				return err
			}
			if err := f(&c.rows[i], format, bodies[i-start]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Mined is a mining run over the store: its report, and how to read the
// traces publishing needs.
type Mined struct {
	Report *candidate.Report
	// Examples reads back the examples of a candidate the run built.
	Examples func(ctx context.Context, c *candidate.Candidate) ([]*trace.Trace, error)
	// ExampleBatches hands to yield, in batches the example cache holds,
	// the examples shadow replay still has to read: those Verified does
	// not mark (mine.Scan.UnverifiedExampleBatches).
	ExampleBatches func(ctx context.Context, c *candidate.Candidate, yield func([]*trace.Trace) error) error
	// Verified says which examples of a candidate the run verified for
	// shadow replay without shadow replay (replay.Options.Verified).
	Verified func(c *candidate.Candidate) []bool
	// All decodes every stored trace.
	All func(ctx context.Context) ([]*trace.Trace, error)
	// SkippedSessions are the sessions imports read that did not become
	// traces, in the order a load of their files lists them.
	SkippedSessions []source.SkippedSession
}

// Mine mines the stored traces as mine.Mine mines the same traces read
// from files: the first pass is the stored summaries (no document is
// decoded), the second builds the candidates from their examples, read
// back from the store, with either miner (see mine.Options.Mode).
// reread, when not nil, is told how many traces each read back decoded.
// With opts.Verdicts (the store's are Corpus.Verdicts), an example that
// passed against a candidate of the same content in an earlier mine is
// not read again (see candidate.ExampleVerdicts); opts.SourceHash is set
// here.
//
// The gapped miner also needs each action's flags, which a store keeps
// only from schema 5 on: when it runs over traces stored before, Mine
// first decodes those traces once and records their flags (FillFlags).
func (c *Corpus) Mine(ctx context.Context, opts mine.Options, reread func(traces int)) (*Mined, error) {
	skipped, err := c.skippedSessions(ctx)
	if err != nil {
		return nil, err
	}
	// The key of a remembered verdict (opts.Verdicts) is the trace's
	// source hash, which its row holds: an example an earlier mine
	// verified is then not read at all.
	var eligible []int
	opts.SourceHash = func(e int32) string { return c.rows[eligible[e]].SourceHash }
	s, eligible, err := c.scan(opts)
	if err != nil {
		return nil, err
	}
	if s.Gapped() && c.missingFlags(eligible) {
		if _, err := c.FillFlags(ctx); err != nil {
			return nil, err
		}
		if s, eligible, err = c.scan(opts); err != nil {
			return nil, err
		}
	}
	fetch := func(ctx context.Context, q []int32) ([]*trace.Trace, error) {
		idx := make([]int, len(q))
		for i, e := range q {
			idx[i] = eligible[e]
		}
		traces, err := c.Read(ctx, idx)
		if err != nil {
			return nil, err
		}
		if reread != nil {
			reread(len(traces))
		}
		return traces, nil
	}
	report, err := s.Mine(ctx, fetch)
	if err != nil {
		return nil, err
	}
	return &Mined{
		Report: report,
		Examples: func(ctx context.Context, cand *candidate.Candidate) ([]*trace.Trace, error) {
			return s.Examples(ctx, cand.ID)
		},
		// The examples the sample check verified for shadow replay as it
		// read them (or found verified by an earlier mine) are left out:
		// shadow replay reads only the others.
		ExampleBatches: func(ctx context.Context, cand *candidate.Candidate, yield func([]*trace.Trace) error) error {
			return s.UnverifiedExampleBatches(ctx, cand.ID, yield)
		},
		Verified:        func(cand *candidate.Candidate) []bool { return s.Verified(cand.ID) },
		All:             c.All,
		SkippedSessions: skipped,
	}, nil
}

// scan is the first pass of Mine: every stored summary, in corpus order.
// It returns the scan and the corpus index of each eligible trace.
func (c *Corpus) scan(opts mine.Options) (*mine.Scan, []int, error) {
	s, err := mine.NewScan(opts)
	if err != nil {
		return nil, nil, err
	}
	var eligible []int
	for i := range c.rows {
		sum, err := c.Summary(i)
		if err != nil {
			return nil, nil, err
		}
		if s.Add(sum) >= 0 {
			eligible = append(eligible, i)
		}
	}
	return s, eligible, nil
}

// missingFlags reports whether a trace at one of the corpus indexes idx
// was stored without its action flags.
func (c *Corpus) missingFlags(idx []int) bool {
	for _, i := range idx {
		if !c.rows[i].HasFlags {
			return true
		}
	}
	return false
}

// FillFlags computes the action flags of the traces stored without them
// (before schema 5) by decoding those traces, and records them in one
// transaction, so that it is done once. It returns how many traces it
// decoded. A store that cannot be written (store.DB.ReadOnly) keeps them
// for this Corpus only: the next mine computes them again.
func (c *Corpus) FillFlags(ctx context.Context) (int, error) {
	var idx []int
	for i := range c.rows {
		if !c.rows[i].HasFlags {
			idx = append(idx, i)
		}
	}
	flags := make(map[int64][]byte, len(idx))
	for start := 0; start < len(idx); start += readChunk {
		part := idx[start:min(start+readChunk, len(idx))]
		traces, err := c.Read(ctx, part)
		if err != nil {
			return 0, err
		}
		for k, t := range traces {
			row := &c.rows[part[k]]
			f := mine.Summarize(t).Flags()
			if f == nil {
				f = []byte{}
			} else if len(f) != len(row.Symbols) {
				return 0, fmt.Errorf("stored trace %s: its document has %d actions, its row %d", row.TraceID, len(f), len(row.Symbols))
			}
			flags[row.Seq] = f
		}
	}
	if err := c.db.SetTraceFlags(ctx, flags); err != nil && !errors.Is(err, store.ErrReadOnly) {
		return 0, err
	}
	for _, i := range idx {
		c.rows[i].Flags, c.rows[i].HasFlags = flags[c.rows[i].Seq], true
	}
	return len(idx), nil
}

// SkippedSessions are the sessions imports read that did not become
// traces, in the order a load of their files lists them, as Mine reports
// them; for a caller that mines the decoded corpus itself.
func (c *Corpus) SkippedSessions(ctx context.Context) ([]source.SkippedSession, error) {
	return c.skippedSessions(ctx)
}

func (c *Corpus) skippedSessions(ctx context.Context) ([]source.SkippedSession, error) {
	list, err := c.db.SkippedSessions(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b store.SkippedSession) int {
		if c := comparePaths(filepath.ToSlash(a.Path), filepath.ToSlash(b.Path)); c != 0 {
			return c
		}
		return cmp.Compare(a.Line, b.Line)
	})
	out := make([]source.SkippedSession, len(list))
	for i, k := range list {
		out[i] = source.SkippedSession{Path: k.Path, Format: k.Format, ID: k.SessionID, Line: k.Line, Reason: k.Reason, Message: k.Message}
	}
	return out, nil
}
