package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalChecks runs eval-pack cases of the harness case format through
// Eval: each row appends rubrics and cases to the generated pack, and
// says which assertions pass and whether the eval passes.
func TestEvalChecks(t *testing.T) {
	s, h := releaseTraces(t, nil)
	tests := []struct {
		name   string
		extra  string
		files  map[string]string
		passed bool
		want   map[string]string // assertion id → "pass: message part" or "FAIL: message part"
	}{
		{"schema from output_file", `
[[rubrics]]
id = "shape"
kind = "deterministic"
[[rubrics.assertions]]
kind = "json_schema"
schema = '{"type": "object", "required": ["version"]}'
[[cases]]
id = "manifest"
rubrics = ["shape"]
severity = "blocking"
[cases.input]
output_file = "expected/out.json"
`, map[string]string{"expected/out.json": `{"version": "1.0.0"}`}, true,
			map[string]string{"manifest/shape/0": "pass: output matches the schema"}},
		{"tool calls over a fixture", `
[[rubrics]]
id = "tools"
kind = "agent"
[[rubrics.assertions]]
kind = "tool_call_f1"
calibrated = true
[[cases]]
id = "flow"
rubrics = ["tools"]
severity = "blocking"
[cases.input]
trace = "FIXTURE"
expected_tool_calls = [{name = "git.checkout_branch"}, {name = "update_manifest_version"}, {name = "cargo.package_dry_run"}, {name = "publish"}]
`, nil, false,
			map[string]string{"flow/tools/0": "FAIL: (precision 1, recall 0.75) = 0.8571"}},
		{"an uncalibrated metric does not block", `
[[rubrics]]
id = "tools"
kind = "agent"
[[rubrics.assertions]]
kind = "tool_call_f1"
[[cases]]
id = "flow"
rubrics = ["tools"]
severity = "blocking"
[cases.input]
trajectory = [{name = "a"}]
expected_tool_calls = [{name = "b"}]
`, nil, true,
			map[string]string{"flow/tools/0": "FAIL: tool-call F1"}},
		{"a warning case does not block", `
[[rubrics]]
id = "words"
kind = "deterministic"
[[rubrics.assertions]]
kind = "not_contains"
value = "TODO"
[[cases]]
id = "notes"
rubrics = ["words"]
severity = "warning"
[cases.input]
output = "TODO: write notes"
`, nil, true,
			map[string]string{"notes/words/0": `FAIL: output contains "TODO"`}},
		{"no input", `
[[rubrics]]
id = "words"
kind = "deterministic"
[[rubrics.assertions]]
kind = "contains"
value = "x"
[[cases]]
id = "bare"
rubrics = ["words"]
severity = "blocking"
`, nil, false,
			map[string]string{"bare/words/0": "FAIL: the case has no input to check"}},
		{"missing output file", `
[[rubrics]]
id = "words"
kind = "deterministic"
[[rubrics.assertions]]
kind = "contains"
value = "x"
[[cases]]
id = "gone"
rubrics = ["words"]
severity = "blocking"
[cases.input]
output_file = "expected/none.txt"
`, nil, false,
			map[string]string{"gone/words/0": "FAIL: input.output_file: "}},
		{"a model-judged kind without a judge", `
[[rubrics]]
id = "judged"
kind = "model"
[[rubrics.assertions]]
kind = "llm_rubric"
rubric = "is polite"
[[cases]]
id = "tone"
rubrics = ["judged"]
severity = "blocking"
[cases.input]
output = "thanks"
`, nil, true,
			map[string]string{"tone/judged/0": "FAIL: no judge configured"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			if m.EvalPack.Path == nil {
				t.Fatal("the scenario wrote no eval pack")
			}
			pack := filepath.Join(dir, *m.EvalPack.Path)
			extra := strings.ReplaceAll(tt.extra, "FIXTURE", m.Fixtures[0].Path)
			mustWrite(t, pack, append(mustRead(t, pack), extra...))
			for name, content := range tt.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(dir, name), []byte(content))
			}
			res, err := Eval(dir)
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed != tt.passed {
				t.Errorf("passed = %v, want %v: %+v", res.Passed, tt.passed, res.Assertions)
			}
			// Failed names exactly the blocking assertions that failed,
			// and there are some exactly when the eval did not pass.
			var failed []string
			for _, a := range res.Assertions {
				if a.Blocking && !a.Passed {
					failed = append(failed, a.ID)
				}
			}
			if got := res.Failed(); strings.Join(got, ",") != strings.Join(failed, ",") || (len(got) == 0) != res.Passed {
				t.Errorf("Failed() = %v, want %v (passed %v)", got, failed, res.Passed)
			}
			got := map[string]string{}
			for _, a := range res.Assertions {
				status := "FAIL: "
				if a.Passed {
					status = "pass: "
				}
				got[a.ID] = status + a.Message
			}
			for id, want := range tt.want {
				if !strings.HasPrefix(got[id], want[:6]) || !strings.Contains(got[id], want[6:]) {
					t.Errorf("%s = %q, want %q", id, got[id], want)
				}
			}
			if len(got) != len(tt.want)+1 {
				t.Errorf("assertions = %v, want the shadow one and %d more", got, len(tt.want))
			}
		})
	}
}

func TestEvalResultFailed(t *testing.T) {
	r := &EvalResult{Assertions: []AssertionResult{
		{ID: "a/x/0", Blocking: true, Passed: true},
		{ID: "a/x/1", Blocking: true},
		{ID: "b/y/0"}, // advisory: a failure does not fail the eval
		{ID: "c/z/0", Blocking: true},
	}}
	if got, want := strings.Join(r.Failed(), ", "), "a/x/1, c/z/0"; got != want {
		t.Errorf("Failed() = %s, want %s", got, want)
	}
}
