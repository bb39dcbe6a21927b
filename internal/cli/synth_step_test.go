package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// triageTrace is an agent run that reads an issue, has a model classify
// it, and sets the labels the model chose.
func triageTrace(id, title string, labels []string) string {
	l, _ := json.Marshal(labels)
	return fmt.Sprintf(`{"version": 1, "id": %[1]q, "actions": [
  {"id": "%[1]s-a1", "kind": "external_api_call", "name": "tracker.get_issue", "parameters": {"issue_id": "%[1]s"}, "output": {"title": %[2]q}, "capabilities": ["tracker.read"], "deterministic": true},
  {"id": "%[1]s-a2", "kind": "model_call", "name": "classify_issue", "parameters": {"issue_id": "%[1]s", "title": %[2]q}, "output": {"labels": %[3]s}, "capabilities": ["model.invoke"], "deterministic": false},
  {"id": "%[1]s-a3", "kind": "external_api_call", "name": "tracker.set_labels", "parameters": {"issue_id": "%[1]s", "labels": %[3]s}, "output": {"updated": true}, "capabilities": ["tracker.write"], "side_effects": [{"kind": "issue_update", "target": "tracker/labels", "capability": "tracker.write", "mutation": "update"}], "deterministic": true}
]}`, id, title, l)
}

// classify answers: the labels follow from words of the title.
const classifyRight = "```python\ndef classify(inputs):\n    t = inputs[\"title\"].lower()\n    if \"500\" in t:\n        return {\"labels\": [\"bug\", \"sev/high\"]}\n    if \"flaky\" in t:\n        return {\"labels\": [\"flaky-test\", \"sev/low\"]}\n    return {\"labels\": [\"perf\", \"sev/medium\"]}\n```\n"

// Right on all but the one issue whose title says "slow" and "500".
const classifyWrong = "```python\ndef classify(inputs):\n    t = inputs[\"title\"].lower()\n    if \"slow\" in t:\n        return {\"labels\": [\"perf\", \"sev/medium\"]}\n    if \"500\" in t:\n        return {\"labels\": [\"bug\", \"sev/high\"]}\n    if \"flaky\" in t:\n        return {\"labels\": [\"flaky-test\", \"sev/low\"]}\n    return {\"labels\": [\"perf\", \"sev/medium\"]}\n```\n"

