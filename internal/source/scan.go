package source

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// A scan is a load that keeps nothing: each trace is decoded, handed to a
// summary function on the worker that decoded it, and dropped. Only the
// summaries and each trace's Location (its file, line, byte offset and
// length, and source hash) stay, so a scan of a corpus takes the memory
// of what the caller keeps, not of the corpus; ReadAt reads a trace again
// from its location. This is the first pass of a mining run in bounded
// memory (the second reads back only the traces it needs).
//
// The corpus is cut into batches of at most scanBatchBytes of input (or
// scanBatchUnits documents); the feeder reads the next batch while the
// workers decode the current one, and the collector goes through each
// batch in order. So the traces come out in the order Load returns them,
// and the memory of a scan is two batches plus the caller's summaries.

const (
	// scanBatchBytes bounds the input bytes of one batch: enough work
	// for every core to amortize starting them, little memory next to
	// the summaries of a large corpus.
	scanBatchBytes = 8 << 20
	// scanBatchUnits bounds the documents of a batch of tiny documents.
	scanBatchUnits = 4096
)

// ErrSessionLog is returned by Scan for a corpus with an agent session
// log: a session is assembled from many records of its file, so it cannot
// be read back by its location alone. Such a corpus is read with Load.
var ErrSessionLog = errors.New("agent session logs are read whole, not scanned")

// Location is where a scanned trace lives, enough to read it again with
// Catalog.ReadAt and to check that it did not change meanwhile.
type Location struct {
	file int32
	// Line is the 1-based line of a JSON Lines record, or 0 for a *.json
	// file.
	Line int
	// Offset and Length are the record's bytes in its file, without the
	// line ending; a *.json file is read whole.
	Offset, Length int64
	// SourceHash is the trace's source hash.
	SourceHash string
}

// Catalog is the list of files a scan read, against which Locations are
// read back.
type Catalog struct {
	files []file
	limit int64
}

// Path returns the file of loc as messages name it.
func (c *Catalog) Path(loc Location) string { return c.files[loc.file].display }

// ScanResult is what Scan found besides the traces it handed out.
type ScanResult struct {
	// Catalog reads the scanned traces again.
	Catalog *Catalog
	// Skipped and Files are as in Result. A scan reads no session log
	// (ErrSessionLog), so it has no skipped sessions.
	Skipped []Skipped
	Files   int
	// Traces is the number of traces handed to visit, Bytes the size of
	// the files read.
	Traces int
	Bytes  int64
	// Known is the number of documents Options.Known reported as known,
	// which were neither decoded nor visited.
	Known int
	// Read and Unchanged are as in Result.
	Read      []FileStat
	Unchanged int
}

// ScanProgress is how far a scan is: the traces and the bytes of input
// decoded so far, and the input's total size.
type ScanProgress struct {
	Traces            int
	Bytes, TotalBytes int64
}

// Scan reads every trace under dir, with the files, order, checks and
// errors of Load (see Load), but returns none of them: summarize is called
// for each valid trace on the goroutine that decoded it, possibly
// concurrently, and visit is then called, on the goroutine that called
// Scan, in the order Load would return the traces, with the trace's
// location and summary. An error from visit stops the scan and is
// returned. progress, when not nil, is called on the calling goroutine
// after each batch.
//
// Invalid input is handled as Load handles it: without
// Options.SkipInvalid any bad file or line makes Scan fail, after the whole
// corpus was read, with the full trace.ErrorList (visit may have been
// called for valid traces by then; the caller drops what it built);
// with it, the bad files and lines are listed in ScanResult.Skipped. A
// corpus with an agent session log fails with ErrSessionLog, a JSON Lines
// one before anything is visited. Options.Rules and Options.Progress are
// not used: only session logs need rules, and progress is reported in
// traces and bytes. Cancelling ctx stops the scan and returns ctx's
// error.
func Scan[T any](ctx context.Context, dir string, opts Options, summarize func(*trace.Trace) T, visit func(Location, T) error, progress func(ScanProgress)) (*ScanResult, error) {
	return ScanWith(ctx, dir, opts, Summarizer[T]{Trace: summarize}, visit, progress)
}

