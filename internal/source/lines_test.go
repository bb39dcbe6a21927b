package source

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// line is a line as the reader returns it: a record's text, or the size
// of a line over the limit.
type line struct {
	N    int
	Text string
	Over int64
}

// splitLines is the specification of lineReader: what it returns for data
// read whole and split in memory.
func splitLines(data []byte, limit int64) []line {
	var out []line
	for i, l := range bytes.Split(data, []byte{'\n'}) {
		l = bytes.TrimSuffix(l, []byte{'\r'})
		switch {
		case int64(len(l)) > limit:
			out = append(out, line{N: i + 1, Over: int64(len(l))})
		case len(bytes.TrimSpace(l)) > 0:
			out = append(out, line{N: i + 1, Text: string(l)})
		}
	}
	return out
}

// readLines reads data with a lineReader of the given buffer size, in
// chunks, and checks that the chunks account for every byte.
func readLines(t *testing.T, data []byte, limit int64, bufSize int) []line {
	t.Helper()
	lr := newLineReader(bytes.NewReader(data), limit, bufSize)
	var out []line
	var read int64
	for more := true; more; {
		var c chunk
		more = lr.fill(&c)
		if c.err != nil {
			t.Fatalf("fill: %v", c.err)
		}
		read += c.read
		for _, r := range c.recs {
			if r.size > 0 {
				out = append(out, line{N: r.line, Over: r.size})
				continue
			}
			out = append(out, line{N: r.line, Text: string(c.data[r.start:r.end])})
		}
	}
	if read != int64(len(data)) {
		t.Errorf("chunks cover %d bytes, want %d", read, len(data))
	}
	return out
}

func TestLineReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int64
		want  []line
	}{
		{"empty", "", 10, nil},
		{"no final newline", "a\nb", 10, []line{{N: 1, Text: "a"}, {N: 2, Text: "b"}}},
		{"CRLF and blank lines", "a\r\n \t\r\n\nb\r\n", 10, []line{{N: 1, Text: "a"}, {N: 4, Text: "b"}}},
		{"final CR", "a\r", 10, []line{{N: 1, Text: "a"}}},
		{"lone CR inside", "a\rb\n", 10, []line{{N: 1, Text: "a\rb"}}},
		{"unicode blank", "\u00a0\u2003\n{}", 10, []line{{N: 2, Text: "{}"}}},
		{"exactly the limit", "12345\r\n", 5, []line{{N: 1, Text: "12345"}}},
		{"one over the limit", "123456\r\nok", 5, []line{{N: 1, Over: 6}, {N: 2, Text: "ok"}}},
		{"over the limit without newline", "123456", 5, []line{{N: 1, Over: 6}}},
		{"long line over the limit", strings.Repeat("x", 100) + "\r\n" + "ok\n", 5, []line{{N: 1, Over: 100}, {N: 2, Text: "ok"}}},
		{"blank line over the limit", strings.Repeat(" ", 20) + "\nok", 5, []line{{N: 1, Over: 20}, {N: 2, Text: "ok"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, splitLines([]byte(tt.in), tt.limit)); diff != "" {
				t.Fatalf("splitLines disagrees with the test (-want +got):\n%s", diff)
			}
			// The smallest buffer splits lines and CRLF pairs across
			// reads; the default one does not.
			for _, size := range []int{16, readBufferBytes} {
				if diff := cmp.Diff(tt.want, readLines(t, []byte(tt.in), tt.limit, size)); diff != "" {
					t.Errorf("buffer %d: lines (-want +got):\n%s", size, diff)
				}
			}
		})
	}
}

// TestLineReaderChunks checks that records are cut into chunks of at most
// chunkRecords records, and of chunkBytes bytes plus one line.
func TestLineReaderChunks(t *testing.T) {
	var b strings.Builder
	for i := range 3 * chunkRecords {
		fmt.Fprintf(&b, "%d\n", i)
	}
	for range 3 {
		b.WriteString(strings.Repeat("y", chunkBytes/2) + "\n")
	}
	data := []byte(b.String())
	lr := newLineReader(bytes.NewReader(data), chunkBytes, readBufferBytes)
	var sizes [][2]int
	for more := true; more; {
		var c chunk
		more = lr.fill(&c)
		sizes = append(sizes, [2]int{len(c.recs), len(c.data)})
	}
	// -1: any number of bytes.
	want := [][2]int{{chunkRecords, -1}, {chunkRecords, -1}, {chunkRecords, -1}, {2, chunkBytes}, {1, chunkBytes / 2}}
	if len(sizes) != len(want) {
		t.Fatalf("chunks (records, bytes) = %v, want %d chunks", sizes, len(want))
	}
	for i, w := range want {
		if sizes[i][0] != w[0] || w[1] >= 0 && sizes[i][1] != w[1] {
			t.Errorf("chunk %d (records, bytes) = %v, want %v", i, sizes[i], w)
		}
	}
}

// FuzzLineReader checks lineReader against splitLines for any input, limit
// and buffer size.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\r\nbb\n\n \r\nccc"), uint8(2), uint8(0))
	f.Add([]byte("\xef\xbb\xbf{}\r\n{\"a\":1}\r"), uint8(4), uint8(1))
	f.Add([]byte(strings.Repeat("x", 40)+"\r\n"+strings.Repeat("y", 17)), uint8(17), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, limit, buf uint8) {
		got := readLines(t, data, int64(limit), 16+int(buf))
		if diff := cmp.Diff(splitLines(data, int64(limit)), got); diff != "" {
			t.Errorf("lines of %q, limit %d, buffer %d (-want +got):\n%s", data, limit, 16+int(buf), diff)
		}
	})
}
