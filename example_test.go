package crystallize_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
)

// exampleBundle is a review bundle written as "crystallize mine --from
// examples/traces --shadow-from examples/heldout --bundle DIR" writes it,
// for the bundle examples to read.
var exampleBundle string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "crystallize-api")
	if err != nil {
		log.Print(err)
		return 1
	}
	defer os.RemoveAll(dir)
	exampleBundle = filepath.Join(dir, "bundle")
	if err := writeBundle(exampleBundle); err != nil {
		log.Print(err)
		return 1
	}
	return m.Run()
}

// writeBundle writes the review bundle of the example traces to dir.
func writeBundle(dir string) error {
	_, _, err := pipeline.MineDir(context.Background(), pipeline.MineDirOptions{
		Corpus:  pipeline.CorpusOptions{Dir: filepath.Join("examples", "traces")},
		Heldout: pipeline.HeldoutOptions{Dirs: []string{filepath.Join("examples", "heldout")}},
		Outputs: pipeline.Outputs{Bundle: dir},
	})
	return err
}

// examplePlan is a small task plan: read, check, then a human gate.
const examplePlan = `{"schema_version": "1", "objective": "Check a release", "entry": "read",
 "nodes": {
   "read": {"kind": "read_fact", "purpose": "Read the changelog"},
   "check": {"kind": "verify", "verify": {"command": "go test ./...", "expect_status": 0}},
   "ship": {"kind": "human_gate", "approval": {"id": "ship"}}},
 "edges": [{"from": "read", "to": "check"}, {"from": "check", "to": "ship"}]}`

func ExampleLoadTraces() {
	traces, err := crystallize.LoadTraces(context.Background(), "examples/traces")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(traces), "traces; the first is", traces[0].ID, "with", len(traces[0].Actions), "actions")
	// Output: 9 traces; the first is pay-01-bump-x-net with 10 actions
}

func ExampleCompositionTrace() {
	report, err := os.ReadFile("examples/composition/runs/01-release-readiness.json")
	if err != nil {
		log.Fatal(err)
	}
	t, err := crystallize.CompositionTrace(report, "01-release-readiness.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.ID, len(t.Actions))

	_, err = crystallize.CompositionTrace([]byte(`{"run": {"id": "r1"}, "calls": "none"}`), "bad.json")
	fmt.Println(err)
	// Output:
	// composition-comp-run-0001 4
	// bad.json: $.calls: expected array, got string
	// bad.json: $.run.snippet_hash: missing required field
	// bad.json: $.run.binding_manifest_hash: missing required field
}

func ExampleMine() {
	ctx := context.Background()
	traces, err := crystallize.LoadTraces(ctx, "examples/traces")
	if err != nil {
		log.Fatal(err)
	}
	report, err := crystallize.Mine(ctx, traces, crystallize.MineOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range report.Candidates {
		fmt.Printf("%s: %d steps in %d traces, confidence %.2f\n", c.Name, len(c.Steps), c.Support, c.Confidence)
	}
	// Output:
	// bump: 6 steps in 4 traces, confidence 0.90
	// triage: 4 steps in 3 traces, confidence 0.75
}

func ExampleInduceSkills() {
	ctx := context.Background()
	traces, err := crystallize.LoadTraces(ctx, "examples/traces")
	if err != nil {
		log.Fatal(err)
	}
	heldout, err := crystallize.LoadTraces(ctx, "examples/heldout")
	if err != nil {
		log.Fatal(err)
	}
	induced, err := crystallize.InduceSkills(ctx, traces, heldout, crystallize.InduceOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range induced.Accepted {
		fmt.Println("accepted:", s.Name)
	}
	for _, s := range induced.Rejected {
		fmt.Println("rejected:", s.Name, s.Reasons[0].Code)
	}
	// Output:
	// accepted: bump
	// rejected: triage heldout_missing
}

func ExampleValidatePlan() {
	v := crystallize.ValidatePlan([]byte(examplePlan))
	fmt.Println(v.Valid, v.GraphStats.NodeCount, v.GraphStats.EdgeCount)

	bad := crystallize.ValidatePlan([]byte(`{"schema_version": "1", "entry": "nope", "nodes": {"a": {"kind": "read_fact"}}}`))
	for _, p := range bad.Errors {
		fmt.Println(p)
	}
	// Output:
	// true 3 2
	// $.entry: entry_not_found: entry "nope" names no node
}

func ExampleCompilePlan() {
	g, err := crystallize.CompilePlan([]byte(examplePlan), "plan.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Entry, g.Nodes["check"]["kind"], g.Nodes["ship"]["mode"])
	// Output: read verify manual
}

func ExampleRenderPlan() {
	chart, err := crystallize.RenderPlan([]byte(examplePlan), "plan.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(chart)
	// Output:
	// flowchart TD
	//     n_read["read · read_fact<br/>Read the changelog"]
	//     n_check{{"check · verify"}}
	//     n_ship(("ship · human_gate"))
	//     n_read --> n_check
	//     n_check --> n_ship
	//     classDef entry stroke-width:3px
	//     class n_read entry
}

func ExampleValidateBundle() {
	v := crystallize.ValidateBundle(exampleBundle)
	fmt.Println("ok:", v.OK, "problems:", len(v.Problems))
	for _, c := range v.Checks {
		fmt.Println(c.Name, c.Status)
	}
	// Output:
	// ok: true problems: 0
	// manifest ok
	// workflow ok
	// report ok
	// eval_pack skipped
	// skill ok
	// fixtures ok
	// redaction ok
	// approval ok
}

func ExampleReadBundle() {
	b, err := crystallize.ReadBundle(exampleBundle)
	if err != nil {
		log.Fatal(err)
	}
	m := b.Manifest
	fmt.Println(m.Kind, m.Workflow.Name, m.Workflow.Path, m.Promotion.Criteria.Status)
	// Output: candidate bump workflow.star needs_approval
}
