package capped

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBufferKeepsHeadAndCounts(t *testing.T) {
	tests := []struct {
		max    int
		writes []string
		kept   string
		total  int64
	}{
		{max: 10, writes: []string{"abc", "def"}, kept: "abcdef", total: 6},
		{max: 4, writes: []string{"abc", "def"}, kept: "abcd", total: 6},
		{max: 3, writes: []string{"abc", "def", "g"}, kept: "abc", total: 7},
		{max: 0, writes: []string{"abc"}, kept: "", total: 3},
	}
	for _, tt := range tests {
		b := &Buffer{Max: tt.max}
		for _, w := range tt.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v, want %d, nil", w, n, err, len(w))
			}
		}
		if got := string(b.Bytes()); got != tt.kept {
			t.Errorf("max %d: Bytes() = %q, want %q", tt.max, got, tt.kept)
		}
		if b.Total() != tt.total {
			t.Errorf("max %d: Total() = %d, want %d", tt.max, b.Total(), tt.total)
		}
		if b.Dropped() > 0 && !strings.HasSuffix(b.String(), "more bytes not kept]") {
			t.Errorf("max %d: String() = %q, want a note of the bytes not kept", tt.max, b.String())
		}
	}
}

// TestBufferSpillsEverything: the spill writer gets every byte, past
// Max too.
func TestBufferSpillsEverything(t *testing.T) {
	var spill bytes.Buffer
	b := &Buffer{Max: 2, Spill: &spill}
	b.Write([]byte("hello "))
	b.Write([]byte("world"))
	if spill.String() != "hello world" {
		t.Fatalf("spilled %q, want %q", spill.String(), "hello world")
	}
	if string(b.Bytes()) != "he" {
		t.Errorf("Bytes() = %q, want %q", b.Bytes(), "he")
	}
}

type failing struct{}

func (failing) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

// TestBufferSpillErrorIsKept: a failing spill is reported by Err and
// does not fail the writer (the program is not killed by a full disk).
func TestBufferSpillErrorIsKept(t *testing.T) {
	b := &Buffer{Max: 8, Spill: failing{}}
	if n, err := b.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("Write = %d, %v, want 3, nil", n, err)
	}
	if b.Err() == nil || b.Err().Error() != "disk full" {
		t.Errorf("Err() = %v, want disk full", b.Err())
	}
}

// TestReadFileBounded: a file up to max is read whole, a larger one is
// refused with ErrTooLarge.
func TestReadFileBounded(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	os.WriteFile(name, []byte("12345"), 0o644)
	if data, err := ReadFile(name, 5); err != nil || string(data) != "12345" {
		t.Errorf("ReadFile(max 5) = %q, %v, want 12345, nil", data, err)
	}
	if _, err := ReadFile(name, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(max 4) = %v, want ErrTooLarge", err)
	}
}
