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

// TestRedactTraceProvenance checks that a trace leaving the machine keeps
// only the base names of where it and its transcript were read (no
// account, drive or directory), and that shared, its id carries no secret.
func TestRedactTraceProvenance(t *testing.T) {
	raw := []byte(`{"version": 1, "id": "run-` + fakeToken + `", "source": "/home/zed/runs/t.json",
		"flow": {"transcript_ref": "C:\\Users\\zed\\logs\\x.jsonl"},
		"actions": [{"kind": "tool_call", "name": "ls", "parameters": {}}]}`)
	for _, how := range []TraceRedaction{ForReplay, ForSharing} {
		out, _, err := RedactTrace(raw, how)
		if err != nil {
			t.Fatal(err)
		}
		v, err := decodeGeneric(out)
		if err != nil {
			t.Fatal(err)
		}
		doc := v.(map[string]any)
		if doc["source"] != "t.json" || doc["flow"].(map[string]any)["transcript_ref"] != "x.jsonl" {
			t.Errorf("%v: source %v, transcript_ref %v; want t.json and x.jsonl", how, doc["source"], doc["flow"].(map[string]any)["transcript_ref"])
		}
		if strings.Contains(string(out), fakeToken) || strings.Contains(string(out), "zed") {
			t.Errorf("%v: the redacted trace holds the token or the account:\n%s", how, out)
		}
	}
}

// TestLocalPathNothingLeft checks that a path with no base name (a root,
// a bare drive, an empty file: URL) is written as nothing rather than as
// a piece of the machine.
func TestLocalPathNothingLeft(t *testing.T) {
	for _, p := range []string{"C:", `C:\`, "c:/", "file:", "file:///", `\\`} {
		if got := localPath(p); got != "" {
			t.Errorf("localPath(%q) = %q, want empty", p, got)
		}
	}
}
