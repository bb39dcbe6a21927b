package source

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// A load is a pipeline of three parts:
//
//   - the feeder goes through the files in path order and hands out jobs:
//     a *.json file, or a JSON Lines file of at most chunkBytes, is one job
//     that a worker reads and decodes whole; a larger JSON Lines file is
//     read by the feeder itself, as a stream, and handed out as chunks of
//     records (see lines.go), so that its records are decoded by all the
//     workers and it is never in memory whole;
//   - runtime.GOMAXPROCS workers decode jobs, each with its own
//     trace.Parser, so that the strings that repeat between traces are
//     stored once per worker rather than once per action, without a lock;
//   - the collector, on the goroutine that called Load, files each result
//     under its file and position in the file, and reports progress.
//
// Results arrive in any order; their positions put them back in file and
// line order. The job channel is unbuffered, so the feeder reads ahead of
// the workers by one chunk at most: the memory of a load is its traces,
// plus a chunk per worker.

// progressBytes is the progress unit of a streamed JSON Lines file.
const progressBytes = 1 << 20

// job is one piece of work for a worker.
type job struct {
	file  int   // index of the file in the load
	seq   int   // position of the chunk in its file; 0 for a whole file
	last  bool  // the file's last job
	whole bool  // read and decode the whole file; chunk is unused
	chunk chunk // records read by the feeder
}

// result is what a worker made of a job.
type result struct {
	file, seq int
	last      bool
	read      int64 // bytes of the file the job covered, for progress
	entries   []entry
}