func TestSynthStep(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"traces/1.json":  triageTrace("T-1", "Refund webhook returns 500", []string{"bug", "sev/high"}),
		"traces/2.json":  triageTrace("T-2", "Flaky settlement test", []string{"flaky-test", "sev/low"}),
		"traces/3.json":  triageTrace("T-3", "Slow checkout page returns 500 on retry", []string{"bug", "sev/high"}),
		"traces/4.json":  triageTrace("T-4", "Search is slow", []string{"perf", "sev/medium"}),
		"heldout/5.json": triageTrace("T-5", "Ledger API 500s under load", []string{"bug", "sev/high"}),
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, stderr := runCLI(t, "mine", "--from", "traces", "--shadow-from", "heldout", "--workflow-name", "triage", "--bundle", "bundle"); code != 0 {
		t.Fatalf("mine: exit %d\n%s\n%s", code, stdout, stderr)
	}
	before, err := os.ReadFile("bundle/workflow.star")
	if err != nil {
		t.Fatal(err)
	}
	// The call spans lines once it carries the step's output schema.
	if !regexp.MustCompile(`ctx\.model\(\s*"classify_issue"`).Match(before) {
		t.Fatalf("the mined workflow has no classify_issue model call:\n%s", before)
	}

	answer := classifyRight
	srv, prompts := openAIServer(t, func(string) string { return answer })
	cfg := "[models.default]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"local-coder-1\"\n"
	if err := os.WriteFile("crystallize.toml", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	// The bundle is approved as mined; the model call is what synthesis
	// replaces.
	state := filepath.Join(dir, "state")
	if code, stdout, stderr := runCLI(t, "approve", "bundle", "--approver", "lead@example.com", "--state-dir", state); code != 0 {
		t.Fatalf("approve: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// A correct function replaces the model call in a new version of the
	// bundle's workflow.
	code, stdout, stderr := runCLI(t, "synth", "step", "bundle", "--step", "2")
	if code != 0 {
		t.Fatalf("synth step: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "step 2 classify_issue: accepted classify") || !strings.Contains(stdout, "verified on 4 recorded runs (1 withheld from the model) and 1 held-out runs") {
		t.Errorf("stdout = %s", stdout)
	}
	// The last recorded run is withheld from the model, and the held-out
	// one is never shown.
	if len(*prompts) != 1 || !strings.Contains((*prompts)[0], `"title":"Slow checkout page returns 500 on retry"`) ||
		strings.Contains((*prompts)[0], "Search is slow") || strings.Contains((*prompts)[0], "Ledger") {
		t.Errorf("the prompt must hold the first three recorded runs and neither the withheld nor the held-out one: %q", *prompts)
	}
	wf, err := os.ReadFile("bundle/workflow.star")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(wf), "ctx.model(") || !strings.Contains(string(wf), "classify({") {
		t.Errorf("new workflow still calls the model or not the function:\n%s", wf)
	}
	if !strings.Contains(string(wf), "remaining model calls per run: 0") {
		t.Errorf("the header still counts the model call:\n%s", wf)
	}
	if err := codegen.Check("workflow.star", wf, "triage"); err != nil {
		t.Errorf("new workflow does not check: %v", err)
	}
	// The evidence is in the bundle: report.json and candidate.json.
	var manifest struct {
		Workflow struct {
			SHA256 string `json:"sha256"`
		} `json:"workflow"`
		Synthesized []candidate.SynthesizedStep `json:"synthesized_steps"`
		Promotion   struct {
			Criteria struct {
				Status string `json:"status"`
			} `json:"criteria"`
		} `json:"promotion"`
	}
	data, _ := os.ReadFile("bundle/candidate.json")
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wf)
	if len(manifest.Synthesized) != 1 || manifest.Workflow.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("candidate.json: workflow sha256 %s, synthesized steps %+v", manifest.Workflow.SHA256, manifest.Synthesized)
	}
	ev := manifest.Synthesized[0]
	if ev.Step != 2 || ev.Function != "classify" || ev.Model != "local-coder-1" || len(ev.PromptSHA256) != 64 || len(ev.ResponseSHA256) != 64 ||
		len(ev.FunctionSHA256) != 64 || ev.ExamplesChecked != 4 || ev.HeldoutChecked != 1 || ev.WorkflowSHA256 != manifest.Workflow.SHA256 ||
		ev.PreviousWorkflowSHA256 == ev.WorkflowSHA256 {
		t.Errorf("evidence = %+v", ev)
	}
	if manifest.Promotion.Criteria.Status != "needs_approval" {
		t.Errorf("promotion status = %s, want needs_approval", manifest.Promotion.Criteria.Status)
	}
	rep, _ := os.ReadFile("bundle/report.json")
	if !strings.Contains(string(rep), `"synthesized_steps"`) || !strings.Contains(string(rep), ev.FunctionSHA256) {
		t.Errorf("report.json lacks the evidence")
	}

	// The approval was for the old bytes: validate says so and run
	// refuses the bundle.
	code, stdout, _ = runCLI(t, "validate", "bundle")
	if code != exitFailure || !strings.Contains(stdout, "approval_stale") {
		t.Errorf("validate: exit %d, stdout %s; want 1 and approval_stale", code, stdout)
	}
	tools := "[grants]\ncapabilities = [\"tracker.read\", \"tracker.write\"]\n" +
		"[tools.\"tracker.get_issue\"]\ncommand = [\"./get.sh\", \"{issue_id}\"]\ncapability = \"tracker.read\"\n" +
		"[tools.\"tracker.set_labels\"]\ncommand = [\"./set.sh\", \"{issue_id}\", \"{labels}\"]\ncapability = \"tracker.write\"\n" +
		"side_effects = [{ kind = \"issue_update\", target = \"tracker/labels\", capability = \"tracker.write\", mutation = \"update\" }]\n"
	for name, body := range map[string]string{
		"run.toml": tools,
		"get.sh":   "#!/bin/sh\nprintf '{\"title\": \"Payments API returns 500\"}\\n'\n",
		"set.sh":   "#!/bin/sh\nprintf '%s\\n' \"$2\" >labels.txt\nprintf '{\"updated\": true}\\n'\n",
	} {
		if err := os.WriteFile(name, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runArgs := []string{"run", "bundle", "--config", "run.toml", "--state-dir", state, "--param", "issue_id=T-9", "--json"}
	if code, _, stderr := runCLI(t, runArgs...); code == 0 || !strings.Contains(stderr, "not ready") {
		t.Errorf("run before approval: exit %d, stderr %s; want a refusal", code, stderr)
	}
	if _, err := os.Stat("labels.txt"); err == nil {
		t.Error("the refused run called a tool")
	}

	// Approved again, the bundle runs with no model call: the labels
	// come from the function.
	if code, stdout, stderr := runCLI(t, "approve", "bundle", "--approver", "lead@example.com", "--state-dir", state); code != 0 {
		t.Fatalf("approve again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, runArgs...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var ran struct {
		Status     string `json:"status"`
		ModelCalls int    `json:"model_calls"`
		ToolCalls  int    `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(stdout), &ran); err != nil {
		t.Fatalf("run --json: %v\n%s", err, stdout)
	}
	labels, _ := os.ReadFile("labels.txt")
	if ran.Status != "completed" || ran.ModelCalls != 0 || ran.ToolCalls != 2 || !strings.Contains(string(labels), "sev/high") {
		t.Errorf("run = %+v, labels %q; want completed with 0 model calls, 2 tool calls, labels bug and sev/high", ran, labels)
	}
	var step struct {
		Accepted bool `json:"accepted"`
		Call     struct {
			Model        string `json:"model"`
			PromptSHA256 string `json:"prompt_sha256"`
		} `json:"model_call"`
		SHA256   string `json:"code_sha256"`
		Workflow string `json:"workflow"`
	}
	data, _ = os.ReadFile("bundle.synth/step-2/step.json")
	if err := json.Unmarshal(data, &step); err != nil || !step.Accepted || step.Call.Model != "local-coder-1" || len(step.SHA256) != 64 || step.Workflow != filepath.Join("bundle", "workflow.star") {
		t.Errorf("step.json = %s (%v)", data, err)
	}
	// A subtly wrong function is refused, naming the run it gets wrong,
	// and the bundle stays byte for byte as it was. The bundle as mined
	// still has the model call to replace.
	if err := os.RemoveAll("bundle"); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "mine", "--from", "traces", "--shadow-from", "heldout", "--workflow-name", "triage", "--bundle", "bundle"); code != 0 {
		t.Fatalf("mine: exit %d\n%s\n%s", code, stdout, stderr)
	}
	mined := snapshot(t, "bundle")
	answer = classifyWrong
	code, stdout, stderr = runCLI(t, "synth", "step", "bundle", "--step", "2", "--out", "wrong")
	if code != exitFailure {
		t.Fatalf("wrong function: exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	want := `  examples fixtures/T-3.json action T-3-a2: got {"labels":["perf","sev/medium"]}, want {"labels":["bug","sev/high"]}`
	if !strings.Contains(stdout, want) || strings.Count(stdout, "\n  ") != 1 {
		t.Errorf("stdout = %s\nwant the one failing run: %s", stdout, want)
	}
	if _, err := os.Stat("wrong/function.star"); err == nil {
		t.Error("a refused function was kept")
	}
	if diff := cmp.Diff(mined, snapshot(t, "bundle")); diff != "" {
		t.Errorf("a refused function changed the bundle (-before +after):\n%s", diff)
	}

	// --json prints step.json as written, with "workflow" empty because
	// the bundle was not updated.
	code, stdout, stderr = runCLI(t, "synth", "step", "bundle", "--step", "2", "--out", "wrong-json", "--json")
	if code != exitFailure {
		t.Fatalf("wrong function --json: exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	written, err := os.ReadFile("wrong-json/step.json")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(written) {
		t.Errorf("--json stdout differs from step.json:\nstdout: %s\nstep.json: %s", stdout, written)
	}
	var refused struct {
		Index    int     `json:"index"`
		Workflow *string `json:"workflow"`
		Step     string  `json:"step"`
		Accepted bool    `json:"accepted"`
		Failures []struct {
			Set     string `json:"set"`
			Example string `json:"example"`
		} `json:"failures"`
	}
	if err := json.Unmarshal([]byte(stdout), &refused); err != nil {
		t.Fatalf("--json stdout is not JSON: %v\n%s", err, stdout)
	}
	if refused.Index != 2 || refused.Step != "classify_issue" || refused.Accepted || refused.Workflow == nil || *refused.Workflow != "" ||
		len(refused.Failures) != 1 || refused.Failures[0].Set != "examples" || refused.Failures[0].Example != "fixtures/T-3.json action T-3-a2" {
		t.Errorf("--json = %s", stdout)
	}

	// Steps that are not model calls are refused before any model call.
	code, _, stderr = runCLI(t, "synth", "step", "bundle", "--step", "1")
	if code != exitUsage || !strings.Contains(stderr, "not a model call") {
		t.Errorf("step 1: exit %d, stderr %s", code, stderr)
	}
}

// snapshot reads every file under dir, by slash path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(p)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// classifyByID is a lookup table of the recorded issue ids: right on
// every recorded run, and no classifier.
const classifyByID = "```python\ndef classify(inputs):\n    return {\n        \"T-1\": {\"labels\": [\"bug\", \"sev/high\"]},\n        \"T-2\": {\"labels\": [\"flaky-test\", \"sev/low\"]},\n        \"T-3\": {\"labels\": [\"bug\", \"sev/high\"]},\n    }[inputs[\"issue_id\"]]\n```\n"

// classifyCaseSensitive is right on every recorded run and wrong once a
// title is written in capitals.
const classifyCaseSensitive = "```python\ndef classify(inputs):\n    t = inputs[\"title\"]\n    if \"Flaky\" in t:\n        return {\"labels\": [\"flaky-test\", \"sev/low\"]}\n    if \"500\" in t:\n        return {\"labels\": [\"bug\", \"sev/high\"]}\n    return {\"labels\": [\"perf\", \"sev/medium\"]}\n```\n"

// A synthesized step must generalise: with three recorded runs, a table
// of their ids is refused, a function that breaks a stated invariant is
// refused, and a general one is accepted, all against a local
// OpenAI-compatible server.
func TestSynthStepGeneralises(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"traces/1.json":  triageTrace("T-1", "Refund webhook returns 500", []string{"bug", "sev/high"}),
		"traces/2.json":  triageTrace("T-2", "Flaky settlement test", []string{"flaky-test", "sev/low"}),
		"traces/3.json":  triageTrace("T-3", "Slow checkout page returns 500 on retry", []string{"bug", "sev/high"}),
		"heldout/4.json": triageTrace("T-4", "Ledger API 500s under load", []string{"bug", "sev/high"}),
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, stdout, stderr := runCLI(t, "mine", "--from", "traces", "--shadow-from", "heldout", "--workflow-name", "triage", "--bundle", "bundle"); code != 0 {
		t.Fatalf("mine: exit %d\n%s\n%s", code, stdout, stderr)
	}
	answer := classifyByID
	srv, prompts := openAIServer(t, func(string) string { return answer })
	cfg := "[models.default]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"local-coder-1\"\n"
	if err := os.WriteFile("crystallize.toml", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	mined := snapshot(t, "bundle")
	invariants := []string{"--invariant", "case:title", "--invariant", "whitespace:title", "--invariant", "id:issue_id"}

	// The lookup table is refused before it runs, naming each recited id
	// and the run it comes from; the bundle is unchanged.
	code, stdout, stderr := runCLI(t, "synth", "step", "bundle", "--step", "2", "--out", "table")
	if code != exitFailure {
		t.Fatalf("lookup table: exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{
		`  code fixtures/T-1.json action T-1-a2: recorded_literal: line 3: the dict key "T-1" is the recorded input issue_id of this run; the function must compute its output, not look it up`,
		`  code fixtures/T-2.json action T-2-a2: recorded_literal: line 4: the dict key "T-2" is the recorded input issue_id of this run`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout = %s\nwant %s", stdout, want)
		}
	}
	if diff := cmp.Diff(mined, snapshot(t, "bundle")); diff != "" {
		t.Errorf("a refused function changed the bundle (-before +after):\n%s", diff)
	}
	if p := (*prompts)[0]; !strings.Contains(p, "Flaky settlement test") || strings.Contains(p, "Slow checkout") {
		t.Errorf("the prompt must show T-1 and T-2 and withhold T-3: %s", p)
	}
	var table struct {
		Withheld []string `json:"withheld"`
		Failures []struct {
			Code string `json:"code"`
		} `json:"failures"`
	}
	data, _ := os.ReadFile("table/step.json")
	if err := json.Unmarshal(data, &table); err != nil || len(table.Withheld) != 1 || table.Withheld[0] != "fixtures/T-3.json action T-3-a2" ||
		len(table.Failures) != 2 || table.Failures[0].Code != "recorded_literal" {
		t.Errorf("step.json = %s (%v)", data, err)
	}

	// A function right on every recorded run but not under a stated
	// invariant is refused, naming the input no trace held.
	answer = classifyCaseSensitive
	code, stdout, stderr = runCLI(t, append([]string{"synth", "step", "bundle", "--step", "2", "--out", "cased"}, invariants...)...)
	want := `  case_invariant_title fixtures/T-2.json action T-2-a2 with title "FLAKY SETTLEMENT TEST": got {"labels":["perf","sev/medium"]}, want {"labels":["flaky-test","sev/low"]}`
	if code != exitFailure || !strings.Contains(stdout, want) {
		t.Errorf("case-sensitive: exit %d\nstdout: %s\nstderr: %s\nwant %s", code, stdout, stderr, want)
	}
	if diff := cmp.Diff(mined, snapshot(t, "bundle")); diff != "" {
		t.Errorf("a refused function changed the bundle (-before +after):\n%s", diff)
	}

	// The general function is accepted under every invariant.
	answer = classifyRight
	code, stdout, stderr = runCLI(t, append([]string{"synth", "step", "bundle", "--step", "2"}, invariants...)...)
	if code != 0 || !strings.Contains(stdout, "verified on 3 recorded runs (1 withheld from the model) and 1 held-out runs") {
		t.Fatalf("general: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var step struct {
		Accepted   bool           `json:"accepted"`
		Checked    map[string]int `json:"checked"`
		Properties []string       `json:"properties"`
	}
	data, _ = os.ReadFile("bundle.synth/step-2/step.json")
	wantChecked := map[string]int{"examples": 2, "withheld": 1, "heldout": 1, "case_invariant_title": 6, "whitespace_invariant_title": 3, "opaque_id_issue_id": 3}
	if err := json.Unmarshal(data, &step); err != nil || !step.Accepted || !cmp.Equal(step.Checked, wantChecked) ||
		!cmp.Equal(step.Properties, []string{"case_invariant_title", "whitespace_invariant_title", "opaque_id_issue_id"}) {
		t.Errorf("step.json = %s (%v)", data, err)
	}
}