// Summarizer is what a scan makes of each valid trace.
type Summarizer[T any] struct {
	// Trace summarizes a decoded trace.
	Trace func(*trace.Trace) T
	// Skim, when not nil, summarizes a trace document from what
	// trace.Parser.Skim reads of it, its Source and SourceHash set as
	// on a decoded trace, and must give what Trace gives for the same
	// document decoded. The scan skims each document of the trace
	// format first and decodes it whole only when Skim declines it:
	// for an invalid document, whose errors are then the decoder's,
	// and for one in a form Skim leaves to the decoder. A document of
	// another format (a run record, a composition report) is always
	// decoded.
	Skim func(*trace.Skim) T
	// UseSkim, when not nil, is asked once, after Options.Found, whether
	// this scan skims: a caller that keeps the decoded traces of a
	// small corpus decides it by the corpus's size.
	UseSkim func() bool
}

// ScanWith is Scan with a Summarizer, which may summarize the traces
// from what trace.Parser.Skim reads of them instead of decoding them.
// Everything else (the files, order, checks, errors, locations and
// source hashes) is Scan's.
func ScanWith[T any](ctx context.Context, dir string, opts Options, summarize Summarizer[T], visit func(Location, T) error, progress func(ScanProgress)) (*ScanResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("loading traces: %w", err)
	}
	limit := opts.MaxFileBytes
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	limit = min(limit, math.MaxInt64-1)
	files, bad, err := find(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && len(bad) == 0 {
		return nil, fmt.Errorf("no *.json or *.jsonl trace files under %s", dir)
	}
	files, unchanged := skipUnchanged(files, opts.Unchanged)
	var total int64
	for _, f := range files {
		total += f.size
	}
	if opts.Found != nil {
		opts.Found(len(files), total)
	}
	if summarize.UseSkim != nil && !summarize.UseSkim() {
		summarize.Skim = nil
	}
	var p trace.Parser
	for _, f := range files {
		if f.lines && peekSession(f, limit, &p) != nil {
			return nil, fmt.Errorf("%s: %w", f.display, ErrSessionLog)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan *scanBatch, 1)
	var feeder sync.WaitGroup
	feeder.Go(func() {
		defer close(batches)
		feedScan(ctx, files, limit, batches)
	})
	defer feeder.Wait()
	defer cancel()

	res := &ScanResult{Catalog: &Catalog{files: files, limit: limit}, Files: len(files), Bytes: total, Read: stats(files), Unchanged: unchanged}
	c := newCollector(bad)
	workers := runtime.GOMAXPROCS(0)
	parsers := make([]trace.Parser, workers)
	var read int64
	for b := range batches {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("loading traces: %w", err)
		}
		out := make([]scanned[T], len(b.units))
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range min(workers, len(b.units)) {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(b.units) || ctx.Err() != nil {
						return
					}
					out[i] = scanUnit(files, &b.units[i], limit, &parsers[w], opts.Known, &summarize)
				}
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("loading traces: %w", err)
		}
		for i := range out {
			u, o := &b.units[i], &out[i]
			f := files[u.file]
			if o.session {
				return nil, fmt.Errorf("%s: %w", f.display, ErrSessionLog)
			}
			if !f.lines {
				res.Read[u.file].SourceHash = o.hash
			}
			if o.known {
				res.Known++
				continue
			}
			if o.errs != nil {
				c.reject(f.display, u.line, o.errs)
				continue
			}
			if !c.admit(f.display, u.line, o.id) {
				continue
			}
			res.Traces++
			loc := Location{file: int32(u.file), Line: u.line, Offset: u.offset, Length: u.length, SourceHash: o.hash}
			if err := visit(loc, o.summary); err != nil {
				return nil, err
			}
		}
		read += b.bytes
		if progress != nil {
			progress(ScanProgress{Traces: res.Traces, Bytes: read, TotalBytes: total})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("loading traces: %w", err)
	}
	if res.Skipped, err = c.finish(opts.SkipInvalid); err != nil {
		return nil, err
	}
	if res.Traces == 0 && res.Known == 0 && len(c.errs) == 0 && unchanged == 0 {
		return nil, fmt.Errorf("no traces in the *.json or *.jsonl files under %s", dir)
	}
	return res, nil
}