// decodeAll decodes files and returns the entries of files[i] at index i,
// in line order, so that the output order does not depend on
// scheduling. See the comment at the top of this file.
//
// Progress counts units: one for each *.json file and each JSON Lines
// file of at most chunkBytes, and one per started progressBytes for a
// larger JSON Lines file, whose units are counted as its bytes are decoded
// (all but the last, which is counted when the file is done, so that done
// reaches total exactly when the load ends). Progress is called each time
// the count grows.
func decodeAll(ctx context.Context, files []file, limit int64, rules *normalize.Rules, progress func(done, total int), summarize func(*trace.Trace) any, sp *spool) ([][]entry, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	units := make([]int, len(files))
	total, jobsAtLeast := 0, 0
	for i, f := range files {
		units[i] = 1
		jobsAtLeast++
		if streamed(f) {
			units[i] = int((f.size + progressBytes - 1) / progressBytes)
			jobsAtLeast += int(f.size/chunkBytes) - 1
		}
		total += units[i]
	}

	jobs := make(chan *job)
	results := make(chan result)
	var feeder, workers sync.WaitGroup
	feeder.Go(func() {
		defer close(jobs)
		feed(ctx, files, limit, jobs)
	})
	for range min(runtime.GOMAXPROCS(0), jobsAtLeast) {
		workers.Go(func() {
			var p trace.Parser
			var buf []byte
			for j := range jobs {
				r := work(ctx, files[j.file], j, limit, rules, &p)
				if summarize != nil {
					buf = thinEntries(r.entries, summarize, sp, buf)
				}
				select {
				case results <- r:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		workers.Wait()
		close(results)
	}()

	// state is the collector's view of one file.
	type state struct {
		chunks    [][]entry // results by position
		got, want int       // results received; expected, once the last is in
		read      int64     // bytes decoded
		done      int       // progress units counted
	}
	states := make([]state, len(files))
	done := 0
collect:
	for {
		// Checked first, so that a Progress that cancels the load is
		// not called again, whatever the select below would pick.
		if ctx.Err() != nil {
			break
		}
		select {
		case r, ok := <-results:
			if !ok {
				break collect
			}
			st := &states[r.file]
			for len(st.chunks) <= r.seq {
				st.chunks = append(st.chunks, nil)
			}
			st.chunks[r.seq] = r.entries
			st.got++
			st.read += r.read
			if r.last {
				st.want = r.seq + 1
			}
			u := min(units[r.file]-1, int(st.read/progressBytes))
			if st.got == st.want {
				u = units[r.file]
			}
			if u > st.done {
				done += u - st.done
				st.done = u
				if progress != nil {
					progress(done, total)
				}
			}
		case <-ctx.Done():
			break collect
		}
	}
	// Either every job is done or ctx is cancelled, and then the feeder
	// and the workers stop at their next send or record. None may outlive
	// the load.
	feeder.Wait()
	workers.Wait()
	// A worker that saw the cancellation may have stopped mid-job after
	// its result raced with ctx.Done; never return such results.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("loading traces: %w", err)
	}
	out := make([][]entry, len(files))
	for i, st := range states {
		if len(st.chunks) == 1 {
			out[i] = st.chunks[0]
			continue
		}
		for _, c := range st.chunks {
			out[i] = append(out[i], c...)
		}
	}
	return out, nil
}

// streamed reports whether f is a JSON Lines file large enough for the
// feeder to stream it in chunks rather than hand it to one worker.
//
// A file of an agent's home outside its session directories is never
// streamed: it is most often not a session log, which its first chunk
// tells, and the rest is then not read.
func streamed(f file) bool { return f.lines && f.size > chunkBytes && f.home == nil }

// feed sends the jobs for files, in order, until they are all sent or ctx
// is cancelled.
func feed(ctx context.Context, files []file, limit int64, jobs chan<- *job) {
	send := func(j *job) bool {
		select {
		case jobs <- j:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var p trace.Parser
	for i, f := range files {
		// A session log is decoded by one worker, whole: its sessions
		// span its records, which chunks would cut apart. Only the first
		// record of a large file is read here to tell.
		if !streamed(f) || peekSession(f, limit, &p) != nil {
			if !send(&job{file: i, last: true, whole: true}) {
				return
			}
			continue
		}
		if !stream(i, f, limit, send) {
			return
		}
	}
}

// stream reads the JSON Lines file files[i] and sends its records in
// chunks. It returns false if a send was refused.
func stream(i int, f file, limit int64, send func(*job) bool) bool {
	fh, _, err := openRegular(f.open)
	if err != nil {
		return send(&job{file: i, last: true, chunk: chunk{err: err}})
	}
	defer fh.Close()
	lr := newLineReader(fh, limit, readBufferBytes)
	for seq := 0; ; seq++ {
		j := &job{file: i, seq: seq}
		j.chunk.data = make([]byte, 0, chunkBytes+readBufferBytes)
		j.last = !lr.fill(&j.chunk)
		if !send(j) {
			return false
		}
		if j.last {
			return true
		}
	}
}

// detectRecords is how many of the first records of a JSON Lines file are
// looked at to tell its format. Agents start their logs with bookkeeping
// records of types that change between versions (a permission mode, a
// title, a queue operation), and a file is a session log when any of its
// first records is a record of the format; twenty covers every preamble
// seen in real logs, and costs a few parses per file.
const detectRecords = 20

// peekSession returns the session adapter of the JSON Lines file f, judged
// by its first records (see detectLines), or nil when it is not a session
// log (or cannot be read: reading it again reports why).
func peekSession(f file, limit int64, p *trace.Parser) SessionAdapter {
	fh, _, err := openRegular(f.open)
	if err != nil {
		return nil
	}
	defer fh.Close()
	lr := newLineReader(fh, limit, readBufferBytes)
	var buf []byte
	return detectLines(p, f.rel, func() ([]byte, int, bool) {
		for {
			data, size, err := lr.next(buf[:0])
			if err != nil || size > limit {
				return nil, 0, false
			}
			buf = data
			if len(bytes.TrimSpace(data)) > 0 {
				return data, lr.line, true
			}
		}
	})
}

// detectLines returns the session adapter that claims one of the first
// detectRecords records next yields, or nil. A record of a document format
// (a crystallization trace line) decides that the file is not a session
// log; a line that is not a JSON object, or that no format claims (a
// bookkeeping record of a type no adapter knows), leaves the question to
// the next record.
func detectLines(p *trace.Parser, file string, next func() (raw []byte, line int, ok bool)) SessionAdapter {
	for range detectRecords {
		raw, line, ok := next()
		if !ok {
			return nil
		}
		if line == 1 {
			raw = bytes.TrimPrefix(raw, utf8BOM)
		}
		v, err := p.Parse(raw, file, line)
		if err != nil {
			continue
		}
		doc, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if a := detectSession(doc); a != nil {
			return a
		}
		for _, a := range defaultAdapters {
			if a.Detect(doc) {
				return nil
			}
		}
	}
	return nil
}

// work does one job.
func work(ctx context.Context, f file, j *job, limit int64, rules *normalize.Rules, p *trace.Parser) result {
	r := result{file: j.file, seq: j.seq, last: j.last}
	switch {
	case j.whole && !f.lines:
		r.entries = decodeJSONFile(f, limit, rules, p)
	case j.whole:
		r.entries, r.read = decodeLinesFile(ctx, f, limit, rules, p)
	default:
		r.entries = decodeChunk(ctx, f, &j.chunk, limit, p)
		r.read = j.chunk.read
	}
	return r
}

// decodeJSONFile reads and decodes a *.json file: one trace, or the
// sessions of a session format's document (an OTLP/JSON export). A file it
// cannot read is an entry at line 0 with the reason.
func decodeJSONFile(f file, limit int64, rules *normalize.Rules, p *trace.Parser) []entry {
	data, err := readLimited(f.open, limit)
	if err != nil {
		return []entry{fileError(f, 0, err)}
	}
	if f.inHome && len(bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))) == 0 {
		// Agents leave empty files behind (a chat opened and never
		// written), as they leave empty logs.
		return []entry{{note: &Note{Path: f.display, Code: NoteEmpty, Message: "empty file: no record"}}}
	}
	v, err := p.Parse(bytes.TrimPrefix(data, utf8BOM), f.rel, 0)
	if doc, ok := v.(map[string]any); ok && err == nil {
		if a := detectSession(doc); a != nil {
			return decodeSessions(f, a, []Record{{Line: 0, Doc: doc, Raw: data}}, nil, rules)
		}
	}
	if f.home != nil {
		return []entry{notSessionLog(f)}
	}
	return []entry{completeTrace(f, data, 0, v, err)}
}

// decodeLinesFile reads and decodes a JSON Lines file handed to one worker
// whole (a small one, or a session log of any size), and returns its
// entries and the number of bytes read.
func decodeLinesFile(ctx context.Context, f file, limit int64, rules *normalize.Rules, p *trace.Parser) ([]entry, int64) {
	fh, _, err := openRegular(f.open)
	if err != nil {
		return []entry{fileError(f, 0, err)}, 0
	}
	defer fh.Close()
	br := readers.Get().(*bufio.Reader)
	br.Reset(fh)
	defer func() {
		br.Reset(nil)
		readers.Put(br)
	}()
	lr := &lineReader{r: br, limit: limit}
	var out []entry
	var sess *sessionFile
	var bufs [][]byte // the chunks' bytes, which the records of a session log point into
	for first := true; ; first = false {
		c := chunk{data: chunkBuffer(int(min(f.size, chunkBytes+readBufferBytes)))}
		more := lr.fill(&c)
		bufs = append(bufs, c.data)
		if first {
			if len(c.recs) == 0 && !more && c.err == nil {
				// Agents leave empty logs behind (a session
				// opened and closed): nothing to read, and no
				// error, but not passed over in silence.
				return []entry{{note: &Note{Path: f.display, Code: NoteEmpty, Message: "empty file: no record"}}}, lr.read
			}
			sess = newSessionFile(&c, f, p)
			if sess == nil && f.home != nil {
				return []entry{notSessionLog(f)}, lr.read
			}
		}
		if sess != nil {
			sess.add(&c, f, limit, p)
		} else {
			out = append(out, decodeChunk(ctx, f, &c, limit, p)...)
		}
		if ctx.Err() != nil {
			return out, lr.read
		}
		if !more {
			break
		}
	}
	if sess != nil {
		out = decodeSessions(f, sess.adapter, sess.recs, sess.errs, rules)
		out = append(out, passedLines(f, sess.invalid)...)
		slices.SortStableFunc(out, func(a, b entry) int { return cmp.Compare(a.line, b.line) })
		// Nothing decoded from a session log points into its bytes: the
		// parser copies what it keeps, and the records' hashes are taken.
		// (A trace decoded from a line by an Adapter may keep its
		// bytes, so the buffers of other files are not reused.) A large
		// log is read into many buffers; the pool keeps two, what a
		// session file of usual size takes, so that it does not hold
		// the size of the largest file read.
		for _, b := range bufs[:min(len(bufs), 2)] {
			b = b[:0]
			chunkBuffers.Put(&b)
		}
	}
	return out, lr.read
}

// Session logs are many files of about a hundred kilobytes, each read by
// one worker into buffers of its size; allocating those anew for every
// file was a sixth of the memory a load of Claude Code logs allocated,
// all of it to be cleared. readers and chunkBuffers hold them between
// files.
var (
	readers      = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferBytes) }}
	chunkBuffers sync.Pool // of *[]byte, empty
)

