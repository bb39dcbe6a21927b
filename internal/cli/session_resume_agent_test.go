package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/session"
)

// resumableLog is a paused session log with two phases, resuming at the
// second.
const resumableLog = `---
type: session
session_id: 2026-02-01-bakery-release
status: paused
tokens_used: 1000
resume_point: phase-2
---

# Release the bakery app

## Build @builder

**Tool calls:**
- ` + "`go build ./...`" + ` → exit 0

> [!decision]
> Ship without the oven metrics.

## Publish @builder

**Tool calls:**
- ` + "`git tag v1.2.0`" + ` → exit 0
`

// TestSessionResumeAgent continues a session log with a model served by a
// local OpenAI-compatible server: the model gets the context pack, and
// the log gains a phase with the answer and a resume marker, moves its
// resume point there, and still passes session lint. The answer's own
// "## " line and callout stay inside the answer, and its secret is
// redacted.
func TestSessionResumeAgent(t *testing.T) {
	var prompt string
	srv := chatServer(t, func(req *chatRequest) chatReply {
		if req.Path != "/v1/chat/completions" || len(req.Messages) != 2 {
			t.Errorf("request %s with %d messages, want /v1/chat/completions with a system and a user message", req.Path, len(req.Messages))
		}
		prompt = req.Prompt()
		return chatReply{Model: "local-7b", Content: "Pushed the tag.\n\n## Not a phase\n\n> [!decision]\n> not a decision of the log\n\ntoken ghp_Zq8Xr2Lm5Nb7Vc1Kd4Hs6Jt9Wy3Pf0Ge2Ua8\n", PromptTokens: 300, Completion: 20}
	})

	dir := t.TempDir()
	file := filepath.Join(dir, "release.md")
	if err := os.WriteFile(file, []byte(resumableLog), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crystallize.toml")
	if err := os.WriteFile(cfg, []byte("[models.reviewer]\nprovider = \"openai\"\nbase_url = \""+srv.URL+"/v1\"\nmodel = \"local-7b\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := codifyCLI(t, nil, "session", "resume", file, "--agent", "reviewer", "--config", cfg)
	if code != 0 {
		t.Fatalf("session resume --agent = %d\n%s", code, out)
	}
	for _, want := range []string{"# Resume 2026-02-01-bakery-release", "Resume at: phase 2, `publish` (Publish)", "Ship without the oven metrics."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the model was not given the context pack: no %q in\n%s", want, prompt)
		}
	}
	if !strings.HasPrefix(out, "Continued "+file+" with reviewer: phase continuation\n") {
		t.Errorf("output:\n%s", out)
	}

	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{
		"resume_point: continuation\n",
		"tokens_used: 1320\n",
		"  - reviewer\n",
		"\n## Continuation @reviewer\n\n> [!resume] publish\n> Resumed at phase 2, `publish` (Publish); the context pack went to reviewer (local-7b) at ",
		"\n> [!answer] @reviewer (local-7b)\n> Pushed the tag.\n>\n> ## Not a phase\n>\n> > [!decision]\n> > not a decision of the log\n>\n> token [redacted:github]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasPrefix(got, resumableLog[:strings.Index(resumableLog, "tokens_used")]) {
		t.Errorf("the log's first lines changed:\n%s", got)
	}
	problems, err := session.Lint(file)
	if err != nil || len(problems) > 0 {
		t.Fatalf("session lint: %v %v\n%s", err, problems, got)
	}
	s, err := session.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Phases); n != 3 {
		t.Errorf("%d phases, want 3", n)
	}
	// The next resume starts at the continuation, with the phases before
	// it completed.
	pack, err := session.Resume(s, session.ResumeOptions{})
	if err != nil || pack.ResumeAt == nil || pack.ResumeAt.ID != "continuation" || len(pack.Completed) != 2 || len(pack.Decisions) != 1 {
		t.Errorf("resume after the continuation: %+v, %v", pack, err)
	}

	// A second continuation is a phase of its own, and an unknown agent a
	// usage error that leaves the log alone.
	if code, out := codifyCLI(t, nil, "session", "resume", file, "--agent", "reviewer", "--config", cfg); code != 0 || !strings.Contains(out, "phase continuation-2\n") {
		t.Errorf("second continuation = %d\n%s", code, out)
	}
	before, _ := os.ReadFile(file)
	if code, out := codifyCLI(t, nil, "session", "resume", file, "--agent", "nobody", "--config", cfg); code != 2 || !strings.Contains(out, "has no [models.nobody]") {
		t.Errorf("unknown agent = %d\n%s", code, out)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Errorf("a failed continuation changed the log")
	}
}

// TestSessionResumeAgentCommand continues a session with an agent's
// command line: the pack on its stdin, its stdout the answer.
func TestSessionResumeAgentCommand(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "release.md")
	if err := os.WriteFile(file, []byte(resumableLog), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crystallize.toml")
	script := `grep -c "Resume at: phase 2" | sed "s/^/pack lines seen: /"`
	if err := os.WriteFile(cfg, []byte("[tools.\"helper\"]\ncommand = [\"sh\", \"-c\", '"+script+"']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := codifyCLI(t, nil, "session", "resume", file, "--agent", "helper", "--config", cfg)
	if code != 0 {
		t.Fatalf("session resume --agent = %d\n%s", code, out)
	}
	data, _ := os.ReadFile(file)
	if want := "> [!answer] @helper (sh)\n> pack lines seen: 1\n"; !strings.Contains(string(data), want) {
		t.Errorf("the log lacks %q:\n%s", want, data)
	}
}
