package crystallize_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// userModule is a module of its own that requires this one, as a library
// caller's would: it can import the public package and nothing under
// internal/, so it fails to build if a public function, or a field of a
// type it returns, is not usable from outside the module.
const userModule = `module example.com/user

go 1.26

require github.com/crystallize-dev/crystallize v0.0.0

replace github.com/crystallize-dev/crystallize => REPO
`

const userTest = `package user

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize"
)

func TestEveryFunction(t *testing.T) {
	ctx := context.Background()
	repo := os.Getenv("CRYSTALLIZE_REPO")

	traces, err := crystallize.LoadTraces(ctx, filepath.Join(repo, "examples", "traces"))
	if err != nil || len(traces) == 0 {
		t.Fatalf("LoadTraces: %d traces, %v", len(traces), err)
	}
	var first *crystallize.Trace = traces[0]
	if first.ID == "" || len(first.Actions) == 0 {
		t.Errorf("LoadTraces: first trace %+v has no id or actions", first)
	}
	heldout, err := crystallize.LoadTraces(ctx, filepath.Join(repo, "examples", "heldout"))
	if err != nil {
		t.Fatal(err)
	}

	report, err := crystallize.Mine(ctx, traces, crystallize.MineOptions{MinExamples: 2, WorkflowName: "bump"})
	if err != nil || len(report.Candidates) == 0 {
		t.Fatalf("Mine: %v, %+v", err, report)
	}
	var best crystallize.Candidate = report.Candidates[0]
	if best.Name != "bump" || len(best.Steps) == 0 || best.Confidence <= 0 {
		t.Errorf("Mine: best candidate %s with %d steps, confidence %v", best.Name, len(best.Steps), best.Confidence)
	}

	induced, err := crystallize.InduceSkills(ctx, traces, heldout, crystallize.InduceOptions{WorkflowName: "bump"})
	if err != nil {
		t.Fatal(err)
	}
	if len(induced.Accepted) == 0 {
		t.Fatalf("InduceSkills: no skill accepted, rejected %+v", induced.Rejected)
	}
	if s := induced.Accepted[0]; s.Name != "bump" || !strings.Contains(string(s.Markdown), "name: \"bump\"") {
		t.Errorf("InduceSkills: accepted %s with SKILL.md\n%s", s.Name, s.Markdown)
	}
	if !induced.Accepted[0].Gate.Accepted() || induced.Report == nil || len(induced.Report.Candidates) == 0 {
		t.Errorf("InduceSkills: gate or report missing")
	}
	for _, r := range induced.Rejected {
		if len(r.Reasons) == 0 || r.Reasons[0].Code == "" {
			t.Errorf("InduceSkills: rejected %s without a reason code", r.Name)
		}
	}

	composition, err := os.ReadFile(filepath.Join(repo, "examples", "composition", "runs", "01-release-readiness.json"))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := crystallize.CompositionTrace(composition, "01-release-readiness.json")
	if err != nil || !strings.HasPrefix(ct.ID, "composition-") {
		t.Errorf("CompositionTrace: %v, %+v", err, ct)
	}

	planJSON := []byte(` + "`" + `{"schema_version": "1", "objective": "Check", "entry": "a",
	 "nodes": {"a": {"kind": "read_fact"}, "b": {"kind": "human_gate", "approval": {"id": "ok"}}},
	 "edges": [{"from": "a", "to": "b"}]}` + "`" + `)
	v := crystallize.ValidatePlan(planJSON)
	if !v.Valid || v.GraphStats.NodeCount != 2 || len(v.Errors) != 0 {
		t.Errorf("ValidatePlan: %+v", v)
	}
	if bad := crystallize.ValidatePlan([]byte("{")); bad.Valid || bad.Errors[0].Code != "invalid_json" {
		t.Errorf("ValidatePlan of bad JSON: %+v", bad)
	}
	g, err := crystallize.CompilePlan(planJSON, "plan.json")
	if err != nil || g.Entry != "a" || len(g.Nodes) != 2 || len(g.Edges) != 1 {
		t.Errorf("CompilePlan: %v, %+v", err, g)
	}
	if _, err := crystallize.CompilePlan([]byte("{}"), "empty.json"); err == nil || !strings.Contains(err.Error(), "empty.json") {
		t.Errorf("CompilePlan of an invalid plan: %v", err)
	}
	chart, err := crystallize.RenderPlan(planJSON, "plan.json")
	if err != nil || !strings.HasPrefix(chart, "flowchart TD\n") || !strings.Contains(chart, "n_a --> n_b") {
		t.Errorf("RenderPlan: %v\n%s", err, chart)
	}

	dir := os.Getenv("CRYSTALLIZE_BUNDLE")
	bv := crystallize.ValidateBundle(dir)
	if !bv.OK || len(bv.Problems) != 0 || len(bv.Checks) == 0 {
		t.Errorf("ValidateBundle: %+v", bv)
	}
	if broken := crystallize.ValidateBundle(t.TempDir()); broken.OK || broken.Problems[0].Code == "" {
		t.Errorf("ValidateBundle of an empty directory: %+v", broken)
	}
	b, err := crystallize.ReadBundle(dir)
	if err != nil || b.Manifest.Workflow.Path == "" || b.Manifest.CandidateID == "" {
		t.Errorf("ReadBundle: %v, %+v", err, b)
	}
}
`

// TestExternalModule builds and tests a module outside this one that
// calls every public function: the public package is only worth its name
// if a caller that cannot import internal/ can use it and what it
// returns. It runs the go command against the module cache; with -short
// it is skipped.
func TestExternalModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module with the go command")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command that runs this test is not on PATH: %v", err)
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": replaceRepo(userModule, repo),
		// This module's checksums are the caller's too: it requires the
		// same versions, so the go command needs no checksum database.
		"go.sum":       string(sum),
		"user_test.go": userTest,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(gobin, "test", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOFLAGS=-mod=mod",
		"GOWORK=off",
		"CRYSTALLIZE_REPO="+repo,
		"CRYSTALLIZE_BUNDLE="+exampleBundle,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in a module that requires this one: %v\n%s", err, out)
	}
}

// replaceRepo points the go.mod's replace directive at repo, quoted so
// that a path with spaces is one token.
func replaceRepo(mod, repo string) string {
	return strings.Replace(mod, "REPO", strconv.Quote(filepath.ToSlash(repo)), 1)
}
