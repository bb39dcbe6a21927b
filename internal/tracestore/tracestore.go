// Package tracestore keeps normalized traces in the embedded database
// (package store), so that a growing corpus is decoded once: an import
// decodes only the documents the store does not hold yet (by source hash,
// the sha256 of the bytes a trace was read from) and keeps, besides each
// trace's normalized document, what the first pass of mining computes of
// it (mine.Summary: its exclusion, its action signatures as ids into one
// signature table, its actions' flags for the gapped miner). Mining the store then reads those rows, not the
// documents, and decodes only the examples of the candidates it builds,
// as a two-pass run over files does; the report is the one mining the
// same files gives, byte for byte.
//
// Writes are transactions of at most a batch of traces, under SQLite's
// write-ahead log: an import that is interrupted keeps the batches it
// committed, whole, and a later import of the same directory skips them
// and stores the rest. An import that fails on invalid input removes the
// traces it added; a trace it replaced keeps its new version.
package tracestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// StatusInterrupted is the status of an import whose context was
// cancelled, or whose process was killed: what it committed is kept, and
// importing the directory again stores the rest.
const StatusInterrupted = store.ImportInterrupted

// racyWindow is how recent a file's modification time may be, against
// the start of the import that reads it, for the import to trust it next
// time. A file written again within its file system's timestamp
// granularity of being read (up to 2 s, FAT's) could keep its size and
// modification time with other bytes; such a file is read again by the
// next import, which then trusts it (as git treats a racily clean file).
const racyWindow = 2 * time.Second

// Batch bounds of one import transaction: large enough that a commit
// (an fsync of the write-ahead log) costs little per trace, small enough
// that an interrupted import loses little work and the pending traces take
// little memory.
const (
	DefaultBatchTraces = 2000
	batchBytes         = 32 << 20
)

// Encode returns a trace's normalized document as the store keeps it:
// trace v1, compact. Export (Indent) turns it into the bytes crystallize
// import --out writes. Kept compact, a document takes a third less room
// and is encoded and decoded faster: encoding/json's MarshalIndent would
// compact the document once more before indenting it.
func Encode(t *trace.Trace) ([]byte, error) {
	data, err := t.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding trace %s: %w", t.ID, err)
	}
	return data, nil
}

// Indent returns a compact trace document indented by two spaces, as
// crystallize import --out writes it, with a final newline. Its strings
// are kept as they were escaped (by Trace.MarshalJSON or the canonical
// writer, alike: jsontext.AppendQuote).
func Indent(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(body) + len(body)/2)
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// Format is the format a trace came from, as import names it: the agent
// of an agent's session (metadata.agent), "trace" otherwise.
func Format(t *trace.Trace) string {
	if agent, _ := t.Metadata["agent"].(string); agent != "" {
		return agent
	}
	return "trace"
}

// summary is the JSON form of a stored trace's summary: what mine.Summary
// holds besides the signatures, and the trace's format.
type summary struct {
	Format      string               `json:"format"`
	Exclusion   *candidate.Exclusion `json:"exclusion,omitempty"`
	Agent       string               `json:"agent,omitempty"`
	Observation string               `json:"observation,omitempty"`
	// Session is the session the trace belongs to when it is not the
	// trace itself (metadata.parent_session_id): mining counts support
	// in sessions.
	Session string `json:"session,omitempty"`
}

// prepare computes what the store keeps of t.
func prepare(t *trace.Trace) (prepared, error) {
	body, err := Encode(t)
	if err != nil {
		return prepared{}, err
	}
	sum := mine.Summarize(t)
	agent, observation := sum.Evidence()
	session := sum.Session()
	if session == t.ID {
		session = ""
	}
	js, err := json.Marshal(summary{Format: Format(t), Exclusion: sum.Exclusion(), Agent: agent, Observation: observation, Session: session})
	if err != nil {
		return prepared{}, fmt.Errorf("encoding the summary of trace %s: %w", t.ID, err)
	}
	observations := 0
	for i := range t.Actions {
		if t.Actions[i].Kind == trace.KindObservation {
			observations++
		}
	}
	return prepared{
		row: store.StoredTrace{
			TraceID: t.ID, SourceHash: t.SourceHash, OriginPath: t.Origin.Path, OriginLine: t.Origin.Line,
			Actions: len(t.Actions), Excluded: sum.Exclusion() != nil, Summary: string(js),
			Signatures: sum.Signatures(), Flags: sum.Flags(), Body: body,
		},
		format:       Format(t),
		observations: observations,
	}, nil
}

