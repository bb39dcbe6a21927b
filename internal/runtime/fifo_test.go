//go:build unix

package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/bundle"
)

// TestLoadFIFO: a workflow or manifest that is a FIFO is refused instead
// of blocking the load, whether it is a bare file or a bundle's.
func TestLoadFIFO(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "w.star")
	withFIFO := writeBundle(t, bundle.StatusNeedsApproval, "def wf(ctx):\n    pass\n")
	manifestFIFO := t.TempDir()
	for _, p := range []string{bare, filepath.Join(withFIFO, bundle.WorkflowFile), filepath.Join(manifestFIFO, bundle.ManifestFile)} {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	for _, target := range []string{bare, withFIFO, manifestFIFO} {
		done := make(chan error, 1)
		go func() { _, err := Load(target); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s) = %v, want a refusal of the FIFO", target, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) blocked on a FIFO", target)
		}
	}
}