// scanBatch is a run of documents, in load order.
type scanBatch struct {
	units []scanUnitIn
	bytes int64 // input bytes the batch covers, for progress
}

// scanUnitIn is one document to decode: a whole *.json file (data nil),
// or a record of a JSON Lines file, or a read error at a line.
type scanUnitIn struct {
	file           int
	line           int
	offset, length int64
	data           []byte
	err            trace.ErrorList
}

// scanned is what became of a document.
type scanned[T any] struct {
	summary  T
	id, hash string
	errs     trace.ErrorList
	session  bool // a *.json document of a session format
	known    bool // Options.Known knew its source hash: not decoded
}

func scanUnit[T any](files []file, u *scanUnitIn, limit int64, p *trace.Parser, known func(string) bool, summarize *Summarizer[T]) scanned[T] {
	if u.err != nil {
		return scanned[T]{errs: u.err}
	}
	f := files[u.file]
	var e entry
	if !f.lines {
		// A skimmed document keeps nothing of its bytes, so its buffer
		// is used again for the next file; a decoded one may (a run
		// record keeps its raw bytes), so the buffer then goes with it.
		buf := scanBuffers.Get().(*[]byte)
		data, err := readLimitedInto((*buf)[:0], f.open, limit)
		release := func() {
			if cap(data) <= maxScanBuffer {
				*buf = data[:0]
				scanBuffers.Put(buf)
			}
		}
		if err != nil {
			release()
			return scanned[T]{errs: fileError(f, 0, err).errs}
		}
		u.length = int64(len(data))
		var hash string
		if known != nil {
			if hash = trace.HashBytes(data); known(hash) {
				release()
				return scanned[T]{known: true, hash: hash}
			}
		}
		doc := bytes.TrimPrefix(data, utf8BOM)
		if s, ok := skim(summarize, p, f, data, doc, 0, hash); ok {
			release()
			return s
		}
		v, err := p.Parse(doc, f.rel, 0)
		if doc, ok := v.(map[string]any); ok && err == nil && detectSession(doc) != nil {
			return scanned[T]{session: true}
		}
		e = completeTrace(f, data, 0, v, err)
	} else {
		var hash string
		if known != nil {
			if hash = trace.HashBytes(u.data); known(hash) {
				return scanned[T]{known: true}
			}
		}
		doc := u.data
		if u.line == 1 {
			doc = bytes.TrimPrefix(doc, utf8BOM)
		}
		if s, ok := skim(summarize, p, f, u.data, doc, u.line, hash); ok {
			return s
		}
		e = decodeOne(f, u.data, doc, u.line, p)
	}
	if e.errs != nil {
		return scanned[T]{errs: e.errs}
	}
	return scanned[T]{summary: summarize.Trace(e.trace), id: e.trace.ID, hash: e.trace.SourceHash}
}

// skim summarizes the document doc (hashed, the bytes its source hash
// covers; hash, that hash when already taken) from its skim, as
// completeTrace would complete the decoded trace, when the scan skims and
// Skim is sure of the document; ok is false otherwise. A skimmed
// document is never an agent session record (Skim declines the members
// detectSession looks for), so it is a trace of the first adapter.
func skim[T any](summarize *Summarizer[T], p *trace.Parser, f file, hashed, doc []byte, line int, hash string) (scanned[T], bool) {
	if summarize.Skim == nil {
		return scanned[T]{}, false
	}
	s, ok := p.Skim(doc, f.rel, line)
	if !ok {
		return scanned[T]{}, false
	}
	if hash == "" {
		hash = trace.HashBytes(hashed)
	}
	s.Source = trace.Origin{Path: f.rel, Line: line}.String()
	s.SourceHash = hash
	return scanned[T]{summary: summarize.Skim(s), id: s.ID, hash: hash}, true
}

