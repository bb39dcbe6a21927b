package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// rootWithPersona is the command tree with the persona command, whether or
// not newRoot registers it yet.
func rootWithPersona(e *env) *cobra.Command {
	root := newRoot(e)
	if c, _, err := root.Find([]string{"persona"}); err != nil || c == root {
		root.AddCommand(newPersonaCmd(e))
	}
	return root
}

// runPersonaArgs runs the command line args (starting with "persona") in
// process, as run does, and returns the exit code, stdout and stderr.
func runPersonaArgs(t *testing.T, getenv func(string) string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: getenv}
	code := runRoot(context.Background(), e, rootWithPersona(e), args)
	return code, stdout.String(), stderr.String()
}

// runRoot is run with a given command tree: it executes args and maps the
// error to an exit code and a message on stderr exactly as run does.
func runRoot(ctx context.Context, e *env, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	printError(e.stderr, err)
	var ue usageError
	var ee exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), isCobraUsage(err):
		return exitUsage
	}
	return exitFailure
}

func fixedEnv(name string) string {
	if name == "SOURCE_DATE_EPOCH" {
		return sourceDateEpoch
	}
	return ""
}

func TestPersonaCommand(t *testing.T) {
	history, err := filepath.Abs("../../examples/persona/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "B")
	code, stdout, stderr := runPersonaArgs(t, fixedEnv, "persona", "--history", history, "--persona", "merge_captain", "--bundle", out)
	if code != exitOK {
		t.Fatalf("persona proposed: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	first, _, _ := strings.Cut(stdout, "\n")
	if want := "Persona: merge_captain worker=conflict_repair decision=proposed examples=4 history_days=105"; first != want {
		t.Errorf("first line = %q, want %q", first, want)
	}
	for _, want := range []string{"warning unclean_records:", "Candidate: candidate_", "step=merge_captain_conflict_repair_step shadow=4/4", "Savings: model_calls=50 ", "Bundle: " + out + " (kind=candidate risk=medium promotion=blocked: heldout_required)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	var vout bytes.Buffer
	e := &env{stdout: &vout, stderr: &vout, getenv: fixedEnv}
	if code := runRoot(context.Background(), e, rootWithPersona(e), []string{"validate", out}); code != exitOK {
		t.Errorf("validate of the persona bundle: exit %d\n%s", code, vout.String())
	}
	vout.Reset()
	if code := runRoot(context.Background(), e, rootWithPersona(e), []string{"shadow", out}); code != exitOK {
		t.Errorf("shadow of the persona bundle: exit %d\n%s", code, vout.String())
	}
}

func TestPersonaJSON(t *testing.T) {
	history, err := filepath.Abs("../../examples/persona/history.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args     []string
		code     int
		decision string
		reasons  []string
	}{
		{[]string{"--persona", "merge_captain"}, exitOK, "proposed", []string{}},
		{[]string{"--persona", "merge_captain", "--min-examples", "5"}, exitFailure, "gated", []string{"too_few_examples"}},
		{[]string{"--persona", "merge_captain", "--hosted-history-days", "30"}, exitFailure, "gated", []string{"insufficient_history"}},
		{[]string{"--persona", "release_steward"}, exitFailure, "gated", []string{"too_few_examples", "insufficient_history"}},
		{[]string{"--persona", "nobody"}, exitFailure, "gated", []string{"no_records"}},
	}
	for _, tt := range tests {
		args := append([]string{"persona", "--json", "--history", history}, tt.args...)
		code, stdout, stderr := runPersonaArgs(t, fixedEnv, args...)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d\n%s", tt.args, code, tt.code, stderr)
		}
		var got struct {
			Decision string `json:"decision"`
			Reasons  []struct {
				Code string `json:"code"`
			} `json:"reasons"`
			CandidateID *string `json:"candidate_id"`
			Savings     *struct {
				ModelCallsAvoided int64 `json:"model_calls_avoided"`
			} `json:"savings"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%v: stdout is not JSON: %v\n%s", tt.args, err, stdout)
		}
		codes := []string{}
		for _, r := range got.Reasons {
			codes = append(codes, r.Code)
		}
		if got.Decision != tt.decision || strings.Join(codes, ",") != strings.Join(tt.reasons, ",") {
			t.Errorf("%v: decision %s reasons %v, want %s %v", tt.args, got.Decision, codes, tt.decision, tt.reasons)
		}
		if proposed := tt.decision == "proposed"; proposed != (got.CandidateID != nil) || proposed != (got.Savings != nil) {
			t.Errorf("%v: candidate_id %v savings %v for decision %s", tt.args, got.CandidateID, got.Savings, got.Decision)
		}
		if got.Savings != nil && got.Savings.ModelCallsAvoided != 50 {
			t.Errorf("%v: savings.model_calls_avoided = %d, want 50", tt.args, got.Savings.ModelCallsAvoided)
		}
	}
}

func TestPersonaUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"persona", "--persona", "p"}, "--history is required"},
		{[]string{"persona", "--history", "h"}, "--persona is required"},
		{[]string{"persona", "--history", "h", "--persona", "p", "--min-examples", "1"}, "--min-examples is 1"},
		{[]string{"persona", "--history", "h", "--persona", "p", "--hosted-history-days", "-1"}, "--hosted-history-days is -1"},
		{[]string{"persona", "--history", "h", "--persona", "p", "--min-hosted-history-days", "-2"}, "--min-hosted-history-days is -2"},
		{[]string{"persona", "--history", "h", "--persona", "p", "extra"}, "unknown command"},
	}
	for _, tt := range tests {
		code, _, stderr := runPersonaArgs(t, fixedEnv, tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d stderr %q, want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
