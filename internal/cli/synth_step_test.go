package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/runtime"
)

// noModel fails the test if the workflow calls a model.
type noModel struct{ t *testing.T }

func (m noModel) Complete(context.Context, runtime.ModelRequest) (*runtime.ModelResponse, error) {
	m.t.Error("the workflow called a model")
	return nil, fmt.Errorf("no model")
}

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
	if !strings.Contains(string(before), `ctx.model("classify_issue"`) {
		t.Fatalf("the mined workflow has no classify_issue model call:\n%s", before)
	}

	answer := classifyRight
	srv, prompts := openAIServer(t, func(string) string { return answer })
	cfg := "[models.default]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"local-coder-1\"\n"
	if err := os.WriteFile("crystallize.toml", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	// A correct function replaces the model call.
	code, stdout, stderr := runCLI(t, "synth", "step", "bundle", "--step", "2")
	if code != 0 {
		t.Fatalf("synth step: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "step 2 classify_issue: accepted classify") || !strings.Contains(stdout, "verified on 4 recorded and 1 held-out runs") {
		t.Errorf("stdout = %s", stdout)
	}
	if len(*prompts) != 1 || !strings.Contains((*prompts)[0], `"title":"Search is slow"`) || strings.Contains((*prompts)[0], "Ledger") {
		t.Errorf("the prompt must hold the recorded runs and not the held-out one: %q", *prompts)
	}
	wf, err := os.ReadFile("bundle.synth/step-2/workflow.star")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(wf), "ctx.model(") || !strings.Contains(string(wf), "classify({") {
		t.Errorf("new workflow still calls the model or not the function:\n%s", wf)
	}
	if err := codegen.Check("workflow.star", wf, "triage"); err != nil {
		t.Errorf("new workflow does not check: %v", err)
	}
	// The new workflow runs without a model: the labels come from the
	// function.
	w, err := runtime.Load("bundle.synth/step-2/workflow.star")
	if err != nil {
		t.Fatal(err)
	}
	var labelled any
	res, err := runtime.Run(context.Background(), w, runtime.Params{"issue_id": "T-9"}, runtime.Options{
		Config:          &runtime.Config{Dir: dir, Grants: runtime.Grants{Capabilities: []string{"tracker.read", "tracker.write", "model.invoke"}}},
		StateDir:        filepath.Join(dir, "state"),
		AllowUnapproved: true,
		Tools: map[string]runtime.Tool{
			"tracker.get_issue": {Capabilities: []string{"tracker.read"}, Func: func(_ context.Context, args map[string]any) (any, error) {
				return map[string]any{"title": "Payments API returns 500"}, nil
			}},
			"tracker.set_labels": {Capabilities: []string{"tracker.write"}, Func: func(_ context.Context, args map[string]any) (any, error) {
				labelled = args["labels"]
				return map[string]any{"updated": true}, nil
			}},
		},
		Model: noModel{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ModelCalls != 0 || res.Error != "" || fmt.Sprint(labelled) != "[bug sev/high]" {
		t.Errorf("run: model calls %d, error %q, labels %v; want 0, none, [bug sev/high]", res.ModelCalls, res.Error, labelled)
	}

	after, _ := os.ReadFile("bundle/workflow.star")
	if string(after) != string(before) {
		t.Error("synth step changed the bundle's workflow")
	}
	var step struct {
		Accepted bool `json:"accepted"`
		Call     struct {
			Model        string `json:"model"`
			PromptSHA256 string `json:"prompt_sha256"`
		} `json:"model_call"`
		SHA256 string `json:"code_sha256"`
	}
	data, _ := os.ReadFile("bundle.synth/step-2/step.json")
	if err := json.Unmarshal(data, &step); err != nil || !step.Accepted || step.Call.Model != "local-coder-1" || len(step.SHA256) != 64 {
		t.Errorf("step.json = %s (%v)", data, err)
	}

	// A subtly wrong function is refused, naming the run it gets wrong.
	answer = classifyWrong
	code, stdout, stderr = runCLI(t, "synth", "step", "bundle", "--step", "2", "--out", "wrong")
	if code != exitFailure {
		t.Fatalf("wrong function: exit %d, want 1\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	want := `  examples fixtures/T-3.json action T-3-a2: got {"labels":["perf","sev/medium"]}, want {"labels":["bug","sev/high"]}`
	if !strings.Contains(stdout, want) || strings.Count(stdout, "\n  ") != 1 {
		t.Errorf("stdout = %s\nwant the one failing run: %s", stdout, want)
	}
	if _, err := os.Stat("wrong/workflow.star"); err == nil {
		t.Error("a refused function produced a workflow")
	}

	// Steps that are not model calls are refused before any model call.
	code, _, stderr = runCLI(t, "synth", "step", "bundle", "--step", "1")
	if code != exitUsage || !strings.Contains(stderr, "not a model call") {
		t.Errorf("step 1: exit %d, stderr %s", code, stderr)
	}
}
