package redact

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// writeStream writes s to a Writer in pieces of size step and returns
// what came out.
func writeStream(t *testing.T, s string, step int) string {
	t.Helper()
	var out bytes.Buffer
	w := NewWriter(&out)
	for i := 0; i < len(s); i += step {
		if _, err := w.Write([]byte(s[i:min(i+step, len(s))])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestWriterSecretAcrossChunks: a secret that falls across the end of a
// chunk, in a stream with and without newlines, is redacted as the whole
// text would be, whatever the size of the writes.
func TestWriterSecretAcrossChunks(t *testing.T) {
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat("MIIEowIBAAKCAQEAx7Yk3b9Qv0Zt\n", 40) + "-----END RSA PRIVATE KEY-----\n"
	tests := map[string]string{
		"no newline": strings.Repeat("x", streamChunk-10) + " " + token + " " + strings.Repeat("y", streamChunk),
		"no blank":   strings.Repeat("x", streamChunk-10) + "=" + token + "=" + strings.Repeat("y", streamChunk),
		"lines":      strings.Repeat("line of output\n", streamChunk/15) + "token " + token + "\n" + strings.Repeat("more\n", 100),
		"key block":  strings.Repeat("z", streamChunk-500) + "\n" + key + strings.Repeat("tail\n", 10),
		"nul bytes":  strings.Repeat("\x00", 3*streamWindow) + token,
	}
	for name, s := range tests {
		want, _ := redactString(s)
		if !strings.Contains(want, "redacted") {
			t.Fatalf("%s: the whole text has no secret to find; the test is wrong", name)
		}
		for _, step := range []int{1 << 20, 32 << 10, 4093} {
			got := writeStream(t, s, step)
			if strings.Contains(got, token) || strings.Contains(got, "MIIEowIBAAKCAQEAx7Yk3b9Qv0Zt\n-----END") {
				t.Errorf("%s, writes of %d: the secret is in the output", name, step)
			}
			if got != want {
				t.Errorf("%s, writes of %d: output differs from redacting the whole text (len %d, want %d)", name, step, len(got), len(want))
			}
		}
	}
}

// TestWriterHoldsAWindow: a stream of any length is redacted holding no
// more than a window.
func TestWriterHoldsAWindow(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	piece := bytes.Repeat([]byte("a"), 1<<20)
	for range 8 {
		w.Write(piece)
		if cap(w.buf) > 2*streamWindow {
			t.Fatalf("the writer holds %d bytes, more than a window of %d", cap(w.buf), streamWindow)
		}
	}
	w.Close()
	if out.Len() != 8<<20 {
		t.Errorf("wrote %d bytes, want %d", out.Len(), 8<<20)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }

var errDiskFull = errors.New("disk full")

// TestWriterCountsAndFails checks what a Writer tells its caller: how
// many secrets it replaced, as redacting the whole text counts them, and
// the error of the writer under it, from Close when the text was held
// back until then, so that a redacted log that did not reach the disk is
// never taken for written.
func TestWriterCountsAndFails(t *testing.T) {
	const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789"
	s := "first " + token + "\nthen password=Sup3rS3cret9x\n"
	_, want := redactString(s)
	var out bytes.Buffer
	w := NewWriter(&out)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := w.Redacted(); got != want || want != 2 {
		t.Errorf("Redacted() = %d, redacting the whole text counts %d; want 2", got, want)
	}
	f := NewWriter(failWriter{})
	if _, err := f.Write([]byte(s)); err != nil {
		t.Fatalf("Write of less than a window = %v, want it held back", err)
	}
	if err := f.Close(); !errors.Is(err, errDiskFull) {
		t.Errorf("Close over a failing writer = %v, want %v", err, errDiskFull)
	}
	// A write of more than a window writes through, and fails with it.
	f = NewWriter(failWriter{})
	big := []byte(strings.Repeat("line of output\n", 2*streamWindow/15))
	for i := range 2 {
		if _, err := f.Write(big); !errors.Is(err, errDiskFull) {
			t.Errorf("Write %d of %d bytes over a failing writer = %v, want %v", i+1, len(big), err, errDiskFull)
		}
	}
}
