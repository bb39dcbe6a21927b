package mine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestMineChecks checks the preconditions mining derives from what the
// traces show: a branch the step created did not exist, the program of a
// command was on PATH, parameters are bound, an earlier result a step
// binds to has its recorded shape, and a file an edit tool changed
// existed.
func TestMineChecks(t *testing.T) {
	traces := bumpTraces(func(i int, actions []trace.Action) {
		edit := act(fmt.Sprintf("t%d-e", i), trace.KindFileMutation, "file.edit", `{"path":"CHANGELOG.md"}`)
		edit.Metadata = map[string]any{"agent_tool": "Edit"}
		actions[4] = edit
	})
	sel := mustMine(t, traces, Options{}).Selected()
	if sel == nil || len(sel.Steps) != 5 {
		t.Fatalf("selected %+v, want a 5-step candidate", sel)
	}
	want := [][]candidate.Check{
		{
			{Kind: "capability", Capability: "exec:git", Tool: "git checkout"},
			{Kind: "inputs_bound", Inputs: []string{"b"}},
			{Kind: "program_on_path", Program: "git", Tool: "git checkout"},
			{Kind: "branch_absent", From: "b"},
		},
		{
			{Kind: "capability", Capability: "exec:go", Tool: "go get"},
			{Kind: "inputs_bound", Inputs: []string{"version"}},
			{Kind: "program_on_path", Program: "go", Tool: "go get"},
		},
		{
			{Kind: "capability", Capability: "exec:git", Tool: "git commit"},
			{Kind: "inputs_bound", Inputs: []string{"m"}},
			{Kind: "program_on_path", Program: "git", Tool: "git commit"},
		},
		{
			{Kind: "capability", Capability: "exec:git", Tool: "git push"},
			{Kind: "program_on_path", Program: "git", Tool: "git push"},
			{Kind: "output_shape", Step: 1, Shape: map[string]string{"branch": "string"}},
		},
		{
			{Kind: "file_exists", From: "path"},
		},
	}
	for i, st := range sel.Steps {
		if diff := cmp.Diff(want[i], st.Checks); diff != "" {
			t.Errorf("step %d %s checks (-want +got):\n%s", st.Index, st.Name, diff)
		}
	}
	if got := strings.Join(sel.Steps[0].Preconditions, "; "); !strings.Contains(got, `the git branch named by argument "b" does not exist yet`) {
		t.Errorf("step 1 preconditions do not say the branch check: %s", got)
	}
}

// TestMineFileExistsChecks: an edit that replaced text needed the file,
// so its step checks the file exists; a write may create it, even when
// the agent's edit tool made it (Claude Code's Edit of an empty
// old_string).
func TestMineFileExistsChecks(t *testing.T) {
	for _, tt := range []struct {
		name, tool, params string
		exists             bool
	}{
		{"fs.edit", "Edit", `{"path":"CHANGELOG.md","old":"a","new":"b"}`, true},
		{"fs.edit", "apply_patch", `{"path":"CHANGELOG.md","edits":[{"old":"a","new":"b"}]}`, true},
		{"file.edit", "MultiEdit", `{"path":"CHANGELOG.md"}`, true},
		{"fs.write", "Edit", `{"path":"CHANGELOG.md","content":"b"}`, false},
		{"fs.write", "Write", `{"path":"CHANGELOG.md","content":"b"}`, false},
	} {
		traces := bumpTraces(func(i int, actions []trace.Action) {
			edit := act(fmt.Sprintf("t%d-e", i), trace.KindFileMutation, tt.name, tt.params)
			edit.Metadata = map[string]any{"agent_tool": tt.tool}
			actions[4] = edit
		})
		sel := mustMine(t, traces, Options{}).Selected()
		if sel == nil || len(sel.Steps) != 5 {
			t.Fatalf("%s by %s: selected %+v, want a 5-step candidate", tt.name, tt.tool, sel)
		}
		got := slices.ContainsFunc(sel.Steps[4].Checks, func(c candidate.Check) bool { return c.Kind == "file_exists" && c.From == "path" })
		if got != tt.exists {
			t.Errorf("%s by %s: file_exists check %v, want %v (checks %+v)", tt.name, tt.tool, got, tt.exists, sel.Steps[4].Checks)
		}
	}
}

// TestMineCountsFallbacks checks that mining runs whose step needed the
// fallback counts them on the step and warns.
func TestMineCountsFallbacks(t *testing.T) {
	traces := bumpTraces(func(i int, actions []trace.Action) {
		if i > 0 {
			actions[1].Metadata["fallback"] = map[string]any{"policy": "agent", "step": 2}
		}
	})
	sel := mustMine(t, traces, Options{}).Selected()
	if sel == nil {
		t.Fatal("no candidate")
	}
	var counts []int
	for _, st := range sel.Steps {
		counts = append(counts, st.Fallbacks)
	}
	if diff := cmp.Diff([]int{0, 2, 0, 0, 0}, counts); diff != "" {
		t.Errorf("fallbacks per step (-want +got):\n%s", diff)
	}
	found := false
	for _, w := range sel.Warnings {
		if w.Code == candidate.CodeFallbackNeeded && w.Step == 2 && strings.Contains(w.Message, "2 of 3 examples") {
			found = true
		}
	}
	if !found {
		t.Errorf("no fallback_needed warning for step 2: %+v", sel.Warnings)
	}
}
