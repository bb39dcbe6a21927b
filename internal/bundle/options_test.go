package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCheckMinConfidence(t *testing.T) {
	for _, c := range []float64{0, 0.5, 1} {
		if err := CheckMinConfidence(c); err != nil {
			t.Errorf("CheckMinConfidence(%g) = %v, want nil", c, err)
		}
	}
	for c, want := range map[float64]string{-0.1: "must be between 0 and 1, got -0.1", 1.5: "must be between 0 and 1, got 1.5"} {
		var ce *ConfidenceError
		if err := CheckMinConfidence(c); !errors.As(err, &ce) || ce.Problem() != want {
			t.Errorf("CheckMinConfidence(%g) = %v, want %s", c, err, want)
		}
	}
}

// A threshold no confidence can be compared with is refused before
// anything is written.
func TestWriteRefusesMinConfidence(t *testing.T) {
	s, h := releaseTraces(t, nil)
	o := opts()
	o.MinConfidence = 1.5
	in := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.input(t)
	dir := filepath.Join(t.TempDir(), "bundle")
	_, err := Write(context.Background(), dir, in, o)
	var ce *ConfidenceError
	if !errors.As(err, &ce) {
		t.Fatalf("Write with MinConfidence 1.5 = %v, want a *ConfidenceError", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Write refused the options but left %s behind (%v)", dir, err)
	}
}
