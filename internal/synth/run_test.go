package synth

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runExperiment(t *testing.T, files map[string]string, opts Options) *Report {
	t.Helper()
	dir := writeFiles(t, files)
	x, err := LoadExperiment(filepath.Join(dir, "experiment.toml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), x, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

const sumExperiment = `[claim]
id = "sum"
text = "the total does not depend on row order"
[spec]
[[spec.properties]]
name = "perm"
transform = "permute_rows"
metric = "total"
[code]
file = "fit.star"
[data]
file = "data.json"
[[hypotheses]]
name = "metamorphic_check"
verifier = "metamorphic"
`

func TestRunSeedExample(t *testing.T) {
	rep := runExperiment(t, map[string]string{
		"experiment.toml": sumExperiment,
		"fit.star":        "def fit_and_eval(data):\n    return {'total': sum(data)}\n",
		"data.json":       "[1, 2, 3, 4, 5]",
	}, Options{Sandbox: testSandbox(t)})
	if got, want := FormatMetrics(rep.Conditions[0]), "{'total': [15], 'perm_pass': [True]}"; got != want {
		t.Errorf("metrics = %s, want %s", got, want)
	}
	if !rep.Pass() {
		t.Errorf("Pass() = false, want true: %+v", rep.Hypotheses)
	}
	if err := rep.Err(); err != nil {
		t.Errorf("Err() = %v, want nil", err)
	}
	s := rep.Summary("evidence/sum")
	if !s.Pass || s.Evidence != "evidence/sum" || len(s.Hypotheses) != len(rep.Hypotheses) || len(s.Metrics) != len(rep.Conditions) || s.Stopped != nil {
		t.Errorf("Summary = %+v, want the run's verdicts and metrics", s)
	}
}

// Code that reads the first row is not permutation invariant: the
// property fails, and so does the hypothesis.
func TestRunPropertyFailure(t *testing.T) {
	rep := runExperiment(t, map[string]string{
		"experiment.toml": sumExperiment,
		"fit.star":        "def fit_and_eval(data):\n    return {'total': data[0] * 10 + sum(data)}\n",
		"data.json":       "[1, 2, 3, 4, 5]",
	}, Options{})
	if got := rep.Conditions[0].Metrics["perm_pass"]; !cmp.Equal(got, []any{false}) {
		t.Errorf("perm_pass = %v, want [false]", got)
	}
	if rep.Pass() || len(rep.Hypotheses) != 1 || rep.Hypotheses[0].Pass {
		t.Errorf("hypotheses = %+v, want one failing", rep.Hypotheses)
	}
	if err := rep.Err(); !errors.Is(err, ErrHypothesis) {
		t.Errorf("Err() = %v, want ErrHypothesis", err)
	}
	if len(rep.Checks) != 1 || rep.Checks[0].Pass || rep.Checks[0].Reason == "" {
		t.Errorf("checks = %+v, want one failing check with a reason", rep.Checks)
	}
}

func TestRunTransforms(t *testing.T) {
	rep := runExperiment(t, map[string]string{
		"experiment.toml": `[claim]
id = "stats"
text = "the mean behaves like a mean"
[spec]
allowed_imports = ["stats", "table"]
[[spec.properties]]
name = "perm"
transform = "permute_rows"
[[spec.properties]]
name = "scaled"
transform = "scale"
factor = 3
expect = "scaled"
metric = "mean"
[[spec.properties]]
name = "shifted"
transform = "shift"
offset = -2.5
expect = "shifted"
metric = "mean"
[[spec.properties]]
name = "dup"
transform = "duplicate_rows"
metric = "mean"
[[spec.properties]]
name = "nulls"
transform = "drop_nulls"
metric = "n"
[[spec.properties]]
name = "mirror"
transform = "mirror"
metric = "n"
[code]
source = """
load("stats", "mean")
load("table", "column")
def fit_and_eval(rows):
    xs = [x for x in column(rows, "x") if x != None]
    return {"mean": mean(xs), "n": len(xs)}
"""
[transforms]
source = """
def mirror(rows):
    return [{"x": r["x"]} for r in reversed(rows)]
"""
[data]
file = "rows.csv"
[experiment]
replicates = 3
resample = "bootstrap"
seed = 7
[[hypotheses]]
name = "all"
verifier = "metamorphic"
`,
		"rows.csv": "x,label\n1,a\n2.5,b\n,c\n4,d\n",
	}, Options{})
	base := rep.Conditions[0]
	for _, p := range []string{"perm", "scaled", "shifted", "dup", "nulls", "mirror"} {
		if got := base.Metrics[p+"_pass"]; !cmp.Equal(got, []any{true, true, true}) {
			t.Errorf("%s_pass = %v, want true in every replicate; checks %+v", p, got, rep.Checks)
		}
	}
	if !rep.Pass() {
		t.Errorf("Pass() = false: %+v", rep.Hypotheses)
	}
	if got := base.Metrics["mean"][0]; got != 2.5 {
		t.Errorf("mean on the data = %v, want 2.5", got)
	}
}

type fakeModel struct{ answer string }

func (m fakeModel) Complete(_ context.Context, key, prompt string) (*Answer, error) {
	return &Answer{Text: m.answer, Model: "fake-1", InputTokens: int64(len(prompt) / 4), OutputTokens: 12}, nil
}

func TestRunSynthesizedCodeAndEvidence(t *testing.T) {
	secret := "ghp_" + strings.Repeat("a1B2c3D4", 5)
	files := map[string]string{
		"experiment.toml": `[claim]
id = "rmse"
text = "the tuned model lowers RMSE by 5%"
acceptance = { min_pct = 5 }
[spec]
allowed_imports = ["stats"]
[[spec.properties]]
name = "perm"
transform = "permute_rows_aligned"
metric = "rmse"
[code]
model = "default"
prompt = "Compute the RMSE of predicting y by the mean of y."
[[treatments]]
name = "tuned"
source = """
load("stats", "rmse")
def fit_and_eval(d):
    token = "` + secret + `"
    return {"rmse": rmse(d["y"], d["p"])}
"""
[data]
value = { y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], p = [1.1, 2.0, 2.9, 4.2, 5.0, 5.9] }
[experiment]
replicates = 8
resample = "bootstrap"
[[hypotheses]]
name = "improves"
verifier = "meets_claim"
metric = "rmse"
[[hypotheses]]
name = "invariant"
verifier = "metamorphic"
`,
	}
	dir := writeFiles(t, files)
	x, err := LoadExperiment(filepath.Join(dir, "experiment.toml"))
	if err != nil {
		t.Fatal(err)
	}
	model := fakeModel{answer: "Here it is:\n```python\nload(\"stats\", \"mean\", \"rmse\")\ndef fit_and_eval(d):\n    m = mean(d[\"y\"])\n    return {\"rmse\": rmse(d[\"y\"], [m for _ in d[\"y\"]])}\n```\n"}
	rep, err := Run(context.Background(), x, Options{Model: model, Sandbox: testSandbox(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Pass() {
		t.Fatalf("Pass() = false: stopped %v, hypotheses %+v", rep.Stopped, rep.Hypotheses)
	}
	if m := rep.Hypotheses[0].Result["method"]; m != "welch_t_test_one_sided" {
		t.Errorf("method = %v", m)
	}
	out := filepath.Join(dir, "evidence")
	if err := WriteEvidence(out, rep); err != nil {
		t.Fatal(err)
	}
	var m Manifest
	data, err := os.ReadFile(filepath.Join(out, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.ModelCalls) != 1 || m.ModelCalls[0].Model != "fake-1" || len(m.ModelCalls[0].PromptSHA256) != 64 || m.ModelCalls[0].ResponseSHA256 != sha(model.answer) || m.ModelCalls[0].OutputTokens != 12 {
		t.Errorf("model calls = %+v", m.ModelCalls)
	}
	if len(m.Replicates) != 8 || len(m.Code) != 2 || m.Code[0].SHA256 != rep.Conditions[0].SHA256 || !m.Pass {
		t.Errorf("manifest = %+v", m)
	}
	var spec Spec
	if err := json.Unmarshal(m.Spec, &spec); err != nil || spec.AllowedImports[0] != "stats" {
		t.Errorf("manifest spec = %s (%v)", m.Spec, err)
	}
	tuned, err := os.ReadFile(filepath.Join(out, "code", "tuned.star"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(tuned), secret) || m.Redactions == 0 {
		t.Errorf("the secret in the code was not redacted (redactions %d):\n%s", m.Redactions, tuned)
	}
	// The evidence is replaced as a whole on the next write.
	if err := WriteEvidence(out, rep); err != nil {
		t.Fatal(err)
	}
	// A directory that is not evidence is never replaced.
	if err := WriteEvidence(dir, rep); err == nil || !strings.Contains(err.Error(), "not an evidence bundle") {
		t.Errorf("WriteEvidence over the experiment's directory: %v, want a refusal", err)
	}
	// Nor is one whose manifest names the schema as "Schema".
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(`{"Schema": "`+EvidenceSchema+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteEvidence(dir, rep); err == nil || !strings.Contains(err.Error(), "not an evidence bundle") {
		t.Errorf("WriteEvidence over a directory whose manifest says \"Schema\": %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(out, ManifestFile)); err != nil {
		t.Errorf("a refused write removed files: %v", err)
	}
}

func TestRunStopped(t *testing.T) {
	rep := runExperiment(t, map[string]string{
		"experiment.toml": strings.Replace(sumExperiment, "[spec]", "[spec]\nresources = { time_s = 1 }", 1),
		"fit.star":        "def fit_and_eval(data):\n    while True:\n        pass\n",
		"data.json":       "[1]",
	}, Options{Sandbox: testSandbox(t)})
	if rep.Stopped == nil || rep.Stopped.Code != CodeSteps || rep.Pass() {
		t.Errorf("Stopped = %v, want %s", rep.Stopped, CodeSteps)
	}
	var ce *CapsuleError
	if err := rep.Err(); !errors.As(err, &ce) || ce != rep.Stopped {
		t.Errorf("Err() = %v, want the capsule error that stopped the run", err)
	}
	if s := rep.Summary(""); s.Pass || s.Stopped != rep.Stopped || s.Hypotheses == nil {
		t.Errorf("Summary = %+v, want a stopped run, hypotheses [] rather than null", s)
	}
}

func TestLoadDataFormats(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.jsonl":   "{\"x\": 1}\n\n{\"x\": 2.5}\n",
		"bad.jsonl": "{\"x\": 1}\n{x}\n",
		"b.csv":     "x,y\n1,NaN\n-2e3,\n",
		"bad.json":  "[1,\n2,,]",
	})
	got, err := LoadData(filepath.Join(dir, "a.jsonl"), "")
	if err != nil || !cmp.Equal(got, []any{map[string]any{"x": int64(1)}, map[string]any{"x": 2.5}}) {
		t.Errorf("jsonl = %v, %v", got, err)
	}
	got, err = LoadData(filepath.Join(dir, "b.csv"), "")
	if err != nil || !cmp.Equal(got, []any{map[string]any{"x": int64(1), "y": "NaN"}, map[string]any{"x": -2000.0, "y": nil}}) {
		t.Errorf("csv = %v, %v", got, err)
	}
	if _, err := LoadData(filepath.Join(dir, "bad.jsonl"), ""); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2: malformed JSON") {
		t.Errorf("bad jsonl error = %v", err)
	}
	if _, err := LoadData(filepath.Join(dir, "bad.json"), ""); err == nil || !strings.Contains(err.Error(), "bad.json:2: malformed JSON") {
		t.Errorf("bad json error = %v", err)
	}
}

// scriptedModel answers by the step named in the prompt.
type scriptedModel map[string]string

func (m scriptedModel) Complete(_ context.Context, key, prompt string) (*Answer, error) {
	for marker, answer := range m {
		if strings.Contains(prompt, marker) {
			return &Answer{Text: answer, Model: "fake-2"}, nil
		}
	}
	return &Answer{Text: "no idea", Model: "fake-2"}, nil
}

func TestRunGeneratedSpec(t *testing.T) {
	files := map[string]string{
		"experiment.toml": `[claim]
id = "gen"
text = "the total does not depend on row order"
[spec]
model = "default"
prompt = "Propose a spec."
resources = { time_s = 1 }
[code]
source = "def fit_and_eval(d):\n    return {'total': sum(d)}\n"
[data]
value = [1, 2, 3]
[[hypotheses]]
name = "m"
verifier = "metamorphic"
`,
	}
	model := scriptedModel{"fenced code block of JSON": "```json\n{\"allowed_imports\": [], \"properties\": [{\"name\": \"perm\", \"transform\": \"permute_rows\", \"metric\": \"total\"}], \"resources\": {\"time_s\": 3600}}\n```"}
	rep := runExperiment(t, files, Options{Model: model})
	if len(rep.ModelCalls) != 1 || rep.ModelCalls[0].Step != "generate_spec" {
		t.Errorf("model calls = %+v", rep.ModelCalls)
	}
	if len(rep.Spec.Properties) != 1 || rep.Spec.Resources.TimeS != 1 {
		t.Errorf("spec = %+v; want the model's property and the author's resources", rep.Spec)
	}
	if !rep.Pass() || !cmp.Equal(rep.Conditions[0].Metrics["perm_pass"], []any{true}) {
		t.Errorf("report = %+v", rep)
	}

	// A spec the model gets wrong is refused with the path of the mistake.
	dir := writeFiles(t, files)
	x, err := LoadExperiment(filepath.Join(dir, "experiment.toml"))
	if err != nil {
		t.Fatal(err)
	}
	bad := scriptedModel{"fenced code block of JSON": "```json\n{\"properties\": [{\"name\": \"perm\", \"transform\": \"permute_rows\", \"metrc\": \"total\"}]}\n```"}
	if _, err := Run(context.Background(), x, Options{Model: bad}); err == nil || !strings.Contains(err.Error(), `$.properties[0].metrc: unknown key "metrc"`) {
		t.Errorf("Run with a bad spec = %v", err)
	}
}

func TestRunInconsistentMetrics(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"reserved name", "def fit_and_eval(d):\n    return {'total': sum(d), 'perm_pass': True}\n", `metric "perm_pass" is the result of property perm`},
		{"keys vary by replicate", "def fit_and_eval(d):\n    if len(d) == 3 and d[0] == 1 and d[1] == 2:\n        return {'total': sum(d)}\n    return {'total': sum(d), 'extra': 1}\n", "replicate 1 returned metrics [extra total], replicate 0 returned [total]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := strings.Replace(sumExperiment, "[data]", "[experiment]\nreplicates = 2\nresample = \"bootstrap\"\nseed = 3\n[data]", 1)
			rep := runExperiment(t, map[string]string{"experiment.toml": exp, "fit.star": tt.code, "data.json": "[1, 2, 3]"}, Options{})
			if rep.Stopped == nil || rep.Stopped.Code != CodeResult || rep.Stopped.Capsule != "fit.star" || !strings.Contains(rep.Stopped.Msg, tt.want) {
				t.Errorf("Stopped = %v, want %s: %s", rep.Stopped, CodeResult, tt.want)
			}
		})
	}
}
