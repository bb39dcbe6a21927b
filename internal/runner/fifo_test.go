//go:build unix

package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
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

// TestFSFIFO: fs.read and fs.write refuse a FIFO (or any file that is not
// regular) instead of blocking the run on it.
func TestFSFIFO(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	os.Mkdir(filepath.Join(root, "dir"), 0o755)
	cfg := &runconfig.Config{Dir: root, Grants: runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}}}
	for _, src := range []string{
		`ctx.tool("fs.read", path = "pipe")`,
		`ctx.tool("fs.write", path = "pipe", content = "x")`,
		`ctx.tool("fs.read", path = "dir")`,
		`ctx.tool("fs.read", path = "/dev/zero")`,
	} {
		w := workflow(t, "# capabilities: fs.read, fs.write · secrets: none\ndef wf(ctx):\n    "+src+"\n")
		c := cfg
		if strings.Contains(src, "/dev/") {
			c = &runconfig.Config{Dir: "/dev", Grants: cfg.Grants}
		}
		done := make(chan error, 1)
		go func() { _, err := Run(t.Context(), w, nil, opts(t, c)); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, toolexec.ErrNotRegular) || !strings.Contains(err.Error(), "not_regular_file") {
				t.Errorf("%s = %v, want ErrNotRegular", src, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s blocked", src)
		}
	}
}

// TestReadJournalFIFO: a journal or journal MAC that is a FIFO is refused
// instead of blocking resume.
func TestReadJournalFIFO(t *testing.T) {
	for _, name := range []string{runstate.JournalFile, journalMACFile} {
		state := t.TempDir()
		if _, err := stateKey(state, true); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(state, "runs", "r1")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, runstate.JournalFile), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		done := make(chan error, 1)
		go func() { _, err := ReadJournal(state, "r1"); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("ReadJournal with a FIFO %s succeeded", name)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadJournal blocked on a FIFO %s", name)
		}
	}
}
