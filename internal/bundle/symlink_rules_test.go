package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// linkOutside moves the bundle path p of dir outside the bundle and puts
// a symlink to it in its place: the same bytes, read through a link.
func linkOutside(t *testing.T, dir, p string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(p))
	outside := filepath.Join(t.TempDir(), filepath.Base(full))
	if err := os.Rename(full, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, full); err != nil {
		t.Skip("no symlinks here:", err)
	}
}

// TestChangesRefuseSymlinks checks that approving, replacing the workflow
// and replaying the fixtures each refuse to read a bundle file through a
// symlink, a link to the file itself or to a directory on its path, even
// when the bytes it reaches are the recorded ones: a link can be changed
// after the check to point at other bytes.
func TestChangesRefuseSymlinks(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	t.Run("workflow", func(t *testing.T) {
		dir, _ := sc.write(t)
		old := mustRead(t, filepath.Join(dir, WorkflowFile))
		linkOutside(t, dir, WorkflowFile)
		if _, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T09:00:00Z"}); err == nil || !strings.Contains(err.Error(), "is a symlink") {
			t.Errorf("Approve of a symlinked workflow = %v, want is a symlink", err)
		}
		if _, err := ReplaceWorkflow(dir, append(old, "# x\n"...), evidence(1)); err == nil || !strings.Contains(err.Error(), "is a symlink") {
			t.Errorf("ReplaceWorkflow of a symlinked workflow = %v, want is a symlink", err)
		}
	})
	t.Run("fixture", func(t *testing.T) {
		dir, m := sc.write(t)
		linkOutside(t, dir, m.Fixtures[0].Path)
		if _, err := ReplayShadow(dir); err == nil || !strings.Contains(err.Error(), "is a symlink") {
			t.Errorf("ReplayShadow with a symlinked fixture = %v, want is a symlink", err)
		}
	})
	t.Run("fixtures directory", func(t *testing.T) {
		dir, _ := sc.write(t)
		linkOutside(t, dir, "fixtures")
		if _, err := ReplayShadow(dir); err == nil || !strings.Contains(err.Error(), "is a symlink") {
			t.Errorf("ReplayShadow with a symlinked fixtures directory = %v, want is a symlink", err)
		}
	})
}