// chunkBuffer returns an empty buffer with room for n bytes, reused when
// one is at hand.
func chunkBuffer(n int) []byte {
	if b, ok := chunkBuffers.Get().(*[]byte); ok {
		if cap(*b) >= n {
			return *b
		}
		chunkBuffers.Put(b)
	}
	return make([]byte, 0, n)
}

// sessionFile gathers the records of a session log.
type sessionFile struct {
	adapter SessionAdapter
	shape   *trace.Shape // what the adapter reads of a record
	recs    []Record
	errs    trace.ErrorList // lines that are not JSON objects
	invalid trace.ErrorList // lines that are not JSON: passed over
}

// newSessionFile returns a sessionFile when the first records of c, the
// first chunk of f, belong to a session format (see detectLines), and nil
// otherwise.
func newSessionFile(c *chunk, f file, p *trace.Parser) *sessionFile {
	i := 0
	a := detectLines(p, f.rel, func() ([]byte, int, bool) {
		for i < len(c.recs) {
			r := c.recs[i]
			i++
			// A line over the size limit cannot be told; it is
			// reported, and the next one may tell.
			if r.size == 0 {
				return c.data[r.start:r.end], r.line, true
			}
		}
		return nil, 0, false
	})
	if a == nil {
		return nil
	}
	return &sessionFile{adapter: a, shape: recordShape(a)}
}

