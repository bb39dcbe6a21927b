package mine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func stepsNamed(names ...string) []candidate.Step {
	steps := make([]candidate.Step, len(names))
	for i, n := range names {
		steps[i] = candidate.Step{Index: i + 1, Kind: trace.KindToolCall, Name: n}
	}
	return steps
}

func TestStepsName(t *testing.T) {
	for _, tc := range []struct {
		steps []string
		want  string
	}{
		{[]string{"git add", "git commit", "git push"}, "git_add_commit_push"},
		{[]string{"go mod tidy", "go test"}, "go_mod_tidy_test"},
		{[]string{"fs.edit", "git commit"}, "fs_edit_git_commit"},
		{[]string{"go test", "go test"}, "go_test"},
		{[]string{"git checkout", "go get", "go mod tidy", "go test", "git add", "git commit"}, "git_checkout_go_get_mod_tidy_test_git_add_commit"},
		// Too long for MaxNameLen: the first and last tools.
		{[]string{"kubectl apply", "kubectl rollout status", "helm upgrade install", "terraform plan", "terraform apply", "npm run deploy"}, "kubectl_apply_rollout_status_to_npm_run_deploy"},
		// A single tool whose name is too long is cut at a word.
		{[]string{"alpha bravo charlie delta echo foxtrot golf hotel india juliett"}, "alpha_bravo_charlie_delta_echo_foxtrot_golf"},
		{[]string{"", ""}, "tool_call"},
		{[]string{"for", "if"}, "for_if"},
	} {
		got := stepsName(stepsNamed(tc.steps...))
		if got != tc.want {
			t.Errorf("stepsName(%q) = %q, want %q", tc.steps, got, tc.want)
		}
		if len(got) > MaxNameLen || !candidate.IsIdentifier(got) {
			t.Errorf("stepsName(%q) = %q: longer than %d or not an identifier", tc.steps, got, MaxNameLen)
		}
	}
}

// A person's first prompt does not name the workflow: agent sessions are
// named after their steps and keep the prompt, whole, as the description.
func TestInferNameAgentSessionsUseSteps(t *testing.T) {
	prompt := "Please look at the failing CI job on the main branch, figure out why the integration tests under ./e2e time out, fix whatever is wrong, run the whole test suite again and then commit and push the fix with a good message"
	var traces []*trace.Trace
	for range 3 {
		traces = append(traces, &trace.Trace{Metadata: map[string]any{"agent": "claude-code", "goal": prompt}})
	}
	k := candidate.ClusterKey{Goal: prompt}
	steps := stepsNamed("go test", "fs.edit", "go test", "git add", "git commit", "git push")
	if got, want := inferName(k, steps, traces), "go_test_fs_edit_go_test_git_add_commit_push"; got != want {
		t.Errorf("inferName = %q, want %q", got, want)
	}
	ex := []match{{seq: 0, pos: []int32{0}}, {seq: 1, pos: []int32{0}}, {seq: 2, pos: []int32{0}}}
	for _, tr := range traces {
		tr.Actions = []trace.Action{{ID: "a"}}
	}
	if got := describe(k, "x", traces, traces, ex); got != prompt {
		t.Errorf("describe = %q, want the whole prompt", got)
	}
	// Prompts that differ: the first example's.
	traces[0].Metadata["goal"] = "Bump x"
	if got := describe(candidate.ClusterKey{}, "x", traces, traces, ex); got != "Bump x" {
		t.Errorf("describe = %q, want the first example's goal", got)
	}

	// A label a program set still names the candidate; a goal too long
	// for a name does not.
	labelled := []*trace.Trace{{Metadata: map[string]any{"goal": "release package maintenance"}}, {Metadata: map[string]any{"goal": "release package maintenance"}}}
	if got := inferName(candidate.ClusterKey{Goal: "release package maintenance"}, steps, labelled); got != "release_package_maintenance" {
		t.Errorf("inferName(label) = %q, want release_package_maintenance", got)
	}
	for _, tr := range labelled {
		tr.Metadata["goal"] = prompt
	}
	if got := inferName(candidate.ClusterKey{Goal: prompt}, steps, labelled); got != "go_test_to_git_push" {
		t.Errorf("inferName(long goal) = %q, want go_test_to_git_push", got)
	}
	if got := describe(candidate.ClusterKey{Goal: prompt}, "x", labelled, labelled, nil); got != "" {
		t.Errorf("describe(labelled) = %q, want empty: the label is the name", got)
	}
}