type prepared struct {
	row          store.StoredTrace
	format       string
	observations int
	err          error
}

// ImportOptions control Import.
type ImportOptions struct {
	// SkipInvalid stores the valid traces and lists the invalid files and
	// lines in ImportResult.Skipped, instead of failing.
	SkipInvalid bool
	// Rules normalize agents' session logs; nil means normalize.Default().
	Rules *normalize.Rules
	// Now is the time recorded for the import (RFC 3339).
	Now func() string
	// BatchTraces is the most traces one transaction stores; 0 means
	// DefaultBatchTraces.
	BatchTraces int
	// Progress, if not nil, is called after each batch of input read.
	Progress func(source.ScanProgress)
	// Committed, if not nil, is called after each batch is committed,
	// with the traces stored so far by this import.
	Committed func(stored int)
	// Rehash reads every file, also those an earlier import read that
	// kept their size and modification time (which are otherwise not
	// opened): for a file changed by a tool that restores its time.
	Rehash bool
}

// FormatCount counts the traces of one format an import stored.
type FormatCount struct {
	Format          string `json:"format"`
	Traces          int    `json:"traces"`
	Actions         int    `json:"actions"`
	Observations    int    `json:"observations"`
	SkippedSessions int    `json:"skipped_sessions"`
}

// ImportResult is what Import did.
type ImportResult struct {
	ImportID int64
	// Added and Replaced traces were stored (Replaced ones took the place
	// of the trace stored from the same origin, whose source changed).
	Added, Replaced int
	// Known documents were already stored and were not decoded;
	// Duplicates were decoded and found stored (or read twice).
	Known, Duplicates int
	// Unchanged files were read by an earlier import and have its size
	// and modification time: they were not opened.
	Unchanged int
	// Formats count the stored traces per format, in format order.
	Formats         []FormatCount
	Skipped         []source.Skipped
	SkippedSessions []source.SkippedSession
}

