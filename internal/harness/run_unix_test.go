//go:build unix

package harness

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCaseOutputFileRegularOnly: a case whose output file is a FIFO
// fails with an error instead of hanging the run.
func TestCaseOutputFileRegularOnly(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "out.fifo"), 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := gather(context.Background(), dir, CaseInput{OutputFile: "out.fifo"}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("gather(FIFO) = %v, want not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("gather hangs on a FIFO")
	}
}