// scanBuffers holds the buffers *.json files are read into by a scan,
// for the files whose bytes nothing keeps: reading every file into a new
// buffer, grown as it is read, was a third of the cost of skimming them.
var scanBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxScanBuffer is the largest buffer scanBuffers keeps, so that one
// large file does not hold its size for the rest of the scan.
const maxScanBuffer = 1 << 20

// readLimitedInto is readLimited reading into buf, grown to the file's
// size at once.
func readLimitedInto(buf []byte, path string, limit int64) ([]byte, error) {
	fh, size, err := openRegular(path)
	if err != nil {
		return buf, err
	}
	defer fh.Close()
	if size > limit {
		return buf, fmt.Errorf("file is %d bytes, over the %d-byte limit", size, limit)
	}
	// One byte more than the size, so that the read ends with io.EOF
	// without growing the buffer when the file did not grow.
	buf = slices.Grow(buf[:0], int(size)+1)
	for {
		n, err := fh.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, fmt.Errorf("file is over the %d-byte limit", limit)
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, fmt.Errorf("reading file: %s", unwrapPathError(err))
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 4096)
		}
	}
}

// feedScan cuts the files into batches and sends them in order, until
// done or ctx is cancelled. JSON Lines files are read here, line by line,
// so that each record's offset is known.
func feedScan(ctx context.Context, files []file, limit int64, out chan<- *scanBatch) {
	b := &scanBatch{}
	var size int64
	send := func() bool {
		if len(b.units) == 0 {
			return true
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return false
		}
		b, size = &scanBatch{}, 0
		return true
	}
	add := func(u scanUnitIn, n int64) bool {
		b.units = append(b.units, u)
		size += n
		if size >= scanBatchBytes || len(b.units) >= scanBatchUnits {
			return send()
		}
		return true
	}
	for i, f := range files {
		if !f.lines {
			b.bytes += f.size
			if !add(scanUnitIn{file: i}, f.size) {
				return
			}
			continue
		}
		fh, _, err := openRegular(f.open)
		if err != nil {
			if !add(scanUnitIn{file: i, err: fileError(f, 0, err).errs}, 0) {
				return
			}
			continue
		}
		lr := newLineReader(fh, limit, readBufferBytes)
		for {
			off := lr.read
			data, n, err := lr.next(nil)
			b.bytes += lr.read - off
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				e := fileError(f, lr.line+1, fmt.Errorf("reading file: %s", unwrapPathError(err)))
				if !add(scanUnitIn{file: i, line: lr.line + 1, err: e.errs}, 0) {
					fh.Close()
					return
				}
				break
			}
			var u scanUnitIn
			switch {
			case n > limit:
				u = scanUnitIn{file: i, line: lr.line, err: fileError(f, lr.line, fmt.Errorf("line is %d bytes, over the %d-byte limit", n, limit)).errs}
			case len(bytes.TrimSpace(data)) == 0:
				continue
			default:
				u = scanUnitIn{file: i, line: lr.line, offset: off, length: n, data: data}
			}
			if !add(u, n) {
				fh.Close()
				return
			}
		}
		fh.Close()
	}
	send()
}

// ReadAt reads the traces at locs again, decoding them on every core, and
// returns them in the order of locs. A trace whose bytes changed since the
// scan (its source hash differs) is an error naming its file and line, and
// so is a file that can no longer be read.
func (c *Catalog) ReadAt(ctx context.Context, locs []Location) ([]*trace.Trace, error) {
	return c.ReadWindows(ctx, locs, nil)
}