// Import stores the traces under dir that the store does not hold. See
// the package documentation for what is kept and how failures leave the
// store.
func Import(ctx context.Context, db *store.DB, dir string, opts ImportOptions) (*ImportResult, error) {
	now := opts.Now
	if now == nil {
		now = func() string { return "" }
	}
	batchTraces := opts.BatchTraces
	if batchTraces <= 0 {
		batchTraces = DefaultBatchTraces
	}
	// An import killed before it recorded its end is over: say so before
	// this one is recorded, so that the store's history is true.
	if _, err := db.InterruptStaleTraceImports(ctx, now()); err != nil {
		return nil, err
	}
	known, err := db.TraceKeys(ctx)
	if err != nil {
		return nil, err
	}
	read, err := db.TraceFiles(ctx)
	if err != nil {
		return nil, err
	}
	// The directory is recorded by its absolute path: traces' origins are
	// relative to it, and the same directory named two ways is one place.
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("importing traces from %s: %w", dir, err)
	}
	started := time.Now()
	var unchanged func(source.FileStat) bool
	if !opts.Rehash {
		unchanged = func(f source.FileStat) bool {
			r, ok := read[f.Path]
			return ok && f.ModTime != 0 && r.Size == f.Size && r.ModTime == f.ModTime
		}
	}
	id, err := db.BeginTraceImport(ctx, root, now())
	if err != nil {
		return nil, err
	}
	res := &ImportResult{ImportID: id}
	formats := map[string]*FormatCount{}
	format := func(name string) *FormatCount {
		if formats[name] == nil {
			formats[name] = &FormatCount{Format: name}
		}
		return formats[name]
	}
	var (
		pending      []prepared
		pendingBytes int
		stored       int
	)
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		rows := make([]store.StoredTrace, len(pending))
		for i := range pending {
			rows[i] = pending[i].row
		}
		put, err := db.PutTraces(ctx, id, rows)
		if err != nil {
			return err
		}
		res.Added += put.Added
		res.Replaced += put.Replaced
		res.Duplicates += put.Duplicates
		stored += put.Added + put.Replaced
		// Counted once committed, so that the counts are of what the
		// store holds; a duplicate is not counted.
		for _, p := range pending {
			k := key(&p.row)
			if known[k] {
				continue
			}
			known[k] = true
			fc := format(p.format)
			fc.Traces++
			fc.Actions += p.row.Actions
			fc.Observations += p.observations
		}
		pending, pendingBytes = pending[:0], 0
		if opts.Committed != nil {
			opts.Committed(stored)
		}
		return nil
	}
	add := func(p prepared) error {
		if p.err != nil {
			return p.err
		}
		pending = append(pending, p)
		pendingBytes += len(p.row.Body)
		if len(pending) >= batchTraces || pendingBytes >= batchBytes {
			return flush()
		}
		return nil
	}
	// The scan's workers ask docs, the hashes of the documents stored
	// when the import began (one document of trace format is one trace):
	// known grows as batches commit, on this goroutine, while the workers
	// decode the next batch.
	docs := make(map[string]bool, len(known))
	before := make(map[store.TraceKey]bool, len(known))
	for k := range known {
		docs[k.SourceHash] = true
		before[k] = true
	}
	var files []source.FileStat
	scan, err := source.Scan(ctx, dir, source.Options{SkipInvalid: opts.SkipInvalid, Known: func(h string) bool { return docs[h] }, Unchanged: unchanged},
		func(t *trace.Trace) prepared {
			p, err := prepare(t)
			p.err = err
			return p
		},
		func(_ source.Location, p prepared) error { return add(p) },
		opts.Progress)
	if errors.Is(err, source.ErrSessionLog) {
		// Sessions are put together from many records of their files,
		// so they are read whole and stored as a scan's traces are.
		pending, pendingBytes = pending[:0], 0
		var all *source.Result
		all, err = source.Load(ctx, dir, source.Options{SkipInvalid: opts.SkipInvalid, Rules: opts.Rules, Unchanged: unchanged})
		if err == nil {
			res.Skipped, res.SkippedSessions, res.Unchanged, files = all.Skipped, all.SkippedSessions, all.Unchanged, all.Read
			err = addAll(ctx, all.Traces, known, before, &res.Known, add)
		}
	} else if err == nil {
		res.Skipped, res.Known, res.Unchanged, files = scan.Skipped, scan.Known, scan.Unchanged, scan.Read
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		// The end is recorded whatever happened to ctx, so that the
		// import is not left "running".
		end := context.WithoutCancel(ctx)
		status := store.ImportFailed
		if ctx.Err() != nil {
			status = StatusInterrupted
		}
		if ferr := db.FinishTraceImport(end, id, status, now(), res.Known); ferr != nil {
			return nil, fmt.Errorf("importing traces from %s: %w", dir, errors.Join(err, ferr))
		}
		return nil, fmt.Errorf("importing traces from %s: %w", dir, err)
	}
	skipped := make([]store.SkippedSession, len(res.SkippedSessions))
	for i, s := range res.SkippedSessions {
		format(s.Format).SkippedSessions++
		// Keyed by the file's absolute path: a directory imported under
		// two spellings lists a session once.
		abs, err := filepath.Abs(s.Path)
		if err != nil {
			return nil, fmt.Errorf("importing traces from %s: %w", dir, err)
		}
		skipped[i] = store.SkippedSession{File: abs, Path: s.Path, Line: s.Line, Format: s.Format, SessionID: s.ID, Reason: s.Reason, Message: s.Message}
	}
	// Every trace is committed: the bookkeeping that ends the import is
	// done whatever happens to ctx now, so that it is not left "running".
	end := context.WithoutCancel(ctx)
	if err := db.PutSkippedSessions(end, id, skipped); err != nil {
		return nil, err
	}
	trusted, forget := readFiles(dir, files, res.Skipped, started)
	if err := db.PutTraceFiles(end, id, trusted, forget); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(formats)) {
		res.Formats = append(res.Formats, *formats[name])
	}
	if err := db.FinishTraceImport(end, id, store.ImportComplete, now(), res.Known); err != nil {
		return nil, err
	}
	return res, nil
}

// readFiles sorts the files an import read into those the next import may
// skip while they keep their size and modification time, and those it
// must read again: a file with invalid input (listed in skipped, so that
// the next import lists it too) and one modified within racyWindow of
// started.
func readFiles(dir string, files []source.FileStat, skipped []source.Skipped, started time.Time) (trusted []store.TraceFile, forget []string) {
	invalid := make(map[string]bool, len(skipped))
	for _, s := range skipped {
		invalid[s.Path] = true
	}
	racy := started.Add(-racyWindow).UnixNano()
	for _, f := range files {
		if invalid[filepath.Join(dir, filepath.FromSlash(f.Rel))] || f.ModTime == 0 || f.ModTime >= racy {
			forget = append(forget, f.Path)
			continue
		}
		trusted = append(trusted, store.TraceFile{Path: f.Path, Root: dir, Rel: f.Rel, Size: f.Size, ModTime: f.ModTime, SourceHash: f.SourceHash})
	}
	return trusted, forget
}

