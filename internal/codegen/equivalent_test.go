package codegen

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// goodRefinement renames both parameters and rewrites the comments.
var goodRefinement = strings.NewReplacer(
	"def build_and_publish(ctx, arg2, arg3):", "def build_and_publish(ctx, package_dir, branch):",
	"arg2 = arg2)", "arg2 = package_dir)",
	"arg3 = arg3)", "arg3 = branch)",
	`"""Runs go, go, then git."""`, `"""Builds and vets the package, then pushes the branch."""`,
	"    # step 1 · tool_call go\n", "    # Build the package that changed.\n",
	"    # step 3 · tool_call git\n", "",
)

func TestEquivalent(t *testing.T) {
	data, err := os.ReadFile("testdata/refine/draft.star")
	if err != nil {
		t.Fatal(err)
	}
	refineDraft := string(data)
	if err := Check("draft", data, "build_and_publish"); err != nil {
		t.Fatalf("Check(draft) = %v", err)
	}
	tests := []struct {
		name    string
		refined string
		renames map[string]string
		err     string
		// step and line are where the *NotEquivalentError places the
		// difference.
		step, line int
	}{
		{name: "unchanged", refined: refineDraft, renames: map[string]string{}},
		{name: "renamed and commented", refined: goodRefinement.Replace(refineDraft), renames: map[string]string{"arg2": "package_dir", "arg3": "branch"}},
		{
			name:    "parentheses and layout do not matter",
			refined: strings.Replace(refineDraft, `ctx.tool("go", arg1 = "vet", arg2 = "./...")`, "ctx.tool(\n        \"go\",\n        arg1 = (\"vet\"),\n        arg2 = './...',\n    )", 1),
			renames: map[string]string{},
		},
		{
			name:    "no docstring",
			refined: strings.Replace(refineDraft, `    """Runs go, go, then git."""`+"\n", "", 1),
			renames: map[string]string{},
		},
		{
			name:    "another tool",
			refined: strings.Replace(refineDraft, `ctx.tool("git"`, `ctx.tool("gh"`, 1),
			err:     `step 3: the draft calls ctx.tool("git"), the refinement ctx.tool("gh")`,
			step:    3, line: 13,
		},
		{
			name:    "a model call instead of a tool",
			refined: strings.Replace(refineDraft, `ctx.tool("go", arg1 = "vet", arg2 = "./...")`, `ctx.model("go", inputs = {"arg1": "vet", "arg2": "./..."})`, 1),
			err:     `step 2: the draft calls ctx.tool("go"), the refinement ctx.model("go")`,
			step:    2, line: 11,
		},
		{
			name:    "a step dropped",
			refined: strings.Replace(refineDraft, `    ctx.tool("go", arg1 = "vet", arg2 = "./...")`+"\n", "", 1),
			err:     `step 2: the draft calls ctx.tool("go"), the refinement ctx.tool("git")`,
			step:    2, line: 12,
		},
		{
			name:    "the last step dropped",
			refined: strings.Replace(refineDraft, `    ctx.tool("git", arg1 = "push", arg2 = "origin", arg3 = arg3)`+"\n", "", 1),
			err:     `step 3 ctx.tool("git") is gone: the draft has 3 steps, the refinement 2`,
			step:    3, line: 0,
		},
		{
			name:    "a step added",
			refined: strings.Replace(refineDraft, `    return`, `    ctx.approve("push", prompt = "Push?")`+"\n    return", 1),
			err:     `the refinement adds step 4 ctx.approve("push"): the draft has 3 steps, the refinement 4`,
			step:    4, line: 14,
		},
		{
			name:    "a literal changed",
			refined: strings.Replace(refineDraft, `"origin"`, `"upstream"`, 1),
			err:     "step 3 ctx.tool(\"git\"): its arguments changed from `ctx.tool(\"git\", arg1 = \"push\", arg2 = \"origin\", arg3 = arg3)` to `ctx.tool(\"git\", arg1 = \"push\", arg2 = \"upstream\", arg3 = arg3)`",
			step:    3, line: 13,
		},
		{
			name:    "an argument name changed",
			refined: strings.Replace(refineDraft, `arg1 = "vet"`, `command = "vet"`, 1),
			err:     `step 2 ctx.tool("go"): its arguments changed`,
			step:    2, line: 11,
		},
		{
			name:    "parameters swapped at their uses",
			refined: strings.NewReplacer("arg2 = arg2)", "arg2 = arg3)", "arg3 = arg3)", "arg3 = arg2)").Replace(refineDraft),
			err:     "step 1 ctx.tool(\"go\"): its arguments changed from `ctx.tool(\"go\", arg1 = \"build\", arg2 = arg2)` to `ctx.tool(\"go\", arg1 = \"build\", arg2 = arg3)`",
			step:    1, line: 9,
		},
		{
			name:    "parameters reordered",
			refined: strings.Replace(refineDraft, "(ctx, arg2, arg3)", "(ctx, arg3, arg2)", 1),
			err:     "parameter 2 arg2 is renamed arg3, the name of the draft's parameter 3: parameters keep their places",
		},
		{
			name:    "a default added",
			refined: strings.Replace(refineDraft, "(ctx, arg2, arg3)", "(ctx, arg2, arg3 = None)", 1),
			err:     "parameter 3 changed from `arg3` to `arg3 = None`: a renamed parameter keeps its default",
		},
		{
			name:    "a parameter added",
			refined: strings.Replace(refineDraft, "(ctx, arg2, arg3)", "(ctx, arg2, arg3, extra = None)", 1),
			err:     "the parameters changed from (`ctx`, `arg2`, `arg3`) to (`ctx`, `arg2`, `arg3`, `extra = None`)",
		},
		{
			name:    "the return changed",
			refined: strings.Replace(refineDraft, `{"status": "ok"}`, `{"status": "done"}`, 1),
			err:     "the code changed from `return {\"status\": \"ok\"}` (draft line 14) to `return {\"status\": \"done\"}` (refinement line 14)",
			step:    0, line: 14,
		},
		{
			name:    "a statement added",
			refined: strings.Replace(refineDraft, "    # step 1", "    note = \"x\"\n    # step 1", 1),
			err:     "the code changed from `ctx.tool(\"go\", arg1 = \"build\", arg2 = arg2)` (draft line 9) to `note = \"x\"` (refinement line 8)",
			step:    0, line: 8,
		},
		{
			name:    "renamed in the signature only",
			refined: strings.Replace(refineDraft, "(ctx, arg2, arg3)", "(ctx, package_dir, arg3)", 1),
			err:     "the workflow check fails: refined workflow:9:43: undefined: arg2",
		},
		{
			name:    "the function renamed",
			refined: strings.Replace(refineDraft, "def build_and_publish(", "def build(", 1),
			err:     "the workflow check fails: refined workflow:6:5: function build, want build_and_publish",
		},
		{
			name:    "not Starlark",
			refined: "Here is the refined workflow:\n" + refineDraft,
			err:     "the workflow check fails: refined workflow:1:8: got is, want newline",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			renames, err := Equivalent([]byte(refineDraft), []byte(tt.refined), "build_and_publish")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Equivalent = %v, want an error containing %q", err, tt.err)
				}
				var ne *NotEquivalentError
				if !errors.As(err, &ne) {
					t.Fatalf("Equivalent = %T, want *NotEquivalentError", err)
				}
				if ne.Step != tt.step || ne.Line != tt.line {
					t.Errorf("Equivalent error at step %d line %d, want step %d line %d", ne.Step, ne.Line, tt.step, tt.line)
				}
				return
			}
			if err != nil {
				t.Fatalf("Equivalent = %v, want nil", err)
			}
			if diff := cmp.Diff(tt.renames, renames); diff != "" {
				t.Errorf("Equivalent renames (-want +got):\n%s", diff)
			}
		})
	}
}