// add parses the records of c. A line that is not a JSON object is a
// problem at that line; the other records still go to the adapter, so
// that one pass reports every problem of the file.
func (s *sessionFile) add(c *chunk, f file, limit int64, p *trace.Parser) {
	for _, r := range c.recs {
		if r.size > limit {
			s.errs = append(s.errs, &trace.Error{File: f.rel, Line: r.line, Msg: fmt.Sprintf("line is %d bytes, over the %d-byte limit", r.size, limit)})
			continue
		}
		raw := c.data[r.start:r.end]
		doc := raw
		if r.line == 1 {
			doc = bytes.TrimPrefix(raw, utf8BOM)
		}
		v, err := p.ParseShaped(doc, f.rel, r.line, s.shape)
		if err != nil {
			// A line that is not JSON is what an agent stopped in the
			// middle of a write leaves: the session's other records
			// are read, and the line is listed as skipped.
			var list trace.ErrorList
			if errors.As(err, &list) {
				s.invalid = append(s.invalid, list...)
			} else {
				s.invalid = append(s.invalid, &trace.Error{File: f.rel, Line: r.line, Msg: err.Error()})
			}
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			s.errs = append(s.errs, &trace.Error{File: f.rel, Line: r.line, Path: "$", Msg: "expected object, got " + trace.TypeName(v)})
			continue
		}
		s.recs = append(s.recs, Record{Line: r.line, Doc: obj, Raw: raw})
	}
	if c.err != nil {
		s.errs = append(s.errs, &trace.Error{File: f.rel, Line: c.errLine, Msg: c.err.Error()})
	}
}

// decodeSessions decodes the records of a session log with adapter a and
// returns an entry for each trace and skipped session, and one for each
// line with problems (those of parsing, errs, and the adapter's), in line
// order. Errors are reported under the name the user typed.
func decodeSessions(f file, a SessionAdapter, recs []Record, errs trace.ErrorList, rules *normalize.Rules) []entry {
	traces, skipped, err := a.DecodeSessions(recs, f.rel, rules)
	if err != nil {
		var list trace.ErrorList
		if !errors.As(err, &list) {
			list = trace.ErrorList{{Msg: err.Error()}}
		}
		errs = append(errs, list...)
	}
	var out []entry
	var fileHash string // the hash of every record, taken once per file
	for _, t := range traces {
		t.Origin.Path = f.rel
		t.Source = t.Origin.String()
		if t.SourceHash == "" {
			if fileHash == "" {
				fileHash = HashRecords(recs)
			}
			t.SourceHash = fileHash
		}
		trace.Normalize(t)
		out = append(out, entry{line: t.Origin.Line, trace: t, session: true})
	}
	for i := range skipped {
		s := skipped[i]
		s.Path = f.display
		s.Format = a.Name()
		out = append(out, entry{line: s.Line, skipped: &s})
	}
	if n, ok := a.(noter); ok {
		for _, note := range n.notes(recs, f.rel) {
			note.Path = f.display
			note.Format = a.Name()
			out = append(out, entry{line: note.Line, note: &note})
		}
	}
	// One entry per line with problems, so that --skip-invalid lists
	// them as the lines of a trace file are listed.
	errs.Sort()
	for _, e := range errs {
		e.File = f.display
		if n := len(out); n > 0 && out[n-1].errs != nil && out[n-1].line == e.Line {
			out[n-1].errs = append(out[n-1].errs, e)
			continue
		}
		out = append(out, entry{line: e.Line, errs: trace.ErrorList{e}})
	}
	slices.SortStableFunc(out, func(a, b entry) int { return cmp.Compare(a.line, b.line) })
	return out
}

