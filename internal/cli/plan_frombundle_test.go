package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/plan"
)

// TestPlanFromBundleExamples mines the shipped examples into a bundle and
// checks that "plan from-bundle" writes a plan that parses (no validation
// errors) with one deterministic_command per step and the shadow gate
// last.
func TestPlanFromBundleExamples(t *testing.T) {
	dir := t.TempDir()
	b := filepath.Join(dir, "bundle")
	if code, _, stderr := runCLI(t, "mine", "--from", "../../examples/traces", "--workflow-name", "bump_go_dependency", "--bundle", b); code != 0 {
		t.Fatalf("mine: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "plan.json")
	if code, stdout, stderr := runCLI(t, "plan", "from-bundle", b, "--out", out); code != 0 || stdout != "" {
		t.Fatalf("plan from-bundle = exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data, out)
	if err != nil {
		t.Fatalf("plan.Parse(from-bundle output) = %v", err)
	}
	var kinds []string
	for _, n := range p.Nodes {
		kinds = append(kinds, n.Kind)
	}
	want := []string{"deterministic_command", "deterministic_command", "deterministic_command",
		"deterministic_command", "deterministic_command", "deterministic_command", "verify"}
	if len(kinds) != len(want) {
		t.Fatalf("plan kinds = %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("plan kinds = %v, want %v", kinds, want)
			break
		}
	}
	if got := p.Nodes[len(p.Nodes)-1].ID; got != plan.ShadowGateNode {
		t.Errorf("last node = %s, want %s", got, plan.ShadowGateNode)
	}
	if code, stdout, _ := runCLI(t, "plan", "validate", out); code != 0 {
		t.Errorf("plan validate = exit %d:\n%s", code, stdout)
	}
}

// TestPlanFromBundleErrors checks that a bundle whose report lacks the
// manifest's candidate is refused, naming the report.
func TestPlanFromBundleErrors(t *testing.T) {
	b := filepath.Join(t.TempDir(), "bundle")
	if code, _, stderr := runCLI(t, "mine", "--from", "../../examples/traces", "--workflow-name", "bump_go_dependency", "--bundle", b); code != 0 {
		t.Fatalf("mine: exit %d: %s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(b, "report.json"), []byte(`{"candidates":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "plan", "from-bundle", b)
	if want := filepath.Join(b, "report.json") + ": no candidate candidate_"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("plan from-bundle (report without the candidate) = exit %d, stderr %q, want exit 1 and %q", code, stderr, want)
	}
}
