package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mineExamplesReport mines the shipped examples with their held-out
// traces, naming author, approver, package and eval pack link, and
// returns report.json decoded.
func mineExamplesReport(t *testing.T) map[string]any {
	t.Helper()
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, _, stderr := runCLI(t, "mine", "--from", filepath.Join(examples, "traces"), "--shadow-from", filepath.Join(examples, "heldout"),
		"--report", "r.json", "--author", "ops@example.com", "--approver", "lead@example.com",
		"--package-name", "deps", "--eval-pack-link", "https://evals.example.com/bump")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile("r.json")
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReportSkillCandidates: the standalone report lists the skill of
// every safe candidate, not only the selected one's, each with its
// SKILL.md and activation metadata: bump passes its held-out trace and is
// accepted, triage has none and is rejected, and both can be read.
func TestReportSkillCandidates(t *testing.T) {
	r := mineExamplesReport(t)
	names := func(key string) map[string]map[string]any {
		out := map[string]map[string]any{}
		list, _ := r[key].([]any)
		for _, x := range list {
			s := x.(map[string]any)
			out[s["name"].(string)] = s
		}
		return out
	}
	accepted, rejected := names("skill_candidates"), names("rejected_skill_candidates")
	if len(accepted) != 1 || accepted["bump"] == nil {
		t.Fatalf("skill_candidates = %v, want bump's", r["skill_candidates"])
	}
	if len(rejected) != 1 || rejected["triage"] == nil {
		t.Fatalf("rejected_skill_candidates = %v, want triage's", r["rejected_skill_candidates"])
	}
	if reasons, _ := rejected["triage"]["rejection_reasons"].([]any); len(reasons) == 0 {
		t.Errorf("triage's rejected skill gives no reason")
	}
	for name, s := range map[string]map[string]any{"bump": accepted["bump"], "triage": rejected["triage"]} {
		md, _ := s["skill_md"].(string)
		if !strings.HasPrefix(md, "---\nname: \""+name+"\"\n") {
			t.Errorf("%s: skill_md does not start with its frontmatter: %.80q", name, md)
		}
		act, _ := s["activation"].(map[string]any)
		if act["name"] != name || act["description"] == "" || act["when_to_use"] == "" || act["short"] == "" {
			t.Errorf("%s: activation = %v", name, act)
		}
		if tools, _ := act["allowed_tools"].([]any); len(tools) == 0 {
			t.Errorf("%s: activation lists no allowed tools", name)
		}
		if s["gate"] == nil || s["skill_id"] == "" || s["workflow_candidate_id"] == "" {
			t.Errorf("%s: gate, skill id or candidate id missing: %v", name, s)
		}
	}
}

// TestReportPromotionMetadata: every candidate's promotion in the
// standalone report names the author (also the owner), the approver,
// the package and version, the rollback target, when it was created and
// the eval pack link, as a bundle manifest does.
func TestReportPromotionMetadata(t *testing.T) {
	r := mineExamplesReport(t)
	want := map[string]any{
		"author":           "ops@example.com",
		"owner":            "ops@example.com",
		"approver":         "lead@example.com",
		"package_name":     "deps",
		"workflow_version": "0.1.0",
		"rollback_target":  "keep source traces and previous package version",
		"created_at":       "2026-01-01T00:00:00Z",
		"eval_pack_link":   "https://evals.example.com/bump",
	}
	cs, _ := r["candidates"].([]any)
	if len(cs) == 0 {
		t.Fatal("no candidates")
	}
	for _, x := range cs {
		c := x.(map[string]any)
		p, _ := c["promotion"].(map[string]any)
		for k, v := range want {
			if p[k] != v {
				t.Errorf("%s: promotion.%s = %v, want %v", c["name"], k, p[k], v)
			}
		}
	}
}

// TestReportRuntimeCost: the cost of running a workflow is measured from
// its steps: triage still makes its classify model call, whose recorded
// dollars are its cpu_runtime_cost_usd; bump has no fuzzy step, so no
// model dollars, and its runtime_ms is the tools' recorded time.
func TestReportRuntimeCost(t *testing.T) {
	r := mineExamplesReport(t)
	cs, _ := r["candidates"].([]any)
	got := map[string]map[string]any{}
	for _, x := range cs {
		c := x.(map[string]any)
		got[c["name"].(string)], _ = c["savings"].(map[string]any)
	}
	// Three runs of triage, each classify call recorded at $0.006927,
	// $0.007677 and $0.006684 (examples/traces 03, 04, 05).
	if s := got["triage"]; s == nil || s["cpu_runtime_cost_usd"] != 0.021288 {
		t.Errorf("triage: cpu_runtime_cost_usd = %v, want 0.021288", s["cpu_runtime_cost_usd"])
	}
	if s := got["bump"]; s == nil || s["cpu_runtime_cost_usd"] != 0.0 {
		t.Errorf("bump: cpu_runtime_cost_usd = %v, want 0 (no model call remains)", s["cpu_runtime_cost_usd"])
	}
	for name, s := range got {
		if ms, _ := s["runtime_ms"].(float64); ms <= 0 {
			t.Errorf("%s: runtime_ms = %v, want the steps' recorded time", name, s["runtime_ms"])
		}
	}
}