// ReadWindows is ReadAt for the actions of windows[i] of the trace at
// locs[i] (trace.Trace.Window): it checks the source hash before it
// decodes, and then builds only the window's actions (trace.Parser.DecodeWindow),
// which is most of the cost of reading back a trace when a few of its
// actions are wanted. A window past the trace's last action is an error.
// With windows nil it is ReadAt.
func (c *Catalog) ReadWindows(ctx context.Context, locs []Location, windows []trace.Window) ([]*trace.Trace, error) {
	if windows != nil && len(windows) != len(locs) {
		return nil, fmt.Errorf("reading traces: %d windows for %d traces", len(windows), len(locs))
	}
	out := make([]*trace.Trace, len(locs))
	errs := make([]error, len(locs))
	workers := min(runtime.GOMAXPROCS(0), len(locs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var p trace.Parser
			for {
				i := int(next.Add(1)) - 1
				if i >= len(locs) || ctx.Err() != nil {
					return
				}
				var w *trace.Window
				if windows != nil {
					w = &windows[i]
				}
				out[i], errs[i] = c.readOne(locs[i], w, &p)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("reading traces: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Catalog) readOne(loc Location, w *trace.Window, p *trace.Parser) (*trace.Trace, error) {
	f := c.files[loc.file]
	where := trace.Origin{Path: f.display, Line: loc.Line}.String()
	var e entry
	if !f.lines {
		data, err := readLimited(f.open, c.limit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if w != nil {
			return decodeWindow(f, data, bytes.TrimPrefix(data, utf8BOM), loc, *w, where, p)
		}
		e = decodeBack(f, data, bytes.TrimPrefix(data, utf8BOM), 0, p)
	} else {
		fh, _, err := openRegular(f.open)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		data := make([]byte, loc.Length)
		_, err = fh.ReadAt(data, loc.Offset)
		fh.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: reading file: %s", where, unwrapPathError(err))
		}
		doc := data
		if loc.Line == 1 {
			doc = bytes.TrimPrefix(doc, utf8BOM)
		}
		if w != nil {
			return decodeWindow(f, data, doc, loc, *w, where, p)
		}
		e = decodeBack(f, data, doc, loc.Line, p)
	}
	if e.errs != nil {
		return nil, e.errs
	}
	if e.trace.SourceHash != loc.SourceHash {
		return nil, fmt.Errorf("%s: changed while it was being mined (source hash %s, was %s)", where, e.trace.SourceHash, loc.SourceHash)
	}
	return e.trace, nil
}

// decodeWindow decodes the actions of w of the trace document doc, read
// back from loc (hashed is the bytes its source hash covers). The hash is
// checked first: DecodeWindow trusts the actions it skips, which it may
// only do for the bytes the first pass decoded. A document it declines is
// decoded whole and cut.
func decodeWindow(f file, hashed, doc []byte, loc Location, w trace.Window, where string, p *trace.Parser) (*trace.Trace, error) {
	if h := trace.HashBytes(hashed); h != loc.SourceHash {
		return nil, fmt.Errorf("%s: changed while it was being mined (source hash %s, was %s)", where, h, loc.SourceHash)
	}
	tr, ok := p.DecodeWindow(doc, f.rel, loc.Line, w)
	if !ok {
		e := decodeOne(f, hashed, doc, loc.Line, p)
		if e.errs != nil {
			return nil, e.errs
		}
		if w.Lo < 0 || w.Hi < w.Lo || w.Hi > len(e.trace.Actions) {
			return nil, fmt.Errorf("%s: has %d actions, read back for actions %d to %d", where, len(e.trace.Actions), w.Lo, w.Hi)
		}
		return e.trace.Window(w), nil
	}
	tr.Origin = trace.Origin{Path: f.rel, Line: loc.Line}
	tr.Source = tr.Origin.String()
	tr.SourceHash = loc.SourceHash
	return tr, nil
}
