package bundle

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
