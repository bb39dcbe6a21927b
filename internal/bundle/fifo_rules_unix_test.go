//go:build unix

package bundle

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestValidateFIFONeverBlocks checks that Validate returns, reporting the
// file, when a file of the bundle is a FIFO: reading one would block
// until someone writes to it, and validation must never wait on the
// bundle's author.
func TestValidateFIFONeverBlocks(t *testing.T) {
	s, h := releaseTraces(t, nil)
	for _, name := range []string{EvalPackFile, WorkflowFile, ReportFile} {
		t.Run(name, func(t *testing.T) {
			dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			done := make(chan *Validation, 1)
			go func() { done <- Validate(dir) }()
			select {
			case v := <-done:
				if v.OK || !hasProblem(v, CodeFileMissing, name) {
					t.Errorf("Validate with %s a FIFO: want %s:\n%s", name, CodeFileMissing, describe(v))
				}
			case <-time.After(10 * time.Second):
				// Unblock the reader so the test binary can finish.
				if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
					w.Close()
				}
				t.Fatalf("Validate with %s a FIFO did not return", name)
			}
		})
	}
}
