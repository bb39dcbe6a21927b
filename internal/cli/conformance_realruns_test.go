package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestConformanceRealAgentsWorkflowsRun: what mine writes from real
// agent logs runs. Every safe candidate of every real history is mined
// with every session (--holdout none), and its workflow is run dry once
// for each value its parameters were seen with: no step may be refused.
// A workflow that the checks before a run refuse for a value the agent
// itself used (an option guard that takes "git add -A" for an injected
// option) is one a reviewer approves and nobody can run.
func TestConformanceRealAgentsWorkflowsRun(t *testing.T) {
	root, err := filepath.Abs("../../../shared/fixtures/real-agents")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(root)
	if err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("real agent logs %s are required (CRYSTALLIZE_REQUIRE_CONFORMANCE=1): %v", root, err)
		}
		t.Skipf("real agent logs %s not found; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require them", root)
	}
	runs := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			out := t.TempDir()
			report := filepath.Join(out, "report.json")
			code, _, stderr := runCLI(t, "mine", "--from", filepath.Join(root, d.Name()), "--holdout", "none",
				"--out-dir", filepath.Join(out, "wf"), "--report", report, "--progress", "none")
			if code != 0 && code != 1 { // 1: no safe candidate
				t.Fatalf("mine exited %d: %s", code, stderr)
			}
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var rep candidate.Report
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			for _, c := range rep.Candidates {
				values := 1
				for _, p := range c.Parameters {
					values = max(values, len(p.Examples))
				}
				for i := range values {
					params := map[string]any{}
					for _, p := range c.Parameters {
						if len(p.Examples) > 0 {
							params[p.Name] = p.Examples[min(i, len(p.Examples)-1)]
						}
					}
					pf := filepath.Join(out, "params.json")
					b, _ := json.Marshal(params)
					if err := os.WriteFile(pf, b, 0o600); err != nil {
						t.Fatal(err)
					}
					t.Chdir(t.TempDir())
					_, stdout, stderr := runCLI(t, "run", filepath.Join(out, "wf", c.Name+".star"), "--dry-run", "--params", pf)
					runs++
					if strings.Contains(stdout, "refused step") || strings.Contains(stderr, "would be read as an option") {
						t.Errorf("%s with the values of example %d (%s): a step is refused:\n%s%s", c.Name, i+1, b, stdout, stderr)
					}
				}
			}
		})
	}
	if runs == 0 && !t.Failed() {
		t.Fatal("no workflow was run: every real history gave no candidate")
	}
}
