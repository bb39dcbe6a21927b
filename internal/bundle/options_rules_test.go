package bundle

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteMinConfidenceErrorNamesOption checks that the refusal of a
// confidence threshold out of range names the option and the value, so
// the caller knows what to change.
func TestWriteMinConfidenceErrorNamesOption(t *testing.T) {
	s, h := releaseTraces(t, nil)
	o := opts()
	o.MinConfidence = -0.25
	in := scenario{sources: s, heldout: h, build: releaseCandidate, opts: o}.input(t)
	_, err := Write(context.Background(), filepath.Join(t.TempDir(), "bundle"), in, o)
	if want := "bundle options: MinConfidence must be between 0 and 1, got -0.25"; err == nil || !strings.HasSuffix(err.Error(), ": "+want) {
		t.Errorf("Write with MinConfidence -0.25 = %v, want %q", err, want)
	}
}
