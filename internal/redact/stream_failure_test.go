package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// onceFailWriter fails its first write and takes every later one.
type onceFailWriter struct {
	failed bool
	out    bytes.Buffer
}

func (w *onceFailWriter) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errDiskFull
	}
	return w.out.Write(p)
}

// TestWriterStopsAtFirstFailure: once the writer under a Writer has
// failed, the Writer writes nothing more, not even from Close, and Close
// reports that failure: a log with a hole in the middle must not be taken
// for written because the writer under it recovered.
func TestWriterStopsAtFirstFailure(t *testing.T) {
	under := &onceFailWriter{}
	w := NewWriter(under)
	big := []byte(strings.Repeat("line of output\n", streamWindow/15+100))
	if _, err := w.Write(big); !errors.Is(err, errDiskFull) {
		t.Fatalf("Write over a failing writer = %v, want %v", err, errDiskFull)
	}
	if _, err := w.Write([]byte("more\n")); !errors.Is(err, errDiskFull) {
		t.Errorf("Write after a failure = %v, want %v", err, errDiskFull)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close after a failure = %v, want %v", err, errDiskFull)
	}
	if under.out.Len() != 0 {
		t.Errorf("%d bytes written after the failure, want none", under.out.Len())
	}
}

// TestWriterCountsWholeSecrets: a held-back piece that is one secret and
// nothing else counts as one replacement, as in redactString.
func TestWriterCountsWholeSecrets(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	if _, err := w.Write([]byte(fakeGitHub)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != Redacted || w.Redacted() != 1 {
		t.Errorf("Writer wrote %q with %d replacements, want %q with 1", out.String(), w.Redacted(), Redacted)
	}
}
