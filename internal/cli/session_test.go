package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/session"
)

// sessionCmd runs "crystallize session args..." in-process under a root of
// its own (cli.go registers the command in the real tree) and returns the
// exit code, stdout and stderr, as Main would.
func sessionCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }}
	root := &cobra.Command{Use: "crystallize", SilenceUsage: true, SilenceErrors: true}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newSessionCmd(e))
	root.SetArgs(append([]string{"session"}, args...))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	code := exitOK
	if err := root.ExecuteContext(context.Background()); err != nil {
		printError(&stderr, err)
		var ue usageError
		var ee exitError
		switch {
		case errors.As(err, &ee):
			code = ee.code
		case errors.As(err, &ue), isCobraUsage(err):
			code = exitUsage
		default:
			code = exitFailure
		}
	}
	return code, stdout.String(), stderr.String()
}

const examples = "../../examples/sessions/"

func TestSessionLint(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.md")
	err := os.WriteFile(bad, []byte("---\ntype: session\nstatus: active\n---\n\n## P\n\n**Tool calls:**\n- `grep x` 12 matches\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"lint", examples + "2026-01-12-release-notes.md", examples + "2026-01-14-flaky-test.md"}, 0, "", ""},
		{[]string{"lint", bad}, 1, "", "crystallize: session lint: 2 problems\n  " + bad + ":2: missing session_id\n  " + bad + ":9: tool call without result arrow\n"},
		{[]string{"lint"}, 2, "", "crystallize: requires at least 1 arg(s), only received 0\n"},
	}
	for _, tt := range tests {
		code, stdout, stderr := sessionCmd(t, tt.args...)
		if code != tt.code || stdout != tt.stdout || stderr != tt.stderr {
			t.Errorf("session %q = %d, %q, %q; want %d, %q, %q", tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}

	code, stdout, _ := sessionCmd(t, "lint", "--json", examples+"2026-01-14-flaky-test.md", bad)
	var report session.LintReport
	if err := json.Unmarshal([]byte(stdout), &report); err != nil || code != 1 {
		t.Fatalf("lint --json = %d, %v\n%s", code, err, stdout)
	}
	want := []session.LintFile{
		{File: examples + "2026-01-14-flaky-test.md", Problems: []session.LintProblem{}},
		{File: bad, Problems: []session.LintProblem{{Line: 2, Message: "missing session_id"}, {Line: 9, Message: "tool call without result arrow"}}},
	}
	if len(report.Files) != 2 || report.Files[0].File != want[0].File || len(report.Files[0].Problems) != 0 ||
		len(report.Files[1].Problems) != 2 || report.Files[1].Problems[1] != want[1].Problems[1] {
		t.Errorf("lint --json = %+v, want %+v", report.Files, want)
	}
}

func TestSessionResume(t *testing.T) {
	code, stdout, stderr := sessionCmd(t, "resume", examples+"2026-01-12-release-notes.md")
	if code != 0 {
		t.Fatalf("resume = %d, %s", code, stderr)
	}
	for _, want := range []string{
		"Resume at: phase 2, `draft-notes` (Draft notes)\n",
		"  nested session: Classify merged pull requests for v1.4.0 (completed)\n",
		"  handled by: user: \"Link to the GitHub release page instead of the changelog anchor.\"\n",
		"- Ask the API owners to review the breaking changes (pending)\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("resume output lacks %q:\n%s", want, stdout)
		}
	}

	code, stdout, _ = sessionCmd(t, "resume", "--json", "--phase", "phase-1", examples+"2026-01-12-release-notes.md")
	var pack struct {
		ResumeAt struct{ ID string } `json:"resume_at"`
		Later    int                 `json:"later_phases"`
	}
	if err := json.Unmarshal([]byte(stdout), &pack); err != nil || code != 0 || pack.ResumeAt.ID != "collect-changes" || pack.Later != 1 {
		t.Errorf("resume --json --phase phase-1 = %d, %+v, %v", code, pack, err)
	}

	code, _, stderr = sessionCmd(t, "resume", "--phase", "nope", examples+"2026-01-12-release-notes.md")
	if want := "crystallize: --phase: no such phase: nope (phases: collect-changes, draft-notes)\n"; code != 2 || stderr != want {
		t.Errorf("resume --phase nope = %d, %q, want 2, %q", code, stderr, want)
	}
}

// TestSessionResumeRun resumes a suspended workflow run from its
// session.md: exit codes and the state directory taken from the path.
func TestSessionResumeRun(t *testing.T) {
	ws := t.TempDir()
	cfg := filepath.Join(ws, "crystallize.toml")
	star := filepath.Join(ws, "w.star")
	if err := os.WriteFile(cfg, []byte("[tools.\"mark\"]\ncommand = [\"sh\", \"-c\", \"echo \\\"$0\\\" >> marks.txt\", \"{step}\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(star, []byte("def wf(ctx, name):\n    ctx.tool(\"mark\", step = \"before-\" + name)\n    ctx.approve(\"merge\")\n    ctx.tool(\"mark\", step = \"after-\" + name)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(ws, "elsewhere")
	code, stdout, stderr := runCmd(t, nil, star, "--config", cfg, "--state-dir", state, "--param", "name=x", "--json")
	var sum struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || code != exitFailure {
		t.Fatalf("run = %d, %v\n%s%s", code, err, stdout, stderr)
	}
	log := filepath.Join(state, "runs", sum.RunID, "session.md")

	for _, tc := range []struct {
		args   []string
		code   int
		stdout string // a line it must hold
		stderr string
	}{
		{[]string{"resume", log}, exitFailure, "Run " + sum.RunID + " of wf: pending_approval\n", "crystallize: approval pending: boundary merge"},
		{[]string{"resume", "--phase", "step-1", log}, exitUsage, "", "crystallize: --phase chooses where a context pack resumes; run " + sum.RunID + " continues at its pending approval\n"},
		{[]string{"resume", "--approve", "merge", "--reject", "merge", log}, exitUsage, "", "crystallize: boundary merge is both approved and rejected\n"},
		{[]string{"resume", "--approve", "merge", log}, exitOK, "Run " + sum.RunID + " of wf: completed\n", ""},
		{[]string{"resume", "--approve", "merge", log}, exitFailure, "", "crystallize: run " + sum.RunID + " already completed; nothing to resume\n"},
		{[]string{"resume", "--approve", "merge", examples + "2026-01-12-release-notes.md"}, exitUsage, "",
			"crystallize: --approve and --reject decide the approval a crystallize run waits for; " + examples + "2026-01-12-release-notes.md is not the session.md of a run (<state-dir>/runs/<run-id>/session.md)\n"},
	} {
		code, stdout, stderr := sessionCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.HasPrefix(stderr, tc.stderr) || tc.stderr == "" && stderr != "" {
			t.Errorf("session %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d, stdout holding %q, stderr starting %q", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "marks.txt")); string(b) != "before-x\nafter-x\n" {
		t.Errorf("marks = %q, want each step once", b)
	}

	// A session.md that only looks like a run's (not under runs/<id>/)
	// gets its context pack.
	other := filepath.Join(ws, "session.md")
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := sessionCmd(t, "resume", other); code != exitOK || !strings.Contains(stdout, "Workflow run of: wf\n") {
		t.Errorf("session resume of a copied run log = %d\n%s%s", code, stdout, stderr)
	}
}
