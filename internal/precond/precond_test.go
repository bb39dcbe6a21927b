package precond

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestEval checks the kinds that look only at the workspace and the
// arguments, with secrets replaced in the reasons, and that a check
// written wrong is an error rather than a failed check.
func TestEval(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets := &toolexec.Scrubber{}
	secrets.Add("TOKEN", "s3cret")
	w := &World{
		Config: &runconfig.Config{Dir: root}, Secrets: secrets,
		Held: map[string]bool{"fs.read": true}, Holds: func(c string) bool { return c == "fs.read" },
		Rehearsed: map[string]bool{filepath.Join(root, "planned.txt"): true},
	}
	shape := map[string]any{"branch": "string"}
	for _, tc := range []struct {
		name, kind string
		args       map[string]any
		reason     string // "" when the check passes
	}{
		{"capability held", "capability", map[string]any{"capability": "fs.read"}, ""},
		{"capability not held", "capability", map[string]any{"capability": "fs.write"}, "capability fs.write is not held (the run holds fs.read)"},
		{"inputs unbound", "inputs_bound", map[string]any{"a": "", "b": "x"}, "inputs a have no value"},
		{"file exists", "file_exists", map[string]any{"path": "go.mod"}, ""},
		{"file a dry run would write", "file_exists", map[string]any{"path": "planned.txt"}, ""},
		{"file missing, secret scrubbed", "file_exists", map[string]any{"path": "s3cret.txt"}, "file [redacted:TOKEN].txt does not exist"},
		{"file outside", "file_exists", map[string]any{"path": "../x"}, "outside the workspace roots"},
		{"shape differs", "output_shape", map[string]any{"step": 2, "value": map[string]any{}, "shape": shape}, "branch is missing"},
	} {
		res, err := Eval(w, tc.kind, tc.args)
		if err != nil {
			t.Fatalf("%s: Eval: %v", tc.name, err)
		}
		if res.OK != (tc.reason == "") || !strings.Contains(res.Reason, tc.reason) {
			t.Errorf("%s: Eval = %+v, want reason %q", tc.name, res, tc.reason)
		}
	}
	if _, err := Eval(w, "no_such_kind", nil); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("Eval(unknown kind) = %v, want an error", err)
	}
	if _, err := Eval(w, "file_exists", map[string]any{"path": 3}); err == nil || !strings.Contains(err.Error(), "argument path is number") {
		t.Errorf("Eval(path 3) = %v, want an error", err)
	}
}
