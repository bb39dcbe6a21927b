package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEReview runs the README's "Review before anything is trusted"
// commands on the shipped examples, in their order, so that the block
// cannot show a flag that is gone or a step that fails: mine into a bundle
// with held-out traces and an eval pack, then validate, shadow, eval and
// approve it, and validate again once it is approved.
func TestREADMEReview(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{
		"go run ./cmd/crystallize mine --from examples/traces --shadow-from examples/heldout \\\n    --workflow-name bump_go_dependency --bundle bundle --eval-pack bump.eval.toml \\\n    --approver lead@example.com",
		"go run ./cmd/crystallize validate bundle",
		"go run ./cmd/crystallize shadow bundle",
		"go run ./cmd/crystallize eval bundle",
		`go run ./cmd/crystallize approve bundle --approver lead@example.com --reason "read the workflow"`,
	} {
		if !strings.Contains(string(readme), cmd) {
			t.Fatalf("README.md no longer shows %q; update this test with it", cmd)
		}
	}

	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle")
	steps := []struct {
		args []string
		want string // a line the README's account of the step relies on
	}{
		{[]string{"mine", "--from", "../../examples/traces", "--shadow-from", "../../examples/heldout",
			"--workflow-name", "bump_go_dependency", "--bundle", bundle, "--eval-pack", filepath.Join(dir, "bump.eval.toml"),
			"--approver", "lead@example.com"}, "Promotion: needs_approval"},
		{[]string{"validate", bundle}, "OK"},
		{[]string{"shadow", bundle}, "pass=true"},
		{[]string{"eval", bundle}, "pass "},
		{[]string{"approve", bundle, "--approver", "lead@example.com", "--reason", "read the workflow"}, "promotion status is now ready"},
		{[]string{"validate", bundle}, "approval=ok"},
	}
	for _, s := range steps {
		code, stdout, stderr := runCLI(t, s.args...)
		if code != 0 {
			t.Fatalf("crystallize %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(s.args, " "), code, stdout, stderr)
		}
		if !strings.Contains(stdout+stderr, s.want) {
			t.Errorf("crystallize %s: output lacks %q:\n%s%s", s.args[0], s.want, stdout, stderr)
		}
	}
	// The README says the bundle carries a SKILL.md only when the replay
	// gate accepts it; on the shipped examples it does.
	if m, _ := filepath.Glob(filepath.Join(bundle, "skill", "*", "SKILL.md")); len(m) != 1 {
		t.Errorf("bundle SKILL.md files = %v, want one", m)
	}
}
