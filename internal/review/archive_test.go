package review

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/ledger"
)

// remineInPlace stands for mining the bundle in dir again into the same
// directory: the workflow's bucket and its side effect's target change,
// the manifest records the new bytes and no decision yet. It returns the
// sha256 of the new workflow bytes.
func remineInPlace(t *testing.T, dir string) string {
	t.Helper()
	wf := filepath.Join(dir, bundle.WorkflowFile)
	src, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(src, []byte(`bucket = "docs-prod"`), []byte(`bucket = "docs-staging"`), 1)
	if bytes.Equal(changed, src) {
		t.Fatal("the workflow has no docs-prod bucket to change")
	}
	if err := os.WriteFile(wf, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(changed)
	sha := hex.EncodeToString(sum[:])
	mp := filepath.Join(dir, bundle.ManifestFile)
	data, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["workflow"].(map[string]any)["sha256"] = sha
	m["side_effects"].([]any)[0].(map[string]any)["target"] = "docs-staging"
	m["promotion"].(map[string]any)["approval_history"] = []any{}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mp, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return sha
}

// classed returns the texts of the diff lines of class c.
func classed(d []DiffLine, c string) []string {
	var out []string
	for _, l := range d {
		if l.Class == c {
			out = append(out, l.Text)
		}
	}
	return out
}

// TestArchivedVersion: a bundle approved, then mined again in place (the
// same workflow, new bytes, new side effects), shows on its page the diff
// of code and side effects against the approved version, which approving
// kept in the state directory; no other bundle is shown.
func TestArchivedVersion(t *testing.T) {
	dir := copyBundle(t, "pass")
	ts, _, state := testServer(t, "bob@example.com", dir)
	m, err := Decide(dir, state, bundle.Approval{Actor: "bob@example.com", Reason: "checked", At: "2026-11-28T12:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	approved := m.Workflow.SHA256
	star := filepath.Join(state, ledger.ArchiveDir, approved+".star")
	if st, err := os.Stat(star); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("approving kept no private copy of the workflow at %s: %v", star, err)
	}
	if p := Load(dir); archivedVersion(p, state) != nil {
		t.Error("the approved bytes themselves count as a previous version")
	}

	remineInPlace(t, dir)
	p := Load(dir)
	prev := archivedVersion(p, state)
	if prev == nil {
		t.Fatal("no previous version found in the archive")
	}
	if prev.Err != "" || prev.SHA256 != approved {
		t.Fatalf("previous version %s, error %q; want %s", prev.SHA256, prev.Err, approved)
	}
	add, del := classed(prev.Diff, "add"), classed(prev.Diff, "del")
	if len(add) != 1 || !strings.Contains(add[0], "docs-staging") || len(del) != 1 || !strings.Contains(del[0], "docs-prod") {
		t.Errorf("code diff adds %q and deletes %q; want the bucket changed", add, del)
	}
	add, del = classed(prev.Effects, "add"), classed(prev.Effects, "del")
	if len(add) != 1 || !strings.Contains(add[0], `"target":"docs-staging"`) || len(del) != 1 || !strings.Contains(del[0], `"target":"docs-prod"`) {
		t.Errorf("side-effect diff adds %q and deletes %q; want the target changed", add, del)
	}

	// The static page, attached to a pull request, shows the same diff.
	var st bytes.Buffer
	if err := WriteStatic(&st, LoadStatic(dir, state)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.String(), "Changes since the last approved version") || !strings.Contains(st.String(), "Side effects changed:") {
		t.Error("the static page lacks the diff against the archived version")
	}

	body := getPage(t, ts.URL+"/b/0/")
	if !regexp.MustCompile(`<h3>Changes since the last approved version</h3><p>approved by bob@example.com at 2026-11-28T12:00:00Z`).MatchString(body) ||
		!regexp.MustCompile(`<span class="add">&#43; +ctx.tool\(&#34;site.upload&#34;, bucket = &#34;docs-staging&#34;`).MatchString(body) ||
		!strings.Contains(body, "Side effects changed:") {
		i := strings.Index(body, "Changes since")
		t.Errorf("page lacks the diff against the archived version: %s", body[max(0, i):min(len(body), i+1500)])
	}
}

// TestArchivedVersionTampered is the attack of a state directory whose
// archived copy was replaced or removed after the approval: the page
// says the approved version cannot be shown, and never shows the bytes
// it found as what was approved.
func TestArchivedVersionTampered(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		spoil      func(t *testing.T, star, effects string)
	}{
		{"workflow replaced", "it was changed after the approval", func(t *testing.T, star, _ string) {
			// The forger's version: the current bytes, so the diff would
			// show no change to the bucket.
			write(t, star, "def main(ctx):\n    ctx.tool(\"site.upload\", bucket = \"docs-staging-forged\")\n")
		}},
		{"workflow removed", "no such file", func(t *testing.T, star, _ string) {
			if err := os.Remove(star); err != nil {
				t.Fatal(err)
			}
		}},
		{"side effects replaced", "is not the side effects this state directory's key recorded", func(t *testing.T, _, effects string) {
			data, err := os.ReadFile(effects)
			if err != nil {
				t.Fatal(err)
			}
			write(t, effects, strings.Replace(string(data), "docs-prod", "docs-staging", 1))
		}},
		{"side effects named twice", "duplicate key", func(t *testing.T, _, effects string) {
			// A second member of the same name: encoding/json would keep
			// it and leave the first, which the MAC was computed over.
			data, err := os.ReadFile(effects)
			if err != nil {
				t.Fatal(err)
			}
			write(t, effects, strings.Replace(string(data), `"workflow":`, `"side_effects": [], "workflow":`, 1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyBundle(t, "pass")
			ts, _, state := testServer(t, "bob@example.com", dir)
			m, err := Decide(dir, state, bundle.Approval{Actor: "bob@example.com", Reason: "checked", At: "2026-11-28T12:00:00Z"})
			if err != nil {
				t.Fatal(err)
			}
			remineInPlace(t, dir)
			archive := filepath.Join(state, ledger.ArchiveDir)
			tc.spoil(t, filepath.Join(archive, m.Workflow.SHA256+".star"), filepath.Join(archive, m.Workflow.SHA256+".effects.json"))
			prev := archivedVersion(Load(dir), state)
			if prev == nil {
				t.Fatal("the approval is not reported at all")
			}
			if !strings.Contains(prev.Err, tc.want) || prev.Diff != nil || prev.Effects != nil {
				t.Errorf("previous version: error %q, %d diff lines, %d effect lines; want an error saying %q and no diff", prev.Err, len(prev.Diff), len(prev.Effects), tc.want)
			}
			body := getPage(t, ts.URL+"/b/0/")
			if !strings.Contains(body, "The approved version cannot be shown:") || strings.Contains(body, "docs-staging-forged") || strings.Contains(body, `class="add"`) {
				i := strings.Index(body, "Changes since")
				t.Errorf("page shows the spoiled archive: %s", body[max(0, i):min(len(body), i+1500)])
			}
		})
	}
}

// TestArchivedVersionRejectedSince: bytes approved and then rejected are
// no longer the last approved version.
func TestArchivedVersionRejectedSince(t *testing.T) {
	dir := copyBundle(t, "pass")
	state := filepath.Join(t.TempDir(), "state")
	if _, err := Decide(dir, state, bundle.Approval{Actor: "bob@example.com", Reason: "checked", At: "2026-11-28T12:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Decide(dir, state, bundle.Approval{Actor: "bob@example.com", Reason: "uploads to prod", Reject: true, At: "2026-11-28T12:05:00Z"}); err != nil {
		t.Fatal(err)
	}
	remineInPlace(t, dir)
	if prev := archivedVersion(Load(dir), state); prev != nil {
		t.Errorf("rejected bytes shown as the last approved version: %+v", prev)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func getPage(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
