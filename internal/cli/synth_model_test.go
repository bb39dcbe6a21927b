package cli

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openAIServer is a local OpenAI-compatible chat-completions server that
// answers every request with answer, and records the prompts it got.
func openAIServer(t *testing.T, answer func(prompt string) string) (*httptest.Server, *[]string) {
	t.Helper()
	var prompts []string
	srv := chatServer(t, func(req *chatRequest) chatReply {
		prompts = append(prompts, req.Prompt())
		return chatReply{Model: "local-coder-1", Content: answer(req.Prompt()), PromptTokens: 120, Completion: 30}
	})
	return srv, &prompts
}

func TestSynthRunWithModel(t *testing.T) {
	srv, prompts := openAIServer(t, func(string) string {
		return "Sure.\n```python\ndef fit_and_eval(data):\n    return {\"total\": sum(data)}\n```\n"
	})
	dir := t.TempDir()
	files := map[string]string{
		"crystallize.toml": "[models.default]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "\"\nmodel = \"local-coder-1\"\n",
		"experiment.toml": `[claim]
id = "sum-invariant"
text = "Sum should be invariant to row permutation"
[[spec.properties]]
name = "perm"
transform = "permute_rows"
metric = "total"
[code]
model = "default"
prompt = "Write a function that sums the rows."
[data]
value = [1, 2, 3, 4, 5]
[[hypotheses]]
name = "metamorphic_check"
verifier = "metamorphic"
`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "ev")
	code, stdout, stderr := runCLI(t, "synth", "run", filepath.Join(dir, "experiment.toml"), "--config", filepath.Join(dir, "crystallize.toml"), "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "baseline: {'total': [15], 'perm_pass': [True]}") {
		t.Errorf("stdout = %s", stdout)
	}
	if len(*prompts) != 1 || !strings.Contains((*prompts)[0], "def fit_and_eval(data):") || !strings.Contains((*prompts)[0], "Do not use load()") {
		t.Errorf("prompts = %q", *prompts)
	}
	data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		ModelCalls []struct {
			Model        string `json:"model"`
			Key          string `json:"key"`
			InputTokens  int    `json:"input_tokens"`
			OutputTokens int    `json:"output_tokens"`
			PromptSHA256 string `json:"prompt_sha256"`
		} `json:"model_calls"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.ModelCalls) != 1 || m.ModelCalls[0].Model != "local-coder-1" || m.ModelCalls[0].Key != "default" || m.ModelCalls[0].InputTokens != 120 || m.ModelCalls[0].OutputTokens != 30 || len(m.ModelCalls[0].PromptSHA256) != 64 {
		t.Errorf("model calls = %+v", m.ModelCalls)
	}

	// Without a configured model the experiment cannot synthesize (exit 1).
	code, _, stderr = runCLI(t, "synth", "run", filepath.Join(dir, "experiment.toml"), "--config", filepath.Join(dir, "none.toml"), "--out", out)
	if code != exitUsage || !strings.Contains(stderr, "none.toml") {
		t.Errorf("missing config: exit %d, stderr %s", code, stderr)
	}
}
