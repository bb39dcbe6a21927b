package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

// TestRuntimeHints: the runtime's errors say what is wrong and which
// remedy applies, never a flag; the command line words the remedy as its
// flags, right after the message it belongs to, on the line it prints.
func TestRuntimeHints(t *testing.T) {
	dir := t.TempDir()
	star := filepath.Join(dir, "classify.star")
	src := "def classify(ctx, ticket):\n    return ctx.model(\"classify\", inputs = {\"ticket\": ticket})\n"
	if err := os.WriteFile(star, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crystallize.toml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, nil, star, "--state-dir", filepath.Join(dir, "state"), "--config", cfg, "--param", "ticket=t1")
	want := `model steps "classify" have no provider; configure [models.default] (or [models.<step>]) in crystallize.toml, or use --dry-run`
	if code != exitFailure || !strings.Contains(stderr, want) {
		t.Errorf("run without a model provider = %d, stderr %q; want the --dry-run hint after the message: %s", code, stderr, want)
	}

	_, err := runner.Run(context.Background(), mustLoad(t, star), runner.Params{"ticket": "t1"}, runner.Options{StateDir: filepath.Join(dir, "state"), RunID: "r1"})
	if err == nil || strings.Contains(err.Error(), "--") {
		t.Errorf("runtime error %v; want one that names no flag", err)
	}
}

// TestWithHints: a hint follows its own error's message, wherever that
// stands in a wrapped or joined error, and the chain is kept.
func TestWithHints(t *testing.T) {
	notReady := &runner.RemedyError{Err: fmt.Errorf("%w: status needs_approval", runner.ErrNotReady), Remedy: runner.RemedyAdmit}
	ledger := &runner.RemedyError{Err: errors.New("approval not authenticated: no key"), Remedy: runner.RemedyApprove, StateDir: "st"}
	err := fmt.Errorf("running wf: %w", errors.Join(notReady, errors.New("other problem"), ledger))
	got := withHints(err)
	want := "running wf: bundle is not ready to run: status needs_approval; approve it (crystallize approve), rehearse it with --dry-run, or pass --allow-unapproved\n" +
		"other problem\napproval not authenticated: no key; approve the bundle with crystallize approve --state-dir st"
	if got.Error() != want {
		t.Errorf("withHints =\n%s\nwant\n%s", got, want)
	}
	if !errors.Is(got, runner.ErrNotReady) {
		t.Error("the hinted error lost its chain")
	}
	plain := errors.New("plain")
	if withHints(plain) != plain {
		t.Error("an error without a remedy was changed")
	}
}

// TestWithHintsRepeated: when the same refusal is joined twice, each
// occurrence of its message gets its own hint, rather than the first
// getting both.
func TestWithHintsRepeated(t *testing.T) {
	refusal := func() error {
		return &runner.RemedyError{Err: errors.New("approval not authenticated: no key"), Remedy: runner.RemedyApprove, StateDir: "st"}
	}
	err := errors.Join(refusal(), errors.New("between"), refusal())
	hint := "; approve the bundle with crystallize approve --state-dir st"
	want := "approval not authenticated: no key" + hint + "\nbetween\napproval not authenticated: no key" + hint
	if got := withHints(err).Error(); got != want {
		t.Errorf("withHints =\n%s\nwant\n%s", got, want)
	}
	wrapped := fmt.Errorf("step 2: %w", errors.Join(refusal(), refusal()))
	want = "step 2: approval not authenticated: no key" + hint + "\napproval not authenticated: no key" + hint
	if got := withHints(wrapped).Error(); got != want {
		t.Errorf("withHints(wrapped) =\n%s\nwant\n%s", got, want)
	}
}

func mustLoad(t *testing.T, target string) *runner.Workflow {
	t.Helper()
	w, err := runner.Load(target)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestRunJSONHints: the error of a run's --json summary carries the same
// hint as the line on stderr, as it did when the runtime wrote it.
func TestRunJSONHints(t *testing.T) {
	dir := t.TempDir()
	star := filepath.Join(dir, "wf.star")
	if err := os.WriteFile(star, []byte("def wf(ctx):\n    ctx.approve(\"merge\", prompt = \"Merge?\")\n    return \"merged\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "crystallize.toml")
	if err := os.WriteFile(cfg, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	code, stdout, stderr := runCmd(t, nil, star, "--state-dir", state, "--config", cfg, "--json")
	var sum struct {
		RunID string `json:"run_id"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("run --json = %d: %v\n%s%s", code, err, stdout, stderr)
	}
	want := "approval pending: boundary merge; continue with crystallize resume " + sum.RunID + " --state-dir " + state + " --approve merge (or --reject merge)"
	if code != exitFailure || sum.Error != want || !strings.Contains(stderr, want) {
		t.Errorf("run --json = %d, error %q, stderr %q; want %q in both", code, sum.Error, stderr, want)
	}
}

// TestStageHints: the stages' errors name no flag; the command line adds
// its flags after their messages.
func TestStageHints(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{
			fmt.Errorf("bounded synthesis: %w", fmt.Errorf("model %q: %w", "coder", pipeline.ErrNoModelConfig)),
			`bounded synthesis: model "coder": no configuration; name one with --config or create crystallize.toml`,
		},
		{
			fmt.Errorf("mining: %w", &pipeline.HoldoutTooLargeError{Held: 2, Eligible: 4, MinExamples: 3}),
			"mining: holding out 2 of 4 eligible traces leaves 2 to mine, fewer than the 3 examples a procedure needs (--min-examples)",
		},
		{
			&pipeline.WorkflowClashError{Path: "out/wf.star"},
			"generating workflows: out/wf.star would be written twice (--out and a candidate's workflow)",
		},
		{
			&registry.AnswerError{Item: 3, Need: registry.ItemDecisionNeeded, Options: []string{"JWT", "sessions"}},
			"answer does not fit the item: item 3 asks for a decision; answer --decide with one of JWT, sessions",
		},
		{
			&registry.AnswerError{Item: 4, Need: registry.ItemApprovalRequired},
			"answer does not fit the item: item 4 asks for an approval; answer --approve or --reject",
		},
		{
			&registry.AnswerError{Item: 5, Need: registry.ItemInfo},
			"answer does not fit the item: item 5 is a notification; it asks nothing, --dismiss marks it read",
		},
	} {
		if strings.Contains(tc.err.Error(), "--") {
			t.Errorf("stage error %q names a flag", tc.err)
		}
		if got := withHints(tc.err).Error(); got != tc.want {
			t.Errorf("withHints(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
