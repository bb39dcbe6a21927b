package serve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestAnnotations(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name    string
		effects []trace.SideEffect
		want    *mcp.ToolAnnotations
	}{
		{"none", nil, &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &no}},
		{"additive", []trace.SideEffect{{Kind: "mcp_tool", Target: "notes/add", Mutation: "additive"}}, &mcp.ToolAnnotations{DestructiveHint: &no}},
		{"unmarked write", []trace.SideEffect{{Kind: "file_write", Target: "a.txt"}}, &mcp.ToolAnnotations{DestructiveHint: &yes}},
		{"one destructive of two", []trace.SideEffect{{Kind: "mcp_tool", Mutation: "additive"}, {Kind: "git_ref", Mutation: "destructive"}}, &mcp.ToolAnnotations{DestructiveHint: &yes}},
	} {
		if diff := cmp.Diff(tc.want, Annotations(tc.effects)); diff != "" {
			t.Errorf("%s: Annotations (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestInputSchema(t *testing.T) {
	w := &runner.Workflow{Name: "wf", Params: []string{"branch", "count", "flags", "extra", "mode"}, Required: []bool{true, true, false, true, false}}
	params := []candidate.Parameter{
		{Name: "branch", Type: "string", Examples: []any{"a", "b"}, SourcePaths: []string{"steps[0].parameters.branch"}},
		{Name: "count", Type: "number"},
		{Name: "flags", Type: "bool"},
		{Name: "mode", Type: "mixed", Examples: []any{"x", 1.0}},
	}
	want := map[string]any{
		"$schema":              SchemaDialect,
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"branch", "count", "extra"},
		"properties": map[string]any{
			"branch": map[string]any{"type": "string", "examples": []any{"a", "b"}, "description": "the value of steps[0].parameters.branch in the traces this workflow was crystallized from"},
			"count":  map[string]any{"type": "number"},
			"flags":  map[string]any{"type": "boolean"},
			// A parameter the candidate does not describe (a hand
			// edit) and a mixed one take any value.
			"extra": map[string]any{},
			"mode":  map[string]any{"examples": []any{"x", 1.0}},
		},
	}
	if diff := cmp.Diff(want, InputSchema(w, params)); diff != "" {
		t.Errorf("InputSchema (-want +got):\n%s", diff)
	}
}

func TestFingerprint(t *testing.T) {
	dir := t.TempDir()
	if fingerprint(dir) != "" {
		t.Fatal("a directory without a manifest has a fingerprint")
	}
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("candidate.json", "{}")
	write("workflow.star", "def wf(ctx):\n    pass\n")
	a := fingerprint(dir)
	write("fixtures/t1.json", "{}")
	b := fingerprint(dir)
	write("workflow.star", "def wf(ctx):\n    pass\n# edited\n")
	c := fingerprint(dir)
	if a == "" || a == b || b == c {
		t.Errorf("fingerprints %q, %q, %q: every change must change it", a, b, c)
	}
	write("workflow.star", "def wf(ctx):\n    pass\n# edited\n")
	if fingerprint(dir) != c {
		t.Error("the fingerprint changed without a change")
	}
}

func TestDocstring(t *testing.T) {
	for src, want := range map[string]string{
		"def wf(ctx):\n    \"\"\"Runs a, then b.\"\"\"\n    pass\n": "Runs a, then b.",
		"def wf(ctx):\n    pass\n":                                  "",
	} {
		if got := docstring([]byte(src)); got != want {
			t.Errorf("docstring(%q) = %q, want %q", src, got, want)
		}
	}
	if got := skillDescription([]byte("---\nname: \"x\"\ndescription: \"Does x.\"\n---\n# x\n")); got != "Does x." {
		t.Errorf("skillDescription = %q", got)
	}
}
