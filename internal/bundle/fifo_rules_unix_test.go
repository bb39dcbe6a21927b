//go:build unix

package bundle

import (
	"os"
	"path/filepath"
	"strings"
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

// TestReadFIFOManifestNeverBlocks checks that opening a bundle whose
// candidate.json is a FIFO is refused at once, by Read and by Validate:
// the cleanup that runs first must not open it either.
func TestReadFIFOManifestNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ManifestFile)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Read(dir)
		if v := Validate(dir); v.OK || !hasProblem(v, CodeFileMissing, ManifestFile) {
			t.Errorf("Validate with candidate.json a FIFO:\n%s", describe(v))
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Read with candidate.json a FIFO = %v, want not a regular file", err)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("Read with candidate.json a FIFO did not return")
	}
}
