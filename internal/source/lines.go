package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// A JSON Lines file is read as a stream, one line at a time, so that its
// size is not limited by memory: only a line (at most the size limit) and
// the records waiting to be decoded are held. The reader cuts the stream
// into chunks of records, which is what the workers of a load decode in
// parallel; chunks are numbered in file order, so the records come back in
// line order whatever worker decoded them.

const (
	// chunkBytes is the size of the records of one chunk, after which the
	// reader starts another: large enough that handing a chunk to a
	// worker costs nothing next to decoding it (a few milliseconds of
	// work), small enough that a file of a few megabytes is already
	// spread over the workers. It is also the size up to which a JSON
	// Lines file is read whole by one worker instead of streamed by the
	// feeder (see decodeAll).
	chunkBytes = 256 << 10
	// chunkRecords bounds the records of one chunk: each record costs a
	// trace and its bookkeeping beyond its bytes, so a chunk of many tiny
	// records would be far more work than chunkBytes suggests.
	chunkRecords = 4096
	// readBufferBytes is the buffer of the line reader: lines up to this
	// size are copied once, longer ones in pieces.
	readBufferBytes = 64 << 10
)

// chunk is a run of records of one JSON Lines file.
type chunk struct {
	data    []byte       // the records' bytes, back to back
	recs    []lineRecord // in line order
	read    int64        // bytes of the file the chunk covers, line endings included
	err     error        // a read error after the records, or nil
	errLine int          // the line the read error happened on
}

// lineRecord is one non-blank line of a chunk.
type lineRecord struct {
	line       int   // 1-based
	start, end int   // the line's bytes in chunk.data, without its line ending
	size       int64 // for a line over the limit: its size; it has no bytes
}

// lineReader reads the lines of a JSON Lines stream. Lines end at "\n" or
// at the end of the stream, and a "\r" ending a line is dropped with the
// "\n", so that a record's hash does not depend on the platform's line
// endings. This is bytes.Split at "\n" followed by bytes.TrimSuffix of
// "\r", done on a stream (FuzzLineReader checks that).
type lineReader struct {
	r     *bufio.Reader
	limit int64 // the largest line kept
	line  int   // lines read so far
	read  int64 // bytes read so far
}

func newLineReader(r io.Reader, limit int64, bufSize int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, bufSize), limit: limit}
}

// fill reads records into c until c holds chunkBytes of record bytes or
// chunkRecords records, or the stream ends. Blank lines (white space
// only) are skipped. It reports whether more lines may follow; a read
// error ends the stream and is recorded in c.
func (lr *lineReader) fill(c *chunk) (more bool) {
	before := lr.read
	defer func() { c.read += lr.read - before }()
	for len(c.data) < chunkBytes && len(c.recs) < chunkRecords {
		start := len(c.data)
		data, size, err := lr.next(c.data)
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			c.err = fmt.Errorf("reading file: %s", unwrapPathError(err))
			c.errLine = lr.line + 1
			return false
		}
		c.data = data
		switch {
		case size > lr.limit:
			c.recs = append(c.recs, lineRecord{line: lr.line, start: start, end: start, size: size})
		case len(bytes.TrimSpace(data[start:])) == 0:
			c.data = data[:start]
		default:
			c.recs = append(c.recs, lineRecord{line: lr.line, start: start, end: len(data)})
		}
	}
	return true
}

// next reads the next line and appends its bytes, without the line
// ending, to buf. size is the line's size without its ending. A line
// larger than the limit is read through but not kept: buf comes back as
// it was, and size says how large the line was. At the end of the stream
// next returns io.EOF; a last line without "\n" is returned first.
func (lr *lineReader) next(buf []byte) (_ []byte, size int64, err error) {
	start := len(buf)
	var n int64      // bytes of the line, line ending included
	var tail [2]byte // the line's last two bytes
	over := false    // the line is over the limit and being skipped
	for {
		frag, err := lr.r.ReadSlice('\n')
		n += int64(len(frag))
		lr.read += int64(len(frag))
		switch len(frag) {
		case 0:
		case 1:
			tail = [2]byte{tail[1], frag[0]}
		default:
			tail = [2]byte{frag[len(frag)-2], frag[len(frag)-1]}
		}
		// A line ending is at most two bytes, so a line of more than
		// limit+2 bytes is over the limit whatever ends it: stop
		// keeping it, so that it costs no memory. (n-2, not limit+2,
		// which could overflow.)
		if !over && n-2 > lr.limit {
			over = true
			buf = buf[:start]
		}
		if !over {
			buf = append(buf, frag...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if n == 0 {
				return buf, 0, io.EOF
			}
		case err != nil:
			return buf[:start], 0, err
		}
		lr.line++
		size = n
		if size > 0 && tail[1] == '\n' {
			size--
			tail[1] = tail[0]
		}
		if size > 0 && tail[1] == '\r' {
			size--
		}
		if over || size > lr.limit {
			return buf[:start], size, nil
		}
		return buf[:start+int(size)], size, nil
	}
}
