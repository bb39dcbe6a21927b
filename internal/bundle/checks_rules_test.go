package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkStatuses renders v's checks as "name=status ...".
func checkStatuses(v *Validation) string {
	var b strings.Builder
	for _, c := range v.Checks {
		fmt.Fprintf(&b, "%s=%s ", c.Name, c.Status)
	}
	return strings.TrimSpace(b.String())
}

// TestValidateCheckStatuses checks that Validate reports every check,
// in order, as failed exactly when it found a problem, skipped when there
// was nothing to check or the manifest could not be read, and ok
// otherwise: a tool reading the checks must see which claim failed.
func TestValidateCheckStatuses(t *testing.T) {
	s, h := releaseTraces(t, nil)
	for _, tt := range []struct {
		name string
		sc   scenario
		edit func(t *testing.T, dir string, m *Manifest)
		want string
	}{
		{"as written", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, nil,
			"manifest=ok workflow=ok report=ok eval_pack=ok skill=ok fixtures=ok redaction=ok approval=ok"},
		{"workflow edited", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, WorkflowFile)
			mustWrite(t, p, append(mustRead(t, p), "# edited\n"...))
		}, "manifest=ok workflow=fail report=ok eval_pack=ok skill=ok fixtures=ok redaction=ok approval=ok"},
		{"fixture edited", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string, m *Manifest) {
			p := filepath.Join(dir, m.Fixtures[0].Path)
			mustWrite(t, p, append(mustRead(t, p), '\n'))
		}, "manifest=ok workflow=ok report=ok eval_pack=ok skill=ok fixtures=fail redaction=ok approval=ok"},
		{"no candidate", scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}, nil,
			"manifest=ok workflow=ok report=ok eval_pack=skipped skill=skipped fixtures=ok redaction=ok approval=ok"},
		{"no manifest", scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}, func(t *testing.T, dir string, m *Manifest) {
			if err := os.Remove(filepath.Join(dir, ManifestFile)); err != nil {
				t.Fatal(err)
			}
		}, "manifest=fail workflow=skipped report=skipped eval_pack=skipped skill=skipped fixtures=skipped redaction=skipped approval=skipped"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, m := tt.sc.write(t)
			if tt.edit != nil {
				tt.edit(t, dir, m)
			}
			v := Validate(dir)
			if got := checkStatuses(v); got != tt.want {
				t.Errorf("checks\n  %s\nwant\n  %s%s", got, tt.want, describe(v))
			}
			if v.OK != (len(v.Problems) == 0) {
				t.Errorf("OK %v with %d problems", v.OK, len(v.Problems))
			}
		})
	}
}

// TestValidateNamesBytesDecidedOn checks that Validate says which
// workflow file and which bytes (their sha256) its readiness decision is
// about, and the promotion status it recomputed: the bytes on disk, even
// when they differ from the manifest's record, and nothing when the file
// cannot be read.
func TestValidateNamesBytesDecidedOn(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	dir, m := sc.write(t)
	if _, err := Approve(dir, Approval{Actor: "lead@example.com", At: "2026-04-27T09:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	v := Validate(dir)
	r := Ready(dir)
	if v.Workflow != WorkflowFile || v.WorkflowSHA256 != m.Workflow.SHA256 || v.PromotionStatus != StatusReady || r.WorkflowSHA256 != m.Workflow.SHA256 || r.Status != StatusReady {
		t.Errorf("approved bundle: workflow %q sha256 %s status %s (ready: %s %s); want %s %s ready", v.Workflow, v.WorkflowSHA256, v.PromotionStatus, r.WorkflowSHA256, r.Status, WorkflowFile, m.Workflow.SHA256)
	}
	p := filepath.Join(dir, WorkflowFile)
	edited := append(mustRead(t, p), "# edited\n"...)
	mustWrite(t, p, edited)
	v, r = Validate(dir), Ready(dir)
	if v.WorkflowSHA256 != hexSHA(edited) || r.WorkflowSHA256 != hexSHA(edited) || v.PromotionStatus != StatusNeedsApproval || r.Status != StatusNeedsApproval || r.Claimed != StatusReady {
		t.Errorf("edited workflow: sha256 %s (ready %s), status %s (ready %s, claimed %s); want %s, needs_approval, claimed ready",
			v.WorkflowSHA256, r.WorkflowSHA256, v.PromotionStatus, r.Status, r.Claimed, hexSHA(edited))
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if v := Validate(dir); v.Workflow != "" || v.WorkflowSHA256 != "" {
		t.Errorf("missing workflow: Validate names %q sha256 %q, want nothing", v.Workflow, v.WorkflowSHA256)
	}
}
