// Package capped bounds what is kept in memory of a program's output.
// A command may print without limit (a test suite's log, /dev/zero
// through a gate); what a caller keeps of it must not grow with it. A
// Buffer keeps the first Max bytes and counts the rest; when the caller
// needs the whole output it gives a Spill writer, which receives every
// byte (a log file, through the redactor) while memory holds only the
// head.
//
// It is a leaf package so that the runtime's command bindings and the
// harness's gates share one mechanism without either importing the
// other.
package capped

import (
	"bytes"
	"fmt"
	"io"
)

// Buffer keeps the first Max bytes written to it and counts the rest.
// Every byte also goes to Spill when it is set; the first error Spill
// returns is kept (Err) and stops spilling, but never fails a Write: the
// program writing must not see a broken pipe because a log file is full.
type Buffer struct {
	// Max is how many bytes are kept in memory; 0 keeps none.
	Max int
	// Spill, when set, receives the whole output.
	Spill io.Writer

	buf     bytes.Buffer
	dropped int64
	err     error
}

// Write implements io.Writer; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	room := b.Max - b.buf.Len()
	switch {
	case room >= len(p):
		b.buf.Write(p)
	case room > 0:
		b.buf.Write(p[:room])
		b.dropped += int64(len(p) - room)
	default:
		b.dropped += int64(len(p))
	}
	if b.Spill != nil && b.err == nil {
		n, err := b.Spill.Write(p)
		if err == nil && n < len(p) {
			err = io.ErrShortWrite
		}
		b.err = err
	}
	return len(p), nil
}

// Bytes is what was kept, without a note of what was not.
func (b *Buffer) Bytes() []byte { return b.buf.Bytes() }

// Dropped is how many bytes were written past Max.
func (b *Buffer) Dropped() int64 { return b.dropped }

// Total is how many bytes were written.
func (b *Buffer) Total() int64 { return int64(b.buf.Len()) + b.dropped }

// Err is the first error Spill returned, nil when none did.
func (b *Buffer) Err() error { return b.err }

// String is what was kept, followed by a note of how many bytes were
// not, so a reader of a cut output knows it is cut.
func (b *Buffer) String() string {
	if b.dropped > 0 {
		return b.buf.String() + fmt.Sprintf("\n[%d more bytes not kept]", b.dropped)
	}
	return b.buf.String()
}
