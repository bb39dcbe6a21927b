//go:build unix

package source

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadReleaseHarnessSymlinks: the fixture files are read with mine's
// policy: a symlink is followed only to a regular file inside the
// directory; a symlink to /dev/zero or out of it, and a FIFO, are refused
// without being opened.
func TestLoadReleaseHarnessSymlinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "events.jsonl")
	os.WriteFile(outside, []byte(readFile(t, filepath.Join(miniHarness, "agent-events.jsonl"))), 0o644)
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"link to /dev/zero", func(t *testing.T, dir string) {
			link(t, "/dev/zero", filepath.Join(dir, "agent-events.jsonl"))
		}, "symlink target /dev/zero is outside"},
		{"link out of the directory", func(t *testing.T, dir string) {
			link(t, outside, filepath.Join(dir, "agent-events.jsonl"))
		}, "is outside"},
		{"FIFO", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "agent-events.jsonl")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "agent-events.jsonl: not a regular file"},
		{"link to a FIFO inside", func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
			link(t, filepath.Join(dir, "pipe"), filepath.Join(dir, "agent-events.jsonl"))
		}, "symlink to something that is not a regular file"},
		{"manifest linked to /dev/zero", func(t *testing.T, dir string) {
			link(t, "/dev/zero", filepath.Join(dir, "manifest.json"))
		}, "is outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyHarness(t, miniHarness, nil)
			tt.setup(t, dir)
			done := make(chan error, 1)
			go func() { _, _, err := LoadReleaseHarness(dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("LoadReleaseHarness = %v, want %q", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("LoadReleaseHarness blocked")
			}
		})
	}
	// A symlink to a regular file inside the directory is read.
	dir := copyHarness(t, miniHarness, nil)
	os.Rename(filepath.Join(dir, "agent-events.jsonl"), filepath.Join(dir, "real.jsonl"))
	link(t, "real.jsonl", filepath.Join(dir, "agent-events.jsonl"))
	if _, _, err := LoadReleaseHarness(dir); err != nil {
		t.Errorf("a symlink inside the directory: %v", err)
	}
}

func link(t *testing.T, target, p string) {
	t.Helper()
	os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		t.Skip("no symlinks here:", err)
	}
}
