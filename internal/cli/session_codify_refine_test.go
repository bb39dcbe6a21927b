package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// refineDraft is the workflow session codify writes for two sessions that
// differ in the package built and the branch pushed (writeBuildSessions).
const refineDraft = `# build_and_publish — crystallized from 2 traces, candidate_6f4cd89432e305ce
# source: (trace build-a)
# source: (trace build-b)
# capabilities: none · secrets: none · review before promotion
# confidence: 1.00 · deterministic steps: 3 of 3 · remaining model calls per run: 0
def build_and_publish(ctx, arg2, arg3):
    """Runs go, go, then git."""
    # step 1 · tool_call go
    ctx.check("inputs_bound", arg2 = arg2)
    ctx.tool("go", arg1 = "build", arg2 = arg2)
    # step 2 · tool_call go
    ctx.tool("go", arg1 = "vet", arg2 = "./...")
    # step 3 · tool_call git
    ctx.check("inputs_bound", arg3 = arg3)
    ctx.tool("git", arg1 = "push", arg2 = "origin", arg3 = arg3)
    return {"status": "ok"}
`

// writeBuildSessions writes the two sessions refineDraft is codified from.
func writeBuildSessions(t *testing.T, dir string) []string {
	t.Helper()
	return []string{writeSession(t, dir, "a", "./cmd/a", "br-a"), writeSession(t, dir, "b", "./cmd/b", "br-b")}
}

// goodRefinement renames both parameters and rewrites the comments.
var goodRefinement = strings.NewReplacer(
	"def build_and_publish(ctx, arg2, arg3):", "def build_and_publish(ctx, package_dir, branch):",
	"arg2 = arg2)", "arg2 = package_dir)",
	"arg3 = arg3)", "arg3 = branch)",
	`"""Runs go, go, then git."""`, `"""Builds and vets the package, then pushes the branch."""`,
	"    # step 1 · tool_call go\n", "    # Build the package that changed.\n",
	"    # step 3 · tool_call git\n", "",
)

