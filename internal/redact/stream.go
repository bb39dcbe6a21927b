package redact

import (
	"bytes"
	"io"
)

// A stream is redacted a window at a time, so that memory does not grow
// with a command's output: streamChunk is about how much is redacted at
// once, and streamWindow how much is scanned to choose where the chunk
// ends. The chunk ends at the last newline before streamChunk (else the
// last blank, else at streamChunk), and before a secret that the window
// shows crossing that point, so a secret is never cut in two: the
// window's extra bytes are more than the longest secret the scanner
// reports whole (a private key block is a few KiB).
const (
	streamChunk  = 256 << 10
	streamWindow = streamChunk + 64<<10
)

// Writer redacts text written to it as Value redacts a string and
// writes the result to the underlying writer, holding at most about
// streamWindow bytes. A secret split between two Write calls is found:
// what is held back is redacted with what follows it. Close writes what
// is held back; the output is not complete before it.
type Writer struct {
	w   io.Writer
	buf []byte
	n   int
	err error
}

// NewWriter returns a Writer that writes the redacted text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer. It returns the first error of the
// underlying writer, and then keeps returning it.
func (r *Writer) Write(p []byte) (int, error) {
	written := len(p)
	for len(p) > 0 && r.err == nil {
		room := streamWindow - len(r.buf)
		take := min(room, len(p))
		r.buf = append(r.buf, p[:take]...)
		p = p[take:]
		if len(r.buf) == streamWindow {
			r.emit(chunkEnd(r.buf))
		}
	}
	if r.err != nil {
		return 0, r.err
	}
	return written, nil
}

// Close redacts and writes what is held back. It does not close the
// underlying writer.
func (r *Writer) Close() error {
	if r.err == nil && len(r.buf) > 0 {
		r.emit(len(r.buf))
	}
	return r.err
}

// Redacted is the number of replacements made so far.
func (r *Writer) Redacted() int { return r.n }

// emit redacts and writes the first n held bytes.
func (r *Writer) emit(n int) {
	s, k := redactString(string(r.buf[:n]))
	r.n += k
	_, r.err = io.WriteString(r.w, s)
	r.buf = r.buf[:copy(r.buf, r.buf[n:])]
}

// chunkEnd is where the next chunk of the full window w ends: after its
// last newline (or blank) within streamChunk, moved back to the start
// of a secret that would straddle it.
func chunkEnd(w []byte) int {
	end := bytes.LastIndexByte(w[:streamChunk], '\n') + 1
	if end == 0 {
		end = bytes.LastIndexAny(w[:streamChunk], " \t\r") + 1
	}
	if end == 0 {
		end = streamChunk
	}
	scan(string(w), func(m match) bool {
		if m.start >= end {
			return false
		}
		if m.end > end {
			if m.start > 0 {
				end = m.start
			} else {
				end = m.end // a secret at the start is emitted whole
			}
			return false
		}
		return true
	})
	return end
}