// Names of several candidates stay distinct and within MaxNameLen.
func TestUniqueNameBounded(t *testing.T) {
	taken := map[string]bool{}
	long := strings.Repeat("a", MaxNameLen-4) + "_bcd" // 48
	var got []string
	for range 12 {
		got = append(got, uniqueName(taken, long))
	}
	seen := map[string]bool{}
	for _, n := range got {
		if len(n) > MaxNameLen || seen[n] {
			t.Errorf("uniqueName gave %q (len %d), seen before: %v", n, len(n), seen[n])
		}
		seen[n] = true
	}
	if got[1] != strings.Repeat("a", MaxNameLen-4)+"_2" || got[11] != strings.Repeat("a", MaxNameLen-4)+"_12" {
		t.Errorf("uniqueName = %q, %q", got[1], got[11])
	}
}

// A procedure done in the middle of a session is described by the request
// typed last before its first step, not by the session's first prompt;
// a short answer ("continue") is not a request; of the examples'
// requests, the one that names the procedure's words wins.
func TestDescribeUsesTheRequestBeforeTheProcedure(t *testing.T) {
	session := func(prompts ...string) *trace.Trace {
		var list []any
		for i, p := range prompts {
			list = append(list, map[string]any{"timestamp": fmt.Sprintf("2026-01-02T10:0%d:00Z", i), "text": p})
		}
		return &trace.Trace{
			Metadata: map[string]any{"agent": "claude-code", "goal": prompts[0], trace.MetaPrompts: list},
			Actions: []trace.Action{
				{ID: "a1", Timestamp: "2026-01-02T10:00:30Z"},
				{ID: "a2", Timestamp: "2026-01-02T10:02:30Z"},
				{ID: "a3", Timestamp: "2026-01-02T10:02:40Z"},
			},
		}
	}
	traces := []*trace.Trace{
		session("Why does the login page hang?", "fix it please", "continue"),
		session("Refactor the parser", "now commit and push these changes", "ok"),
	}
	// Each example starts at a2, after the first two prompts and before
	// the third.
	ex := []match{{seq: 0, pos: []int32{1, 2}}, {seq: 1, pos: []int32{1, 2}}}
	if got, want := describe(candidate.ClusterKey{}, "git_add_commit_push", traces, traces, ex), "now commit and push these changes"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	// Only the first example: its last request before a2, not "continue"
	// (typed after) nor the session's first prompt.
	if got, want := describe(candidate.ClusterKey{}, "git_add_commit_push", traces, traces, ex[:1]), "fix it please"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	// No prompt log: the goal, as before.
	traces[0].Metadata[trace.MetaPrompts] = nil
	if got, want := describe(candidate.ClusterKey{}, "git_add_commit_push", traces, traces, ex[:1]), "Why does the login page hang?"; got != want {
		t.Errorf("describe without a prompt log = %q, want %q", got, want)
	}
}

// TestAskedBefore: the request that describes a procedure is the last
// prompt typed at or before its first step that is long enough to ask
// for something; a prompt typed after the step, a reply ("yes, go on")
// and a prompt whose time cannot be read are not it.
func TestAskedBefore(t *testing.T) {
	prompt := func(ts, text string) any { return map[string]any{"timestamp": ts, "text": text} }
	tr := &trace.Trace{Metadata: map[string]any{trace.MetaPrompts: []any{
		prompt("2026-01-02T10:00:00Z", "commit and push these changes"),
		prompt("not a time", "release the next minor version now"),
		prompt("2026-01-02T10:00:05Z", "yes, go on"),
		prompt("2026-01-02T10:00:09Z", "now open a pull request for it"),
	}}}
	if got := askedBefore(tr, "2026-01-02T10:00:06Z"); got != "commit and push these changes" {
		t.Errorf("askedBefore(10:00:06) = %q, want the request typed before the step", got)
	}
	if got := askedBefore(tr, "2026-01-02T10:00:09Z"); got != "now open a pull request for it" {
		t.Errorf("askedBefore(10:00:09) = %q, want the request typed at the step's time", got)
	}
	if got := askedBefore(tr, "2026-01-02T09:59:59Z"); got != "" {
		t.Errorf("askedBefore(before every prompt) = %q, want none", got)
	}
}
