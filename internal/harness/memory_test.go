package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// mapMemory is a Memory backend in a map, standing for an external
// memory service: Retain must work through the interface alone.
type mapMemory map[string]Lesson

func (m mapMemory) Lessons(_ context.Context, _ string) ([]Lesson, error) {
	var list []Lesson
	for _, l := range m {
		list = append(list, l)
	}
	return list, nil
}

func (m mapMemory) Put(_ context.Context, _ string, l Lesson) error {
	m[l.ID] = l
	return nil
}

func report(n int, gatePassed bool) *RunReport {
	return &RunReport{
		RunID: fmt.Sprintf("run_%d", n), ReportPath: fmt.Sprintf("reports/%d.json", n), Passed: gatePassed,
		Gates: []GateResult{{ID: "go-test", Command: "sh gates/go-test.sh", Blocks: true, Passed: gatePassed, ExitCode: map[bool]int{true: 0, false: 1}[gatePassed], Tail: "--- FAIL: TestX"}},
	}
}

func TestMemoryMaturesAndDecays(t *testing.T) {
	ctx := context.Background()
	mem := mapMemory{}
	// A failing run retains an anti-pattern but no lesson: lessons need
	// passing gates.
	if err := Retain(ctx, mem, "ph", 1, report(1, false)); err != nil {
		t.Fatal(err)
	}
	anti := mem["anti_pattern:gate/go-test"]
	if anti.Maturity != MaturityCandidate || anti.Text != "gate go-test fails (exit 1: --- FAIL: TestX)" || len(anti.Evidence) != 1 || anti.Evidence[0].RunID != "run_1" {
		t.Errorf("anti-pattern after a failure = %+v", anti)
	}
	if _, ok := mem["lesson:gate/go-test"]; ok {
		t.Error("a failing run retained a lesson")
	}
	// Passing runs mature the lesson: candidate, established at 3,
	// proven at 5.
	wantMaturity := map[int64]string{2: MaturityCandidate, 4: MaturityEstablished, 6: MaturityProven}
	for seq := int64(2); seq <= 6; seq++ {
		if err := Retain(ctx, mem, "ph", seq, report(int(seq), true)); err != nil {
			t.Fatal(err)
		}
		if w, ok := wantMaturity[seq]; ok && mem["lesson:gate/go-test"].Maturity != w {
			t.Errorf("after run %d the lesson is %s, want %s", seq, mem["lesson:gate/go-test"].Maturity, w)
		}
	}
	if l := mem["lesson:gate/go-test"]; l.Count != 5 || l.Evidence[len(l.Evidence)-1].ReportPath != "reports/6.json" {
		t.Errorf("lesson = %+v, want 5 runs of evidence linked to the last report", l)
	}
	// The anti-pattern has had no evidence since run 1: it decayed at
	// run 6 (5 runs later) from candidate to decayed.
	if got := mem["anti_pattern:gate/go-test"].Maturity; got != MaturityDecayed {
		t.Errorf("stale anti-pattern is %s, want decayed", got)
	}
	// Quiet runs (no gates) decay the proven lesson one level per window.
	quiet := &RunReport{RunID: "q", Passed: true}
	for seq := int64(7); seq <= 11; seq++ {
		if err := Retain(ctx, mem, "ph", seq, quiet); err != nil {
			t.Fatal(err)
		}
	}
	if got := mem["lesson:gate/go-test"].Maturity; got != MaturityEstablished {
		t.Errorf("lesson after 5 quiet runs is %s, want established", got)
	}
}

func TestStoreMemoryRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mem := StoreMemory{DB: db}
	if err := Retain(ctx, mem, "ph", 1, report(1, true)); err != nil {
		t.Fatal(err)
	}
	list, err := mem.Lessons(ctx, "ph")
	if err != nil || len(list) != 1 || list[0].ID != "lesson:gate/go-test" || list[0].Evidence[0].RunID != "run_1" {
		t.Errorf("stored lessons = %+v, %v", list, err)
	}
}

func TestDrift(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"gates/a.sh": "true\n", "evals/s.jsonl": "{}\n"})
	baseline := &RepoProfile{ProfileID: "rp_old", RiskHints: []RiskHint{{Family: FamilyDatabase, Signal: "migrations"}}}
	current := &RepoProfile{ProfileID: "rp_new", RiskHints: []RiskHint{{Family: FamilyAgent, Signal: "mcp-config"}}}
	m := &Manifest{
		RiskFamilies: []string{FamilyDatabase},
		Commands:     []Command{{ID: "a", Command: "sh gates/a.sh"}, {ID: "b", Command: "sh gates/b.sh", Kit: "database"}},
		EvalSuites:   []EvalSuite{{ID: "s", Path: "evals/s.jsonl"}, {ID: "gone", Path: "evals/gone.jsonl"}},
		Files:        []OwnedFile{{Path: "gates/a.sh", SHA256: hashBytes([]byte("false\n")), Kit: "database"}},
	}
	r := Drift(dir, current, baseline, m)
	var got []string
	for _, e := range r.Events {
		got = append(got, e.Kind+" "+e.Subject)
	}
	want := []string{"stale_gate b", "stale_suite gone", "edited_file gates/a.sh", "profile_changed rp_new", "new_risk agent", "removed_risk database"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("drift events = %v, want %v", got, want)
	}
	if r.BaselineProfileID != "rp_old" {
		t.Errorf("baseline = %s", r.BaselineProfileID)
	}
}

func TestTrajectoryFromTrace(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"traces/t.json": `{"version":1,"id":"t1","actions":[
{"id":"a1","kind":"model_call","name":"agent.plan"},
{"id":"a2","kind":"tool_call","name":"git checkout","parameters":{"b":"fix"}},
{"id":"a3","kind":"tool_call","name":"go test","metadata":{"error":true}},
{"id":"a4","kind":"tool_call","name":"go test"},
{"id":"a5","kind":"external_api_call","name":"gh pr create"}]}`})
	in := CaseInput{Trace: "traces/t.json", ExpectedToolCalls: []ToolCall{{Name: "git checkout", Arguments: map[string]any{"b": "fix"}}, {Name: "go test"}, {Name: "gh pr create"}}}
	ev, err := gather(context.Background(), dir, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Trajectory) != 4 || !ev.Trajectory[1].Error {
		t.Fatalf("trajectory = %+v, want 4 tool calls with the first go test failed", ev.Trajectory)
	}
	eng := &Engine{}
	// 3 of 4 calls expected: precision 0.75, recall 1, F1 = 6/7.
	r := eng.Check(context.Background(), Assertion{Type: TypeToolCallF1, Threshold: ptr(0.85)}, ev)
	if !r.Passed || r.Score < 0.857 || r.Score > 0.858 {
		t.Errorf("tool_call_f1 over a trace = %+v, want F1 6/7", r)
	}
	r = eng.Check(context.Background(), Assertion{Type: TypeTrajectoryGoal, Expected: []string{"go test", "gh pr create"}}, ev)
	if !r.Passed {
		t.Errorf("trajectory_goal_success over a trace = %+v", r)
	}
}