func TestCompareRefined(t *testing.T) {
	dir := t.TempDir()
	code, out := codifyCLI(t, nil, append([]string{"session", "codify", "--out", filepath.Join(dir, "wf.star")}, writeBuildSessions(t, dir)...)...)
	if code != 0 {
		t.Fatalf("codify = %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "wf.star")); string(got) != refineDraft {
		t.Fatalf("the draft changed; update refineDraft:\n%s", got)
	}
	tests := []struct {
		name    string
		refined string
		renames map[string]string
		err     string
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
		},
		{
			name:    "a model call instead of a tool",
			refined: strings.Replace(refineDraft, `ctx.tool("go", arg1 = "vet", arg2 = "./...")`, `ctx.model("go", inputs = {"arg1": "vet", "arg2": "./..."})`, 1),
			err:     `step 2: the draft calls ctx.tool("go"), the refinement ctx.model("go")`,
		},
		{
			name:    "a step dropped",
			refined: strings.Replace(refineDraft, `    ctx.tool("go", arg1 = "vet", arg2 = "./...")`+"\n", "", 1),
			err:     `step 2: the draft calls ctx.tool("go"), the refinement ctx.tool("git")`,
		},
		{
			name:    "the last step dropped",
			refined: strings.Replace(refineDraft, `    ctx.tool("git", arg1 = "push", arg2 = "origin", arg3 = arg3)`+"\n", "", 1),
			err:     `step 3 ctx.tool("git") is gone: the draft has 3 steps, the refinement 2`,
		},
		{
			name:    "a step added",
			refined: strings.Replace(refineDraft, `    return`, `    ctx.approve("push", prompt = "Push?")`+"\n    return", 1),
			err:     `the refinement adds step 4 ctx.approve("push"): the draft has 3 steps, the refinement 4`,
		},
		{
			name:    "a literal changed",
			refined: strings.Replace(refineDraft, `"origin"`, `"upstream"`, 1),
			err:     "step 3 ctx.tool(\"git\"): its arguments changed from `ctx.tool(\"git\", arg1 = \"push\", arg2 = \"origin\", arg3 = arg3)` to `ctx.tool(\"git\", arg1 = \"push\", arg2 = \"upstream\", arg3 = arg3)`",
		},
		{
			name:    "an argument name changed",
			refined: strings.Replace(refineDraft, `arg1 = "vet"`, `command = "vet"`, 1),
			err:     `step 2 ctx.tool("go"): its arguments changed`,
		},
		{
			name:    "parameters swapped at their uses",
			refined: strings.NewReplacer(`"build", arg2 = arg2)`, `"build", arg2 = arg3)`, `"origin", arg3 = arg3)`, `"origin", arg3 = arg2)`).Replace(refineDraft),
			err:     "step 1 ctx.tool(\"go\"): its arguments changed from `ctx.tool(\"go\", arg1 = \"build\", arg2 = arg2)` to `ctx.tool(\"go\", arg1 = \"build\", arg2 = arg3)`",
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
			err:     "the code changed from `return {\"status\": \"ok\"}` (draft line 16) to `return {\"status\": \"done\"}` (refinement line 16)",
		},
		{
			name:    "a statement added",
			refined: strings.Replace(refineDraft, "    # step 1", "    note = \"x\"\n    # step 1", 1),
			err:     "the code changed from `ctx.check(\"inputs_bound\", arg2 = arg2)` (draft line 9) to `note = \"x\"` (refinement line 8)",
		},
		{
			name:    "renamed in the signature only",
			refined: strings.Replace(refineDraft, "(ctx, arg2, arg3)", "(ctx, package_dir, arg3)", 1),
			err:     "the workflow check fails: refined workflow:9:38: undefined: arg2",
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
			renames, err := compareRefined([]byte(refineDraft), []byte(tt.refined), "build_and_publish")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("compareRefined = %v, want an error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("compareRefined = %v, want nil", err)
			}
			if diff := cmp.Diff(tt.renames, renames); diff != "" {
				t.Errorf("compareRefined renames (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStripFence(t *testing.T) {
	for in, want := range map[string]string{
		"def f(ctx):\n    pass":                 "def f(ctx):\n    pass\n",
		"```python\ndef f(ctx):\n    pass\n```": "def f(ctx):\n    pass\n",
		"```\ndef f(ctx):\n    pass\n```\n\n":   "def f(ctx):\n    pass\n",
	} {
		if got := stripFence(in); got != want {
			t.Errorf("stripFence(%q) = %q, want %q", in, got, want)
		}
	}
}

// codifyCLI runs the crystallize command line in-process, with
// SOURCE_DATE_EPOCH pinned and the variables of vars set, and returns
// the exit code and everything printed.
func codifyCLI(t *testing.T, vars map[string]string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return vars[k]
	}}
	return run(context.Background(), e, args), out.String()
}

// refineServer is an OpenAI-compatible server whose model answers with
// reply applied to the workflow it was sent. It fails the test on a
// request without the key or the model.
func refineServer(t *testing.T, reply func(src string) string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role, Content string
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" || len(req.Messages) != 2 {
			t.Errorf("refine request %s: %v", r.URL.Path, err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sekret" || req.Model != "fake-refiner" {
			t.Errorf("refine request: Authorization %q, model %q; want Bearer sekret, fake-refiner", got, req.Model)
		}
		prompt := req.Messages[1].Content
		_, src, ok := strings.Cut(prompt, "without a markdown code fence.\n\n")
		if !ok {
			t.Errorf("refine prompt does not end with the workflow:\n%s", prompt)
		}
		json.NewEncoder(w).Encode(map[string]any{
			"model":   "fake-refiner-2026",
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": reply(src)}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 90},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// refineProject writes the sessions and a configuration whose
// [models.refine] is srv, and returns the codify arguments.
func refineProject(t *testing.T, dir, url string) []string {
	t.Helper()
	files := writeBuildSessions(t, dir)
	cfg := filepath.Join(dir, "crystallize.toml")
	body := "[models.default]\nprovider = \"anthropic\"\nmodel = \"not-this-one\"\n\n" +
		"[models.refine]\nprovider = \"openai\"\nbase_url = \"" + url + "/v1\"\nmodel = \"fake-refiner\"\napi_key = \"REFINE_KEY\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return append([]string{"session", "codify", "--refine", "--config", cfg,
		"--out", filepath.Join(dir, "wf.star"), "--report", filepath.Join(dir, "report.json"), "--bundle", filepath.Join(dir, "bundle")}, files...)
}

func TestCodifyRefineAccepted(t *testing.T) {
	srv, calls := refineServer(t, func(src string) string {
		return "```python\n" + goodRefinement.Replace(src) + "```\n"
	})
	dir := t.TempDir()
	code, out := codifyCLI(t, map[string]string{"REFINE_KEY": "sekret"}, refineProject(t, dir, srv.URL)...)
	if code != 0 || calls.Load() != 1 {
		t.Fatalf("codify --refine = %d after %d model calls, want 0 after 1\n%s", code, calls.Load(), out)
	}
	src, err := os.ReadFile(filepath.Join(dir, "wf.star"))
	if err != nil {
		t.Fatal(err)
	}
	if want := goodRefinement.Replace(refineDraft); string(src) != want {
		t.Errorf("wf.star is not the refinement:\n%s\nwant:\n%s", src, want)
	}
	wantNote := filepath.ToSlash(filepath.Join(dir, "wf.star")) + " was refined by model fake-refiner-2026 ([models.refine]) and checked: " +
		"it passes the workflow check and keeps the draft's 3 steps, arguments and data flow; parameters renamed arg2 → package_dir, arg3 → branch"
	if !strings.Contains(out, "Warning: "+codeRefined+": "+wantNote+"\n") {
		t.Errorf("codify --refine output lacks the refinement note %q:\n%s", wantNote, out)
	}

	var report candidate.Report
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	if !hasWarning(report.Warnings, codeRefined, wantNote) {
		t.Errorf("report warnings %+v lack the refinement", report.Warnings)
	}
	sel := report.Selected()
	var names []string
	for _, p := range sel.Parameters {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"package_dir", "branch"}, names); diff != "" {
		t.Errorf("report parameters (-want +got):\n%s", diff)
	}
	if a := sel.Steps[2].Arguments[2]; a.Parameter != "branch" || sel.Steps[2].ParameterRefs[0] != "branch" {
		t.Errorf("step 3 argument %+v, refs %v; want parameter branch", a, sel.Steps[2].ParameterRefs)
	}
	// The report's candidate regenerates the refinement's signature.
	regen, err := codegen.Workflow(sel, codegen.Options{})
	if err != nil || !strings.Contains(string(regen), "def build_and_publish(ctx, package_dir, branch):") {
		t.Errorf("regenerated workflow (%v):\n%s", err, regen)
	}

	if v := bundle.Validate(filepath.Join(dir, "bundle")); len(v.Problems) > 0 {
		t.Errorf("bundle problems: %+v", v.Problems)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "bundle", bundle.WorkflowFile)); err != nil || !bytes.Equal(b, src) {
		t.Errorf("bundle workflow differs from --out (%v)", err)
	}
}

func TestCodifyRefineRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply func(src string) string
		err   string
	}{
		{
			name: "a literal changed",
			reply: func(src string) string {
				return strings.Replace(goodRefinement.Replace(src), `"origin"`, `"upstream"`, 1)
			},
			err: "crystallize: refusing the model's refinement: step 3 ctx.tool(\"git\"): its arguments changed from " +
				"`ctx.tool(\"git\", arg1 = \"push\", arg2 = \"origin\", arg3 = arg3)` to `ctx.tool(\"git\", arg1 = \"push\", arg2 = \"upstream\", arg3 = branch)`\n",
		},
		{
			name: "a step dropped",
			reply: func(src string) string {
				return strings.Replace(src, `    ctx.tool("go", arg1 = "vet", arg2 = "./...")`+"\n", "", 1)
			},
			err: "crystallize: refusing the model's refinement: step 2: the draft calls ctx.tool(\"go\"), the refinement ctx.tool(\"git\")\n",
		},
		{
			name: "a parameter renamed to a builtin",
			reply: func(src string) string {
				return strings.NewReplacer("(ctx, arg2, arg3)", "(ctx, arg2, len)", "arg3 = arg3)", "arg3 = len)").Replace(src)
			},
			err: "crystallize: refusing the model's refinement: parameter arg3 is renamed len, which a workflow may not bind\n",
		},
		{
			name:  "JSON",
			reply: func(string) string { return `{"workflow": "def f(ctx): pass"}` },
			err:   "crystallize: refusing the model's refinement: the answer is JSON, not Starlark source\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := refineServer(t, tt.reply)
			dir := t.TempDir()
			code, out := codifyCLI(t, map[string]string{"REFINE_KEY": "sekret"}, refineProject(t, dir, srv.URL)...)
			if code != exitFailure || !strings.HasSuffix(out, tt.err) {
				t.Errorf("codify --refine = %d, %q; want 1, %q", code, out, tt.err)
			}
			for _, name := range []string{"wf.star", "report.json", "bundle"} {
				if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("codify --refine refused but wrote %s", name)
				}
			}
		})
	}
}

