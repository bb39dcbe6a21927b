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
