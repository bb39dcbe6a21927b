package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestReady: readiness is recomputed from the approval history and the
// workflow bytes, never read from the manifest's status, and any
// validation problem makes a bundle not ready.
func TestReady(t *testing.T) {
	s, h := releaseTraces(t, nil)
	// approved writes a bundle and approves it.
	approved := func(t *testing.T) string {
		dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
		if _, err := Approve(dir, Approval{Actor: "lead", At: "2026-04-27T10:00:00Z"}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// editManifest rewrites a string in candidate.json.
	editManifest := func(t *testing.T, dir, old, new string) {
		t.Helper()
		p := filepath.Join(dir, ManifestFile)
		data := string(mustRead(t, p))
		if !strings.Contains(data, old) {
			t.Fatalf("candidate.json does not hold %q", old)
		}
		mustWrite(t, p, []byte(strings.Replace(data, old, new, 1)))
	}
	tests := []struct {
		name   string
		make   func(t *testing.T) string
		status string
		codes  []string // problem codes, in order
	}{
		{"approved", approved, StatusReady, nil},
		{"unapproved", func(t *testing.T) string {
			dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			return dir
		}, StatusNeedsApproval, nil},
		{"status set to ready by hand", func(t *testing.T) string {
			dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			editManifest(t, dir, `"status": "needs_approval"`, `"status": "ready"`)
			return dir
		}, StatusNeedsApproval, []string{CodeStatusInvalid}},
		{"step appended after approval, hash updated", func(t *testing.T) string {
			dir := approved(t)
			wf := filepath.Join(dir, WorkflowFile)
			old := mustRead(t, wf)
			src := strings.Replace(string(old), "    return ", "    ctx.tool(\"github.open_pr\", repo = \"x\")\n    return ", 1)
			mustWrite(t, wf, []byte(src))
			// Only workflow.sha256 changes; the approval record keeps the
			// hash it was given for.
			editManifest(t, dir, `"sha256": "`+hexSHA(old)+`"`, `"sha256": "`+hexSHA([]byte(src))+`"`)
			return dir
		}, StatusNeedsApproval, []string{CodeApprovalStale, CodeStatusInvalid}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.make(t)
			r := Ready(dir)
			if r.Status != tt.status || !slices.Equal(r.Codes(), tt.codes) {
				t.Fatalf("Ready = status %s, codes %v; want %s, %v\n%v", r.Status, r.Codes(), tt.status, tt.codes, r.Err())
			}
			if v := Validate(dir); v.OK != (len(tt.codes) == 0) {
				t.Errorf("Validate OK = %v, Ready codes %v: the two disagree", v.OK, r.Codes())
			}
			err := r.Err()
			if tt.status == StatusReady {
				if err != nil || !r.OK() {
					t.Errorf("Ready(approved).Err() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrNotReady) {
				t.Fatalf("Err() = %v, want ErrNotReady", err)
			}
			for _, c := range tt.codes {
				if !strings.Contains(err.Error(), c) {
					t.Errorf("Err() = %v, want code %s in it", err, c)
				}
			}
		})
	}
}

// TestWriteRefusesSecretInWorkflow: a workflow rendered from an
// unredacted candidate (a token in a tool name) is not written, and the
// error names the place and the kind, never the token.
func TestWriteRefusesSecretInWorkflow(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	in := sc.input(t)
	in.Workflow = append(append([]byte{}, in.Workflow...), []byte("# called deploy_"+fakeToken+"\n")...)
	dir := filepath.Join(t.TempDir(), "bundle")
	_, err := Write(context.Background(), dir, in, sc.opts)
	if !errors.Is(err, ErrSecretInWorkflow) || !strings.Contains(err.Error(), "github secret ghp_****") {
		t.Fatalf("Write = %v, want ErrSecretInWorkflow naming a github secret", err)
	}
	if strings.Contains(err.Error(), fakeToken) {
		t.Error("the error holds the token")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the bundle was written")
	}
}

// TestRedactReport: names are redacted like values, and logical secret
// ids stay, since the workflow reads the secret by them.
func TestRedactReport(t *testing.T) {
	r := &candidate.Report{Candidates: []candidate.Candidate{{
		ID:       "c1",
		Name:     "deploy_" + fakeToken,
		Examples: []candidate.Example{{TraceID: "session-" + fakeToken}},
		Steps: []candidate.Step{{Name: "curl_" + fakeToken, Arguments: []candidate.Argument{
			{Key: "url", Kind: candidate.ArgSecret, Secret: "DEPLOY_URL"},
		}}},
	}}}
	red, n, err := RedactReport(r)
	if err != nil {
		t.Fatal(err)
	}
	c := red.Candidates[0]
	if c.Name != "deploy_[redacted:github]" || c.Examples[0].TraceID != "session-[redacted:github]" || c.Steps[0].Name != "curl_[redacted:github]" {
		t.Errorf("RedactReport names = %q, %q, %q; want each token redacted", c.Name, c.Examples[0].TraceID, c.Steps[0].Name)
	}
	if got := c.Steps[0].Arguments[0].Secret; got != "DEPLOY_URL" {
		t.Errorf("secret id = %q, want DEPLOY_URL kept", got)
	}
	if n != 3 {
		t.Errorf("RedactReport counted %d redactions, want 3", n)
	}
	if r.Candidates[0].Name != "deploy_"+fakeToken {
		t.Error("RedactReport changed its argument")
	}
}