// TestCodifyRefineConfig covers --refine without a usable model: nothing
// is asked and nothing written.
func TestCodifyRefineConfig(t *testing.T) {
	for _, tt := range []struct {
		name   string
		config string
		vars   map[string]string
		code   int
		err    string
	}{
		{
			name: "no model", config: "[tools.\"x\"]\ncommand = [\"true\"]\n", code: exitUsage,
			err: "crystallize: --refine needs a model: configure [models.refine] or [models.default] in crystallize.toml (or name a file with --config)\n",
		},
		{
			name: "replay", config: "[models.default]\nprovider = \"replay\"\n", code: exitUsage,
			err: "crystallize: --refine: models.default: model unavailable: provider \"replay\" has no HTTP client\n",
		},
		{
			name: "key not set", config: "[models.default]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"REFINE_KEY\"\n", code: exitFailure,
			err: "crystallize: --refine: models.default.api_key: secret unavailable: REFINE_KEY is not set; set the environment variable REFINE_KEY\n",
		},
		{
			// The key is looked up where a run looks: the secrets file is
			// consulted (and refused when others can read it).
			name: "secrets file", config: "[secrets]\nfile = \"s.env\"\n\n[models.default]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"REFINE_KEY\"\n", code: exitFailure,
			err: "crystallize: --refine: models.default.api_key: unusable secrets file: ",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "c.toml")
			if err := os.WriteFile(cfg, []byte(tt.config), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "s.env"), []byte("REFINE_KEY=k\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"session", "codify", "--refine", "--config", cfg, "--out", filepath.Join(dir, "wf.star")}, writeBuildSessions(t, dir)...)
			code, out := codifyCLI(t, tt.vars, args...)
			if code != tt.code || !strings.HasPrefix(out, tt.err) || (!strings.HasSuffix(tt.err, ": ") && out != tt.err) {
				t.Errorf("codify --refine = %d, %q; want %d, %q", code, out, tt.code, tt.err)
			}
			if _, err := os.Stat(filepath.Join(dir, "wf.star")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("codify --refine wrote wf.star")
			}
		})
	}
}
