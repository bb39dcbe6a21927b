package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func step(kind, name string, argv ...string) reportStep {
	return reportStep{Kind: kind, Name: name, Argv: argv}
}

// invented is a report of the shapes mine writes: safe and rejected
// candidates whose steps are commands (with argv), edits and
// observations.
var invented = &report{
	Candidates: []reportCandidate{
		{ID: "c1", Name: "ship", Steps: []reportStep{
			step("tool_call", "git add", "git", "add", "{arg1}"),
			step("tool_call", "git commit", "git", "commit", "-m", "{message}"),
			step("tool_call", "git push", "git", "push")}},
		{ID: "c2", Name: "look_around", Steps: []reportStep{step("observation", "Read"), step("observation", "Grep")}},
		{ID: "c3", Name: "run_python", Steps: []reportStep{step("tool_call", "python3", "python3", "-c", "{c}"), step("tool_call", "python3", "python3", "{arg1}")}},
	},
	RejectedCandidates: []reportCandidate{
		{ID: "r1", Name: "retest", Steps: []reportStep{
			step("tool_call", "go test", "go", "test", "{arg1}"),
			step("file_mutation", "file.edit"),
			step("tool_call", "go test", "go", "test", "{arg1}")}},
		{ID: "r2", Name: "edit_twice", Steps: []reportStep{step("file_mutation", "file.edit"), step("file_mutation", "file.write")}},
		{ID: "r3", Name: "read_then_edit", Steps: []reportStep{step("observation", "Read"), step("file_mutation", "file.edit")}},
		{ID: "r4", Name: "build_and_serve", Steps: []reportStep{step("tool_call", "yarn build", "yarn", "build"), step("tool_call", "yarn start", "yarn", "start")}},
		// Most of commit-push: a near miss, neither a match nor junk.
		{ID: "r6", Name: "commit_then_push", Steps: []reportStep{step("tool_call", "git commit", "git", "commit", "-m", "{m}"), step("tool_call", "git push", "git", "push")}},
		// A hand-written trace's step has a name and no argv.
		{ID: "r5", Name: "push_in_order", Steps: []reportStep{step("tool_call", "git commit"), step("tool_call", "git push"), step("tool_call", "gh pr create")}},
	},
}

func TestJudge(t *testing.T) {
	type verdict struct {
		Safe       bool
		Procedures []string
		Partly     []string
		Junk       string
	}
	got := map[string]verdict{}
	for _, c := range judge(Procedures, invented) {
		got[c.ID] = verdict{c.Safe, c.Procedures, c.Partly, c.Junk}
	}
	want := map[string]verdict{
		"c1": {true, []string{"commit-push"}, []string{"commit-push-pr"}, ""},
		"c2": {true, nil, nil, "observations_only"},
		"c3": {true, nil, nil, "one_step_repeated"},
		"r1": {false, []string{"test-fix-retest"}, nil, ""},
		"r2": {false, nil, nil, "edits_only"},
		"r3": {false, nil, nil, "no_command"},
		"r4": {false, nil, nil, ""},
		"r5": {false, []string{"commit-push-pr"}, []string{"commit-push"}, ""},
		"r6": {false, nil, []string{"commit-push", "commit-push-pr"}, ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("judge (-want +got):\n%s", diff)
	}
}

// A candidate whose steps hold a procedure's steps out of order does not
// find it.
func TestJudgeOrder(t *testing.T) {
	r := &report{Candidates: []reportCandidate{{ID: "x", Steps: []reportStep{
		step("tool_call", "git push", "git", "push"),
		step("tool_call", "git add", "git", "add", "."),
		step("tool_call", "git commit", "git", "commit", "-m", "{m}")}}}}
	if c := judge(Procedures, r)[0]; len(c.Procedures) != 0 {
		t.Errorf("judge(push, add, commit).Procedures = %v, want none", c.Procedures)
	}
}

func TestScore(t *testing.T) {
	det := []Detection{
		{Procedure: "commit-push", Sessions: 5},     // eligible, found safe
		{Procedure: "commit-push-pr", Sessions: 2},  // eligible, found only rejected
		{Procedure: "test-fix-retest", Sessions: 3}, // eligible, found only rejected
		{Procedure: "dependency-bump", Sessions: 2}, // eligible, missed
		{Procedure: "release", Sessions: 1},         // below min-examples: not expected
	}
	s := score(det, judge(Procedures, invented), 2)
	type counts struct {
		Eligible, Recalled, RecalledSafe, Candidates, Safe, Matched, MatchedSafe, Junk, Unnamed int
		Recall, RecallSafe, Precision                                                           float64
	}
	got := counts{s.Eligible, s.Recalled, s.RecalledSafe, s.Candidates, s.Safe, s.Matched, s.MatchedSafe, len(s.Junk), len(s.Unnamed), s.Recall, s.RecallSafe, s.Precision}
	want := counts{Eligible: 4, Recalled: 3, RecalledSafe: 1, Candidates: 9, Safe: 3, Matched: 3, MatchedSafe: 1, Junk: 4, Unnamed: 2,
		Recall: 0.75, RecallSafe: 0.25, Precision: 3.0 / 9}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("score (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"commit_then_push", "push_in_order"}, s.Procedures[0].Partly); diff != "" {
		t.Errorf("commit-push partly (-want +got):\n%s", diff)
	}
	if p := s.Procedures[4]; p.Eligible || len(p.Found) != 0 {
		t.Errorf("release in 1 session: eligible %v, found %v; want not eligible, not found", p.Eligible, p.Found)
	}
	if s := score(nil, nil, 2); s.Recall != -1 || s.Precision != -1 {
		t.Errorf("score of nothing: recall %v precision %v, want -1 -1", s.Recall, s.Precision)
	}
}
