package bundle

import (
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestRedactReportKeepsOnlyLogicalSecretIDs checks that RedactReport keeps
// the id a secret argument names only when it is a logical id
// (UPPER_SNAKE_CASE) that holds no secret: the workflow needs the
// reference, but anything else under "secret" may be the value itself,
// and a non-secret argument gets no such exception.
func TestRedactReportKeepsOnlyLogicalSecretIDs(t *testing.T) {
	args := []candidate.Argument{
		{Key: "token", Kind: candidate.ArgSecret, Secret: "CRATES_IO_TOKEN"},
		{Key: "pass", Kind: candidate.ArgSecret, Secret: "hunter2-password"},
		{Key: "gh", Kind: candidate.ArgSecret, Secret: fakeToken},
		{Key: "plain", Kind: candidate.ArgConstant, Value: "x", Secret: "DEPLOY_KEY"},
	}
	r := &candidate.Report{Candidates: []candidate.Candidate{{ID: "candidate_a", Steps: []candidate.Step{{Index: 1, Arguments: args}}}}}
	red, _, err := RedactReport(r)
	if err != nil {
		t.Fatal(err)
	}
	got := red.Candidates[0].Steps[0].Arguments
	if got[0].Secret != "CRATES_IO_TOKEN" {
		t.Errorf("logical secret id redacted to %q", got[0].Secret)
	}
	for _, i := range []int{1, 2, 3} {
		if got[i].Secret == args[i].Secret || strings.Contains(got[i].Secret, args[i].Secret) {
			t.Errorf("argument %s: secret %q kept, want it redacted", args[i].Key, got[i].Secret)
		}
	}
}

// TestIsLocalAbs checks every spelling of an absolute local path a report
// may carry, a drive letter in either case, and what is not one.
func TestIsLocalAbs(t *testing.T) {
	for p, want := range map[string]bool{
		"/home/a": true, `\\server\share`: true, "~/runs": true, `~\runs`: true, "file:///x": true,
		`C:\Users`: true, "c:/users": true, "Z:": true, "z:": true,
		"": false, "runs/a.json": false, "1:/x": false, "@:/x": false, "[:/x": false, "`:/x": false, "{:/x": false, "C": false, "https://x": false,
	} {
		if got := isLocalAbs(p); got != want {
			t.Errorf("isLocalAbs(%q) = %v, want %v", p, got, want)
		}
	}
}
