package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalPackPathCollision checks that an eval pack named like another
// output is refused before anything is written, rather than silently
// replacing the workflow.
func TestEvalPackPathCollision(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "w.star")
	e, _, stderr := e2eEnv()
	code := run(context.Background(), e, []string{"mine", "--from", "../../examples/traces",
		"--out", wf, "--bundle", filepath.Join(dir, "bundle"), "--eval-pack", wf})
	if code == 0 {
		t.Fatalf("mine with --eval-pack naming --out succeeded")
	}
	if !strings.Contains(stderr.String(), "written twice") {
		t.Errorf("stderr = %q, want the path written twice named", stderr)
	}
	for _, p := range []string{wf, filepath.Join(dir, "bundle")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}
