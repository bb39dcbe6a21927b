package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/codegen"
)

// TestGoldenExamples pins the whole output of mining the shipped examples:
// the report and every generated workflow, byte for byte. go test -update
// rewrites the golden files after an intended change; review the diff.
func TestGoldenExamples(t *testing.T) {
	examples, err := filepath.Abs("../../examples/traces")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs("testdata/golden/examples")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCLI(t, "mine", "--from", examples, "--out", "workflow.star", "--out-dir", "workflows", "--report", "report.json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	jsonCode, jsonOut, jsonErr := runCLI(t, "mine", "--from", examples, "--json", "--report", "report2.json")
	if jsonCode != 0 {
		t.Fatalf("--json: exit %d\nstderr: %s", jsonCode, jsonErr)
	}
	files := map[string]string{
		"report.json":   "report.json",
		"workflow.star": "workflow.star",
		"bump.star":     "workflows/bump.star",
		"triage.star":   "workflows/triage.star",
		"summary.txt":   "",
		"summary.json":  "-",
	}
	for name, produced := range files {
		var got []byte
		switch produced {
		case "":
			got = []byte(stdout)
		case "-":
			got = []byte(jsonOut)
		default:
			got, err = os.ReadFile(produced)
			if err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(golden, name)
		if *update {
			if err := os.MkdirAll(golden, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s differs from its golden file (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
		}
	}
	for _, name := range []string{"workflows/bump.star", "workflows/triage.star"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Base(name[:len(name)-len(".star")])
		if err := codegen.Check(name, src, want); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestMineDeterministic mines the examples twice and requires identical
// bytes, and a third time from a copy in another directory spelled
// differently, which must not change the report either.
func TestMineDeterministic(t *testing.T) {
	examples, err := filepath.Abs("../../examples/traces")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var reports [][]byte
	for i, from := range []string{examples, examples + "/.", examples} {
		out := filepath.Join(dir, string(rune('a'+i))+".json")
		if code, _, stderr := runCLI(t, "mine", "--from", from, "--report", out); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, b)
	}
	for i := 1; i < len(reports); i++ {
		if !bytes.Equal(reports[0], reports[i]) {
			t.Errorf("run %d differs from run 0:\n%s", i, cmp.Diff(string(reports[0]), string(reports[i])))
		}
	}
}

// TestREADMEQuickstart keeps the README honest: the output and workflow it
// shows for the quickstart command are the golden ones.
func TestREADMEQuickstart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"workflow.star", "summary.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata/golden/examples", name))
		if err != nil {
			t.Fatal(err)
		}
		want := string(b)
		if name == "summary.txt" {
			// The golden run writes extra files; the README shows the
			// quickstart's two.
			want = strings.Replace(want, "Wrote: workflow.star, workflows/bump.star, workflows/triage.star, report.json", "Wrote: workflow.star, report.json", 1)
		}
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not show the current %s; update it from testdata/golden/examples/%s", name, name)
		}
	}
	if !strings.Contains(string(readme), "go run ./cmd/crystallize mine --from examples/traces --out workflow.star --report report.json") ||
		!strings.Contains(string(readme), "go test ./...") {
		t.Error("README.md lost one of its two quickstart commands")
	}
}
