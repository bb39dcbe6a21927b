package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func cmd(h string) Event   { return Event{Head: h} }
func cmdOp(h string) Event { return Event{Head: h, Operand: true} }

var edit = Event{Edit: true}

// found lists the procedures that occur in events.
func found(events []Event) []string {
	var out []string
	for _, p := range Procedures {
		if p.Occurs(events) {
			out = append(out, p.Name)
		}
	}
	return out
}

func TestProceduresOccur(t *testing.T) {
	tests := []struct {
		name   string
		events []Event
		want   []string
	}{
		{"commit-push with work between", []Event{cmd("git status"), cmd("git add"), edit, cmd("ls"), cmdOp("git commit"), cmd("git log"), cmd("git push")},
			[]string{"commit-push"}},
		{"out of order is not commit-push", []Event{cmdOp("git commit"), cmd("git add"), cmd("git push")}, nil},
		{"push without commit", []Event{cmd("git add"), cmd("git push")}, nil},
		{"commit-push-pr", []Event{cmd("git add"), cmdOp("git commit"), cmd("git push"), cmd("gh pr view"), cmd("gh pr create")},
			[]string{"commit-push", "commit-push-pr"}},
		{"pr before push is not commit-push-pr", []Event{cmdOp("git commit"), cmd("gh pr create"), cmd("git push")}, nil},
		{"test-fix-retest", []Event{cmdOp("go test"), cmd("grep"), edit, edit, cmdOp("go test")}, []string{"test-fix-retest"}},
		{"retest through another spelling of the same tests", []Event{cmd("npm test"), edit, cmd("yarn test")}, []string{"test-fix-retest"}},
		{"retest with other tests is not test-fix-retest", []Event{cmd("pytest"), edit, cmd("go test")}, nil},
		{"no edit between the tests", []Event{cmd("cargo test"), cmd("cargo test"), edit}, nil},
		{"dependency bump", []Event{cmdOp("go get"), cmd("go mod tidy"), cmd("go test"), cmdOp("git commit")}, []string{"dependency-bump"}},
		{"npm install of nothing is no bump", []Event{cmd("npm install"), cmd("npm test"), cmdOp("git commit")}, nil},
		{"bump without commit", []Event{cmd("cargo update"), cmd("cargo test")}, nil},
		{"release by tag", []Event{cmdOp("git tag"), cmdOp("git push")}, []string{"release"}},
		{"listing tags is no release", []Event{cmd("git tag"), cmd("git push")}, nil},
		{"release by npm version", []Event{cmd("gh pr merge"), cmdOp("npm version"), cmd("git push")}, []string{"release"}},
		{"npm version without a bump is no release", []Event{cmd("npm version"), cmd("git push")}, nil},
		{"release by gh", []Event{cmd("gh release create")}, []string{"release"}},
		{"edits and reads only", []Event{edit, edit}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, found(tt.events)); diff != "" {
				t.Errorf("procedures in %v (-want +got):\n%s", tt.events, diff)
			}
		})
	}
}

func TestDetectCountsSessions(t *testing.T) {
	commitPush := []Event{cmd("git add"), cmdOp("git commit"), cmd("git push")}
	sessions := []Session{
		{Key: "a", Events: slices.Concat(commitPush, commitPush)}, // twice in one session counts once
		{Key: "b", Events: commitPush},
		{Key: "c", Events: []Event{cmd("go test"), edit, cmd("go test")}},
		{Key: "d", Events: []Event{edit}},
		// Two subagents of one session that each test, fix and test
		// again are one more session, not two.
		{Key: "e.agent-1", Events: []Event{cmd("go test"), edit, cmd("go test")}},
		{Key: "e.agent-2", Events: []Event{cmd("go test"), edit, cmd("go test")}},
	}
	got := map[string]int{}
	det := Detect(Procedures, sessions)
	for _, d := range det {
		got[d.Procedure] = d.Sessions
	}
	if diff := cmp.Diff([]string{"a ", "b "}, det[0].In); diff != "" {
		t.Errorf("commit-push sessions (-want +got):\n%s", diff)
	}
	want := map[string]int{"commit-push": 2, "commit-push-pr": 0, "test-fix-retest": 2, "dependency-bump": 0, "release": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Detect sessions (-want +got):\n%s", diff)
	}
}

func TestOccursPartly(t *testing.T) {
	commitPush := Procedures[0]
	tests := []struct {
		events []Event
		want   bool
	}{
		{[]Event{cmdOp("git commit"), cmd("git push")}, true},
		{[]Event{cmd("git add"), cmd("git push")}, true},
		{[]Event{cmd("git push"), cmdOp("git commit")}, false}, // out of order
		{[]Event{cmdOp("git commit")}, false},                  // one step of three
	}
	for _, tt := range tests {
		if got := commitPush.OccursPartly(tt.events); got != tt.want {
			t.Errorf("commit-push.OccursPartly(%v) = %v, want %v", tt.events, got, tt.want)
		}
	}
	// Release's alternatives are too short to be partly there.
	if Procedures[4].OccursPartly([]Event{cmdOp("git tag")}) {
		t.Errorf("release.OccursPartly(git tag) = true, want false")
	}
}