// addAll prepares the traces of a whole load on every core and adds the
// ones not stored yet, in order. known is the hashes stored now (it may
// hold traces a scan of the same directory stored before it met a session
// log), before those stored when the import began, which count as known.
func addAll(ctx context.Context, traces []*trace.Trace, known, before map[store.TraceKey]bool, counted *int, add func(prepared) error) error {
	const chunk = 512
	for start := 0; start < len(traces); start += chunk {
		part := traces[start:min(start+chunk, len(traces))]
		out := make([]prepared, len(part))
		var next atomic.Int64
		var wg sync.WaitGroup
		// known is not written while the workers read it: add, which
		// commits, runs after they are done.
		for range min(runtime.GOMAXPROCS(0), len(part)) {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(part) {
						return
					}
					if !known[store.TraceKey{SourceHash: part[i].SourceHash, TraceID: part[i].ID}] {
						out[i], out[i].err = prepare(part[i])
					}
				}
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, p := range out {
			if k := (store.TraceKey{SourceHash: part[i].SourceHash, TraceID: part[i].ID}); known[k] {
				if before[k] {
					*counted++
				}
				continue
			}
			if err := add(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Decode reads a stored body back into the trace import decoded: the
// document is a crystallization trace, and where it was read from (its
// origin and source hash, which a trace's own fields cannot carry for
// every format) is the store's.
//
// A stored document was checked when it was imported and written back in
// the compact form Trace.MarshalJSON gives, so Parser.DecodeDirect reads
// nearly every one; a document it declines is decoded the usual way,
// which gives the same trace or the error.
func Decode(body []byte, row *store.TraceRow, p *trace.Parser) (*trace.Trace, error) {
	origin := trace.Origin{Path: row.OriginPath, Line: row.OriginLine}
	t, ok := p.DecodeDirect(body, origin.Path, origin.Line)
	if !ok {
		v, err := p.Parse(body, origin.Path, origin.Line)
		if err != nil {
			return nil, fmt.Errorf("stored trace %s: %w", row.TraceID, err)
		}
		doc, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("stored trace %s: expected object, got %s", row.TraceID, trace.TypeName(v))
		}
		if t, err = trace.FromValue(doc, origin.Path, origin.Line); err != nil {
			return nil, fmt.Errorf("stored trace %s: %w", row.TraceID, err)
		}
	}
	if t.ID != row.TraceID {
		return nil, fmt.Errorf("stored trace %s: its document says id %q", row.TraceID, t.ID)
	}
	t.Origin = origin
	t.Source = origin.String()
	t.SourceHash = row.SourceHash
	trace.Normalize(t)
	return t, nil
}

func key(t *store.StoredTrace) store.TraceKey {
	return store.TraceKey{SourceHash: t.SourceHash, TraceID: t.TraceID}
}

// rowSummary rebuilds the miner's summary of a stored trace.
func rowSummary(row *store.TraceRow, signatures []string) (mine.Summary, string, error) {
	var s summary
	if err := json.Unmarshal([]byte(row.Summary), &s); err != nil {
		return mine.Summary{}, "", fmt.Errorf("stored trace %s: summary: %w", row.TraceID, err)
	}
	var sigs []string
	var flags []uint8
	if s.Exclusion == nil {
		sigs = make([]string, len(row.Symbols))
		for j, id := range row.Symbols {
			sigs[j] = signatures[id]
		}
		// A trace stored before the store kept flags has none until
		// Corpus.Mine computes them; only the gapped miner reads them.
		if row.HasFlags {
			if len(row.Flags) != len(row.Symbols) {
				return mine.Summary{}, "", fmt.Errorf("stored trace %s: %d action flags for %d actions", row.TraceID, len(row.Flags), len(row.Symbols))
			}
			flags = row.Flags
		}
	}
	session := s.Session
	if session == "" {
		session = row.TraceID
	}
	return mine.NewSummary(s.Exclusion, s.Agent, s.Observation, session, sigs, flags), s.Format, nil
}
