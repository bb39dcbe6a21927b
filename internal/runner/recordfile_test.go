package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// TestRecordReplacesLink: a run's record files are replaced, not written
// through. A link planted where trace.json or session.md goes (a state
// directory shared, or restored from an archive) must not make the run
// write its record over the file the link names; and no temporary file
// is left beside the records.
func TestRecordReplacesLink(t *testing.T) {
	o := opts(t, nil)
	outside := filepath.Join(t.TempDir(), "precious.txt")
	if err := os.WriteFile(outside, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(o.StateDir, "runs", o.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{runstate.TraceFile, runstate.SessionFile} {
		if err := os.Symlink(outside, filepath.Join(dir, name)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	w := workflow(t, "def wf(ctx):\n    ctx.log(\"hello\")\n")
	if _, err := Run(context.Background(), w, nil, o); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(outside); err != nil || string(data) != "mine\n" {
		t.Errorf("the file a planted link names = %q, %v; want it untouched", data, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			t.Errorf("%s is a %v, want a regular file", e.Name(), e.Type())
		}
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("the run directory holds %s", e.Name())
		}
	}
}