// passedLines returns an entry for each line of f in list, the problems
// of lines that were passed over.
func passedLines(f file, list trace.ErrorList) []entry {
	var out []entry
	for _, e := range list {
		e.File = f.display
		if n := len(out); n > 0 && out[n-1].line == e.Line {
			out[n-1].passed = append(out[n-1].passed, e)
			continue
		}
		out = append(out, entry{line: e.Line, passed: trace.ErrorList{e}})
	}
	return out
}

// decodeChunk decodes the records of a chunk of f, in order. It stops
// early, with an incomplete result, when ctx is cancelled; decodeAll then
// discards everything.
func decodeChunk(ctx context.Context, f file, c *chunk, limit int64, p *trace.Parser) []entry {
	out := make([]entry, 0, len(c.recs)+1)
	for _, r := range c.recs {
		if ctx.Err() != nil {
			return out
		}
		if r.size > limit {
			out = append(out, fileError(f, r.line, fmt.Errorf("line is %d bytes, over the %d-byte limit", r.size, limit)))
			continue
		}
		rec := c.data[r.start:r.end]
		// Only the first line can carry a byte order mark, and it is
		// not part of the record.
		doc := rec
		if r.line == 1 {
			doc = bytes.TrimPrefix(rec, utf8BOM)
		}
		out = append(out, decodeOne(f, rec, doc, r.line, p))
	}
	if c.err != nil {
		out = append(out, fileError(f, c.errLine, c.err))
	}
	return out
}

// fileError is the entry for a file or line that could not be read.
func fileError(f file, line int, err error) entry {
	return entry{line: line, errs: trace.ErrorList{{File: f.display, Line: line, Msg: err.Error()}}}
}

// decodeOne decodes one document and completes the trace; hashed is the
// bytes the source hash covers.
func decodeOne(f file, hashed, doc []byte, line int, p *trace.Parser) entry {
	// Decode under the relative path, so an id derived from the file name
	// does not depend on how the directory was named on the command line,
	// then report errors under the name the user typed.
	v, err := p.Parse(doc, f.rel, line)
	return completeTrace(f, hashed, line, v, err)
}

// decodeBack decodes a document read back by location: one the first pass
// of a scan accepted, whose source hash the caller compares again. It
// reads it with Parser.DecodeDirect, which builds the typed trace without
// a generic map of the document and which either gives the trace
// decodeOne would or declines; a declined document goes through
// decodeOne, which gives the trace or the error. A second pass decodes
// every example it reads back, so this halves what that costs per trace.
func decodeBack(f file, hashed, doc []byte, line int, p *trace.Parser) entry {
	if tr, ok := p.DecodeDirect(doc, f.rel, line); ok {
		return finishTrace(f, hashed, line, tr)
	}
	return decodeOne(f, hashed, doc, line, p)
}

// completeTrace decodes the parsed document v (or reports parseErr) and
// completes the trace; hashed is the bytes the source hash covers.
func completeTrace(f file, hashed []byte, line int, v any, parseErr error) entry {
	err := parseErr
	var tr *trace.Trace
	if err == nil {
		tr, err = decodeValue(v, hashed, f.rel, line)
	}
	if err != nil {
		var list trace.ErrorList
		if !errors.As(err, &list) {
			list = trace.ErrorList{{File: f.display, Line: line, Msg: err.Error()}}
		}
		for _, e := range list {
			e.File = f.display
		}
		return entry{line: line, errs: list}
	}
	return finishTrace(f, hashed, line, tr)
}

// finishTrace sets where the decoded trace tr came from and normalizes it.
func finishTrace(f file, hashed []byte, line int, tr *trace.Trace) entry {
	tr.Origin = trace.Origin{Path: f.rel, Line: line}
	tr.Source = tr.Origin.String()
	tr.SourceHash = trace.HashBytes(hashed)
	trace.Normalize(tr)
	return entry{line: line, trace: tr}
}

// openRegular opens the file at path for reading and checks that it is a
// regular file. The errors are messages for the user about the file.
func openRegular(path string) (*os.File, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("reading file: %s", unwrapPathError(err))
	}
	info, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, fmt.Errorf("reading file: %s", unwrapPathError(err))
	}
	if !info.Mode().IsRegular() {
		fh.Close()
		return nil, 0, errors.New("not a regular file")
	}
	return fh, info.Size(), nil
}

// readLimited reads the file at path if it is at most limit bytes. The
// size is checked before reading, so an oversized file costs no memory,
// and the read itself is bounded in case the file grows meanwhile.
func readLimited(path string, limit int64) ([]byte, error) {
	data, err := readLimitedInto(nil, path, limit)
	if err != nil {
		return nil, err
	}
	return data, nil
}
