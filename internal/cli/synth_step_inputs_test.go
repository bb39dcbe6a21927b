package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// triageInputsTrace is triageTrace in the trace format's other shape: the
// model call gets its data in inputs, not parameters, and the title it
// classifies is the one step 1 returned.
func triageInputsTrace(id, title string, labels []string) string {
	l, _ := json.Marshal(labels)
	return fmt.Sprintf(`{"version": 1, "id": %[1]q, "actions": [
  {"id": "%[1]s-a1", "kind": "external_api_call", "name": "tracker.get_issue", "parameters": {"issue_id": "%[1]s"}, "output": {"title": %[2]q}, "capabilities": ["tracker.read"]},
  {"id": "%[1]s-a2", "kind": "model_call", "name": "classify_issue", "inputs": {"title": %[2]q}, "output": {"labels": %[3]s}},
  {"id": "%[1]s-a3", "kind": "external_api_call", "name": "tracker.set_labels", "parameters": {"issue_id": "%[1]s", "labels": %[3]s}, "capabilities": ["tracker.write"], "side_effects": [{"kind": "issue_update", "target": "tracker/labels", "capability": "tracker.write", "mutation": "update"}]}
]}`, id, title, l)
}

// TestModelStepInputs: a model call's inputs are its arguments as a tool
// call's parameters are. The title step 1 returned reaches the model in
// the workflow and in a dry run, and synth step checks a function on the
// inputs the traces recorded: it accepts a right one and refuses a wrong
// one, naming the run.
func TestModelStepInputs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"traces/1.json":  triageInputsTrace("T-1", "Refund webhook returns 500", []string{"bug", "sev/high"}),
		"traces/2.json":  triageInputsTrace("T-2", "Flaky settlement test", []string{"flaky-test", "sev/low"}),
		"traces/3.json":  triageInputsTrace("T-3", "Slow checkout page returns 500 on retry", []string{"bug", "sev/high"}),
		"traces/4.json":  triageInputsTrace("T-4", "Search is slow", []string{"perf", "sev/medium"}),
		"heldout/5.json": triageInputsTrace("T-5", "Ledger API 500s under load", []string{"bug", "sev/high"}),
		"run.toml": "[grants]\ncapabilities = [\"tracker.read\", \"tracker.write\"]\n" +
			"[tools.\"tracker.get_issue\"]\ncommand = [\"./get.sh\", \"{issue_id}\"]\ncapability = \"tracker.read\"\n" +
			"[tools.\"tracker.set_labels\"]\ncommand = [\"./set.sh\", \"{issue_id}\", \"{labels}\"]\ncapability = \"tracker.write\"\n",
	}
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mine := []string{"mine", "--from", "traces", "--shadow-from", "heldout", "--workflow-name", "triage", "--bundle", "bundle"}
	if code, stdout, stderr := runCLI(t, mine...); code != 0 || !strings.Contains(stdout, "1/1 held-out traces pass") {
		t.Fatalf("mine: exit %d\n%s\n%s", code, stdout, stderr)
	}
	wf, err := os.ReadFile("bundle/workflow.star")
	if err != nil {
		t.Fatal(err)
	}
	// The call spans lines when it also carries the output schema.
	if want := "step2 = ctx.model(\n        \"classify_issue\",\n        inputs = {\"title\": step1[\"title\"]},"; !strings.Contains(string(wf), want) {
		t.Fatalf("the workflow does not pass step 1's title to the model; want %s in:\n%s", want, wf)
	}

	// The task plan of the bundle says where the model step's input
	// comes from.
	code, stdout, stderr := runCLI(t, "plan", "from-bundle", "bundle")
	if want := `arguments: title={{steps.1.output:$.title}}`; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("plan from-bundle: exit %d, stderr %s; want %s in:\n%s", code, stderr, want, stdout)
	}

	code, stdout, stderr = runCLI(t, "run", "bundle", "--config", "run.toml", "--dry-run", "--param", "issue_id=T-9", "--json")
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var dry struct {
		Calls []struct {
			Step      int            `json:"step"`
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		} `json:"dry_run_calls"`
	}
	if err := json.Unmarshal([]byte(stdout), &dry); err != nil {
		t.Fatalf("run --json: %v\n%s", err, stdout)
	}
	var shown any
	for _, c := range dry.Calls {
		if c.Step == 2 && c.Tool == "classify_issue" {
			shown = c.Arguments["inputs"]
		}
	}
	if got, _ := json.Marshal(shown); string(got) != `{"title":"\u003cdry-run: step 1 title\u003e"}` {
		t.Errorf("dry run shows the model step's inputs as %s, want step 1's title; calls %+v", got, dry.Calls)
	}

	answer := classifyRight
	srv, prompts := openAIServer(t, func(string) string { return answer })
	cfg := "[models.default]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"local-coder-1\"\n"
	if err := os.WriteFile("crystallize.toml", []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "synth", "step", "bundle", "--step", "2", "--out", "right")
	if code != 0 || !strings.Contains(stdout, "verified on 4 recorded runs (1 withheld from the model) and 1 held-out runs") {
		t.Fatalf("right function: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if len(*prompts) != 1 || !strings.Contains((*prompts)[0], `"title":"Slow checkout page returns 500 on retry"`) {
		t.Errorf("the prompt must show the recorded inputs: %q", *prompts)
	}

	if err := os.RemoveAll("bundle"); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, mine...); code != 0 {
		t.Fatalf("mine again: exit %d\n%s\n%s", code, stdout, stderr)
	}
	answer = classifyWrong
	code, stdout, stderr = runCLI(t, "synth", "step", "bundle", "--step", "2", "--out", "wrong")
	want := `  examples fixtures/T-3.json action T-3-a2: got {"labels":["perf","sev/medium"]}, want {"labels":["bug","sev/high"]}`
	if code != exitFailure || !strings.Contains(stdout, want) || strings.Count(stdout, "\n  ") != 1 {
		t.Errorf("wrong function: exit %d, stdout %s, stderr %s\nwant exit 1 and the one failing run: %s", code, stdout, stderr, want)
	}
}
