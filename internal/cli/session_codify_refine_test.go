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
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/codify"
)

// refineDraft is the workflow session codify writes for two sessions that
// differ in the package built and the branch pushed (writeBuildSessions).
func refineDraft(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("testdata/refine/draft.star")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// writeBuildSessions writes the two sessions refineDraft is codified from.
func writeBuildSessions(t *testing.T, dir string) []string {
	t.Helper()
	return []string{writeSession(t, dir, "a", "./cmd/a", "br-a"), writeSession(t, dir, "b", "./cmd/b", "br-b")}
}

// goodRefinement renames both parameters and rewrites the comments.
var goodRefinement = strings.NewReplacer(
	"def build_and_publish(ctx, args, branch):", "def build_and_publish(ctx, package_dirs, branch_name):",
	"args = args)", "args = package_dirs)",
	"branch = branch,", "branch = branch_name,",
	`"""Runs go build, go vet, then git push."""`, `"""Builds and vets the package, then pushes the branch."""`,
	"    # args is a list of strings, one argument per item (run --param args='[\"a\", \"b\"]')\n", "",
	"    # step 1 · tool_call go build · capabilities exec:go\n", "    # Build the package that changed.\n",
	"    # step 3 · tool_call git push · capabilities exec:git\n", "",
)

// TestCodifyRefineDraft checks that codify still writes refineDraft, the
// draft of codegen's equivalence tests.
func TestCodifyRefineDraft(t *testing.T) {
	dir := t.TempDir()
	code, out := codifyCLI(t, nil, append([]string{"session", "codify", "--out", filepath.Join(dir, "wf.star")}, writeBuildSessions(t, dir)...)...)
	if code != 0 {
		t.Fatalf("codify = %d\n%s", code, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "wf.star")); string(got) != refineDraft(t) {
		t.Fatalf("the draft changed; update testdata/refine/draft.star:\n%s", got)
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
	if want := goodRefinement.Replace(refineDraft(t)); string(src) != want {
		t.Errorf("wf.star is not the refinement:\n%s\nwant:\n%s", src, want)
	}
	wantNote := filepath.ToSlash(filepath.Join(dir, "wf.star")) + " was refined by model fake-refiner-2026 ([models.refine]) and checked: " +
		"it passes the workflow check and keeps the draft's 3 steps, arguments and data flow; parameters renamed args → package_dirs, branch → branch_name"
	if !strings.Contains(out, "Warning: "+codify.CodeRefined+": "+wantNote+"\n") {
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
	if !hasWarning(report.Warnings, codify.CodeRefined, wantNote) {
		t.Errorf("report warnings %+v lack the refinement", report.Warnings)
	}
	sel := report.Selected()
	var names []string
	for _, p := range sel.Parameters {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"package_dirs", "branch_name"}, names); diff != "" {
		t.Errorf("report parameters (-want +got):\n%s", diff)
	}
	if i := slices.IndexFunc(sel.Steps[2].Arguments, func(a candidate.Argument) bool { return a.Key == "branch" }); i < 0 ||
		sel.Steps[2].Arguments[i].Parameter != "branch_name" || !slices.Equal(sel.Steps[2].ParameterRefs, []string{"branch_name"}) {
		t.Errorf("step 3 arguments %+v, refs %v; want argument branch the parameter branch_name", sel.Steps[2].Arguments, sel.Steps[2].ParameterRefs)
	}
	// The report's candidate regenerates the refinement's signature.
	regen, err := codegen.Workflow(sel, codegen.Options{})
	if err != nil || !strings.Contains(string(regen), "def build_and_publish(ctx, package_dirs, branch_name):") {
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
				return strings.Replace(goodRefinement.Replace(src), `remote = "origin"`, `remote = "upstream"`, 1)
			},
			err: "crystallize: refusing the model's refinement: the code changed from " +
				"`ctx.exec(\"git push\", [\"git\", \"push\", \"{remote}\", \"{branch}\"], branch = branch, remote = \"origin\",)` (draft line 17) to " +
				"`ctx.exec(\"git push\", [\"git\", \"push\", \"{remote}\", \"{branch}\"], branch = branch_name, remote = \"upstream\",)` (refinement line 15)\n",
		},
		{
			name: "a step dropped",
			reply: func(src string) string {
				return strings.Replace(src, `    ctx.exec("go vet", ["go", "vet", "{args...}"], args = ["./..."])`+"\n", "", 1)
			},
			err: "crystallize: refusing the model's refinement: the code changed from `ctx.exec(\"go vet\", [\"go\", \"vet\", \"{args...}\"], args = [\"./...\"])` (draft line 14) " +
				"to `ctx.check(\"program_on_path\", program = \"git\", tool = \"git push\")` (refinement line 15)\n",
		},
		{
			name: "a parameter renamed to a builtin",
			reply: func(src string) string {
				return strings.NewReplacer("(ctx, args, branch)", "(ctx, args, len)", "branch = branch,", "branch = len,").Replace(src)
			},
			err: "crystallize: refusing the model's refinement: parameter branch is renamed len, which a workflow may not bind\n",
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
