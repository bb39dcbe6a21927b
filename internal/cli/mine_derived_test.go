package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// On runs where a branch and a title are built from a version and a
// repository name, the mined workflow takes only version and repository.
func TestMineDerivesParameters(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	const run = `{"id": "%s", "actions": [` +
		`{"kind": "tool_call", "name": "git.checkout", "parameters": {"branch": "release/%s-%s"}},` +
		`{"kind": "tool_call", "name": "release.tag", "parameters": {"repository": "%s/%s", "version": "%s"}},` +
		`{"kind": "tool_call", "name": "github.open_pr", "parameters": {"title": "Release %s %s"}}]}`
	for i, r := range [][3]string{{"acme", "widgets", "1.2.0"}, {"acme", "gadgets", "2.0.1"}, {"tools", "cli", "0.9.0"}} {
		id := sprintf("r%d", i)
		writeTrace(t, filepath.Join(runs, id+".json"), sprintf(run, id, r[1], r[2], r[0], r[1], r[2], r[1], r[2]))
	}
	report, workflow := filepath.Join(dir, "report.json"), filepath.Join(dir, "workflow.star")
	if code, _, stderr := runCLI(t, "mine", "--from", runs, "--report", report, "--out", workflow); code != 0 {
		t.Fatalf("mine exited %d: %s", code, stderr)
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var r candidate.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	sel := r.Selected()
	if sel == nil {
		t.Fatal("no candidate selected")
	}
	var params, derived []string
	for _, p := range sel.Parameters {
		params = append(params, p.Name)
	}
	for _, d := range sel.DerivedParameters {
		derived = append(derived, d.Name+" = "+d.Expression)
		if len(d.Evidence) != 3 {
			t.Errorf("%s: %d pieces of evidence, want one per example (3)", d.Name, len(d.Evidence))
		}
		for _, ev := range d.Evidence {
			if !ev.Match || ev.Role != candidate.RoleSource {
				t.Errorf("%s: evidence %+v, want a matching source example", d.Name, ev)
			}
		}
	}
	if diff := cmp.Diff([]string{"repository", "version"}, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	want := []string{
		`branch = "release/" + repository.split("/")[-1] + "-" + version`,
		`title = "Release " + repository.split("/")[-1] + " " + version`,
	}
	if diff := cmp.Diff(want, derived); diff != "" {
		t.Errorf("derived parameters (-want +got):\n%s", diff)
	}
	src, err := os.ReadFile(workflow)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "(ctx, repository, version):\n") {
		t.Errorf("workflow signature does not take exactly repository and version:\n%s", src)
	}
	for _, w := range want {
		if !strings.Contains(string(src), "\n    "+w+"\n") {
			t.Errorf("workflow lacks %q:\n%s", w, src)
		}
	}
}
