package bundle

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// TestWriteRefusesFileTarget checks that Write refuses a target that is a
// file, not a directory, as not a bundle, and leaves the file as it was:
// a bundle never replaces what is not one.
func TestWriteRefusesFileTarget(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	target := filepath.Join(t.TempDir(), "notes.txt")
	mustWrite(t, target, []byte("keep me\n"))
	if _, err := Write(context.Background(), target, sc.input(t), sc.opts); !errors.Is(err, ErrNotBundle) {
		t.Errorf("Write over a file = %v, want %v", err, ErrNotBundle)
	}
	if got := string(mustRead(t, target)); got != "keep me\n" {
		t.Errorf("the file Write refused now holds %q", got)
	}
}

// TestWriteCancelled checks that a Write whose context is cancelled
// writes nothing: no bundle, and no temporary directory beside where it
// would have been.
func TestWriteCancelled(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Write(ctx, filepath.Join(parent, "bundle"), sc.input(t), sc.opts); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context = %v, want %v", err, context.Canceled)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("a cancelled Write left %v", ents)
	}
}

// TestWriteTraceCannotBeEncoded checks that a trace that cannot be
// encoded as a fixture (a metadata value JSON has no number for) fails
// Write, naming the trace, and leaves nothing behind: a bundle without
// that fixture would vouch for evidence it does not hold.
func TestWriteTraceCannotBeEncoded(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	in := sc.input(t)
	h[0].Metadata = map[string]any{"duration": math.Inf(1)}
	parent := t.TempDir()
	_, err := Write(context.Background(), filepath.Join(parent, "bundle"), in, sc.opts)
	if err == nil || !strings.Contains(err.Error(), "redacting trace "+h[0].ID) {
		t.Errorf("Write with an unencodable trace = %v, want an error naming %s", err, h[0].ID)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("a failed Write left %v", ents)
	}
}

// TestWriteRefusesEmptyDir checks that Write and Stage refuse an empty
// directory name rather than write into the working directory, and write
// nothing there.
func TestWriteRefusesEmptyDir(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	in := sc.input(t)
	// Should the refusal break, what is written lands here, not in the
	// package directory.
	cwd := t.TempDir()
	t.Chdir(cwd)
	if _, err := Write(context.Background(), "", in, sc.opts); err == nil || !strings.Contains(err.Error(), "empty directory name") {
		t.Errorf("Write(\"\") = %v, want empty directory name", err)
	}
	batch := atomicfile.NewBatch(0o644)
	if _, err := Stage(batch, "", in, sc.opts); err == nil || !strings.Contains(err.Error(), "empty directory name") {
		t.Errorf("Stage(\"\") = %v, want empty directory name", err)
	}
	batch.Discard()
	if ents, _ := os.ReadDir(cwd); len(ents) != 0 {
		t.Errorf("a refused write left %d entries in the working directory", len(ents))
	}
}
