package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveStarlark: the saved workflow is the lowered plan, named by the
// plan and its source's hash, so the same plan saves to the same file
// and other parameters to another.
func TestSaveStarlark(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "all_kinds.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data, "all_kinds.json")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	path, err := SaveStarlark(p, nil, state, "all_kinds")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != filepath.Join(state, "plans") || !strings.HasPrefix(filepath.Base(path), "all_kinds-") || filepath.Ext(path) != ".star" {
		t.Errorf("saved as %s", path)
	}
	want, _ := Starlark(p, nil)
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
		t.Errorf("saved workflow differs from Starlark(p): %v", err)
	}
	again, err := SaveStarlark(p, nil, state, "all_kinds")
	if err != nil || again != path {
		t.Errorf("saving again = %s, %v; want %s", again, err, path)
	}
}

// TestWorkflowName: a plan runs under its file's base name without the
// extension, whatever directory it is in.
func TestWorkflowName(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"plan.json", "plan"},
		{filepath.Join("plans", "deploy.json"), "deploy"},
		{"release.v2.json", "release.v2"},
		{"noext", "noext"},
	} {
		if got := WorkflowName(tc.file); got != tc.want {
			t.Errorf("WorkflowName(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
}
