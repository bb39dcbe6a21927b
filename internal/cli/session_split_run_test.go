package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/session"
)

// TestSessionSplitRun delegates a split to models served by a local
// OpenAI-compatible server: each group goes to its tier's model with its
// own phases only, the log gains one phase per group, in order, and
// still passes session lint. A model that fails, or a tier with no
// model, leaves the log as it was.
func TestSessionSplitRun(t *testing.T) {
	var mu sync.Mutex
	prompts := map[string]string{} // model → prompt
	fail := false
	srv := chatServer(t, func(req *chatRequest) chatReply {
		if req.Path != "/v1/chat/completions" {
			t.Errorf("request %s, want /v1/chat/completions", req.Path)
		}
		mu.Lock()
		prompts[req.Model] = req.Prompt()
		failNow := fail && req.Model == "small-1b"
		mu.Unlock()
		if failNow {
			return chatReply{Status: http.StatusServiceUnavailable, Content: "overloaded"}
		}
		return chatReply{Model: req.Model, Content: "Done by " + req.Model + ".\n\n## Not a phase\n", PromptTokens: 100, Completion: 10}
	})

	dir := t.TempDir()
	file := filepath.Join(dir, "release.md")
	if err := os.WriteFile(file, []byte(resumableLog), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crystallize.toml")
	models := ""
	for tier, model := range map[string]string{"fast": "small-1b", "strong": "big-70b"} {
		models += "[models." + tier + "]\nprovider = \"openai\"\nbase_url = \"" + srv.URL + "/v1\"\nmodel = \"" + model + "\"\n"
	}
	if err := os.WriteFile(cfg, []byte(models), 0o644); err != nil {
		t.Fatal(err)
	}

	// The build phase holds a [!decision] (tier strong), publish does not
	// (tier fast); ten tokens make each phase a group.
	code, out := codifyCLI(t, nil, "session", "split", file, "--max-tokens", "10", "--run", "--config", cfg)
	if code != 0 {
		t.Fatalf("session split --run = %d\n%s", code, out)
	}
	if want := "group 1 (build, tier strong) → strong: phase delegated-group-1\ngroup 2 (publish, tier fast) → fast: phase delegated-group-2\n"; out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if p := prompts["big-70b"]; !strings.Contains(p, "## Build @builder") || strings.Contains(p, "## Publish") {
		t.Errorf("the strong model was not given exactly its group:\n%s", p)
	}
	if p := prompts["small-1b"]; !strings.Contains(p, "## Publish @builder") || strings.Contains(p, "## Build") {
		t.Errorf("the fast model was not given exactly its group:\n%s", p)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{
		"tokens_used: 1220\n",
		"  - strong\n  - fast\n",
		"\n## Delegated group 1 @strong\n\n> [!delegated] build\n> Group 1 of 2 (phases `build`, ~",
		" tokens, tier strong) went to strong (big-70b) at ",
		"\n> [!answer] @strong (big-70b)\n> Done by big-70b.\n>\n> ## Not a phase\n",
		"\n## Delegated group 2 @fast\n\n> [!delegated] publish\n",
		"\n> [!answer] @fast (small-1b)\n> Done by small-1b.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	if problems, err := session.Lint(file); err != nil || len(problems) > 0 {
		t.Fatalf("session lint: %v %v\n%s", err, problems, got)
	}
	s, err := session.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Phases); n != 4 {
		t.Errorf("%d phases, want 2 and one per group", n)
	}

	// The second group's model fails after the first answered: the log
	// is left as it was.
	if err := os.WriteFile(file, []byte(resumableLog), 0o644); err != nil {
		t.Fatal(err)
	}
	fail = true
	code, out = codifyCLI(t, nil, "session", "split", file, "--max-tokens", "10", "--run", "--config", cfg)
	if code != 1 || !strings.Contains(out, "group 2") || !strings.Contains(out, "503") {
		t.Errorf("failing model = %d\n%s", code, out)
	}
	if after, _ := os.ReadFile(file); string(after) != resumableLog {
		t.Errorf("a failed run changed the log:\n%s", after)
	}

	// A tier without a model is a usage error before any model is asked.
	fail = false
	clear(prompts)
	if err := os.WriteFile(cfg, []byte(strings.Split(models, "[models.")[0]+"[models.fast]\nprovider = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"small-1b\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = codifyCLI(t, nil, "session", "split", file, "--max-tokens", "10", "--run", "--config", cfg)
	if code != 2 || !strings.Contains(out, "group 1 (tier strong)") || !strings.Contains(out, "no [models.strong]") {
		t.Errorf("tier without a model = %d\n%s", code, out)
	}
	if len(prompts) != 0 {
		t.Errorf("models were asked before every tier had one: %v", prompts)
	}
	if after, _ := os.ReadFile(file); string(after) != resumableLog {
		t.Errorf("a refused run changed the log:\n%s", after)
	}
}
