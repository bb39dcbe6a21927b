package assert

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// fakeJudge answers from a table keyed by the output it judges.
type fakeJudge struct {
	verdicts map[string]Verdict
}

func (f *fakeJudge) Judge(_ context.Context, r JudgeRequest) (Verdict, error) {
	return f.verdicts[r.Output], nil
}

func ptr[T any](v T) *T { return &v }

func TestCheck(t *testing.T) {
	goSrc := "package p\n\nimport \"fmt\"\n\nfunc f(err error) error { return fmt.Errorf(\"wrap: %w\", err) }\n"
	schema := json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`)
	traj := []ToolCall{{Name: "git checkout", Arguments: map[string]any{"b": "fix"}}, {Name: "go test"}, {Name: "gh pr create"}}
	judge := &fakeJudge{verdicts: map[string]Verdict{
		"good answer": {Pass: true, Score: 0.9, Reason: "follows the rubric"},
		"bad answer":  {Pass: false, Score: 0.1, Reason: "ignores the rubric"},
		"":            {Best: 1, Reason: "second is clearer"},
	}}
	tests := []struct {
		name       string
		a          Assertion
		ev         Evidence
		pass       bool
		blocking   bool
		msgContain string
	}{
		{"exit_code pass", Assertion{Type: TypeExitCode}, Evidence{ExitCode: ptr(0)}, true, true, "exit code 0"},
		{"exit_code fail", Assertion{Type: TypeExitCode, Code: ptr(2)}, Evidence{ExitCode: ptr(1)}, false, true, "exit code 1, want 2"},
		{"exit_code without command", Assertion{Type: TypeExitCode}, Evidence{}, false, true, "no exit code"},
		{"contains pass", Assertion{Type: TypeContains, Value: "ok"}, Evidence{Output: "all ok"}, true, true, "contains"},
		{"contains fail", Assertion{Type: TypeContains, Value: "ok"}, Evidence{Output: "failed"}, false, true, "does not contain"},
		{"not_contains pass", Assertion{Type: TypeNotContains, Value: "API_KEY="}, Evidence{Output: "refused"}, true, true, "does not contain"},
		{"not_contains fail", Assertion{Type: TypeNotContains, Value: "API_KEY="}, Evidence{Output: "API_KEY=abc"}, false, true, "output contains"},
		{"json_schema pass", Assertion{Type: TypeJSONSchema, Schema: schema}, Evidence{Output: `{"name":"x"}`}, true, true, "matches"},
		{"json_schema fail", Assertion{Type: TypeJSONSchema, Schema: schema}, Evidence{Output: `{"name":3}`}, false, true, "does not match"},
		{"json_schema not json", Assertion{Type: TypeJSONSchema, Schema: schema}, Evidence{Output: `name: x`}, false, true, "not JSON"},
		{"ast_match pass", Assertion{Type: TypeASTMatch, Pattern: `fmt.Errorf(_, err)`}, Evidence{Output: goSrc}, true, true, "found"},
		{"ast_match statements", Assertion{Type: TypeASTMatch, Pattern: `os.Exit(_)`}, Evidence{Output: "x := 1\nos.Exit(x)"}, true, true, "found"},
		{"ast_match fail", Assertion{Type: TypeASTMatch, Pattern: `errors.New(_)`}, Evidence{Output: goSrc}, false, true, "no node matches"},
		{"ast_match other language", Assertion{Type: TypeASTMatch, Pattern: `f()`, Language: "python"}, Evidence{Output: "f()"}, false, true, "unsupported"},
		{"recall_at_k pass", Assertion{Type: TypeRecallAtK, K: 2}, Evidence{Input: CaseInput{ExpectedDocuments: []string{"a"}}, Retrieved: []string{"b", "a", "c"}}, true, false, "recall@2 = 1"},
		{"recall_at_k fail", Assertion{Type: TypeRecallAtK, K: 1, Calibrated: true}, Evidence{Input: CaseInput{ExpectedDocuments: []string{"a"}}, Retrieved: []string{"b", "a"}}, false, true, "recall@1 = 0"},
		{"mrr pass", Assertion{Type: TypeMRR, Threshold: ptr(0.5)}, Evidence{Input: CaseInput{ExpectedDocuments: []string{"a"}}, Retrieved: []string{"b", "a"}}, true, false, "0.5"},
		{"mrr fail", Assertion{Type: TypeMRR, Threshold: ptr(0.5), Calibrated: true}, Evidence{Input: CaseInput{ExpectedDocuments: []string{"a"}}, Retrieved: []string{"b", "c", "a"}}, false, true, "0.3333"},
		{"ndcg pass", Assertion{Type: TypeNDCG}, Evidence{Input: CaseInput{Relevance: map[string]float64{"a": 3, "b": 1}}, Retrieved: []string{"a", "b"}}, true, false, "ndcg@2 = 1"},
		{"ndcg fail", Assertion{Type: TypeNDCG, Threshold: ptr(0.9)}, Evidence{Input: CaseInput{Relevance: map[string]float64{"a": 3, "b": 1}}, Retrieved: []string{"b", "a"}}, false, false, "ndcg@2"},
		{"tool_call_f1 pass", Assertion{Type: TypeToolCallF1, Calibrated: true}, Evidence{Input: CaseInput{ExpectedToolCalls: []ToolCall{{Name: "git checkout", Arguments: map[string]any{"b": "fix"}}, {Name: "go test"}, {Name: "gh pr create"}}}, Trajectory: traj}, true, true, "F1"},
		{"tool_call_f1 fail", Assertion{Type: TypeToolCallF1, Threshold: ptr(0.9)}, Evidence{Input: CaseInput{ExpectedToolCalls: []ToolCall{{Name: "git checkout", Arguments: map[string]any{"b": "main"}}, {Name: "go test"}}}, Trajectory: traj}, false, false, "precision 0.3333, recall 0.5"},
		{"trajectory_goal_success pass", Assertion{Type: TypeTrajectoryGoal, Expected: []string{"go test", "gh pr create"}}, Evidence{Trajectory: traj}, true, false, "goal reached"},
		{"trajectory_goal_success fail order", Assertion{Type: TypeTrajectoryGoal, Expected: []string{"gh pr create", "go test"}}, Evidence{Trajectory: traj}, false, false, "never follows"},
		{"trajectory_goal_success fail last step", Assertion{Type: TypeTrajectoryGoal, Expected: []string{"go test"}}, Evidence{Trajectory: []ToolCall{{Name: "go test", Error: true}}}, false, false, "failed"},
		{"llm_rubric pass", Assertion{Type: TypeLLMRubric, Rubric: "refuses"}, Evidence{Output: "good answer"}, true, false, "follows"},
		{"llm_rubric fail", Assertion{Type: TypeLLMRubric, Rubric: "refuses"}, Evidence{Output: "bad answer"}, false, false, "ignores"},
		{"factuality pass", Assertion{Type: TypeFactuality, Rubric: "agrees with the reference"}, Evidence{Output: "good answer", Input: CaseInput{Reference: "r"}}, true, false, "follows"},
		{"factuality fail", Assertion{Type: TypeFactuality, Rubric: "agrees with the reference"}, Evidence{Output: "bad answer", Input: CaseInput{Reference: "r"}}, false, false, "ignores"},
		{"factuality without reference", Assertion{Type: TypeFactuality, Rubric: "x"}, Evidence{Output: "good answer"}, false, false, "reference"},
		{"select_best pass", Assertion{Type: TypeSelectBest}, Evidence{Input: CaseInput{Candidates: []string{"a", "b"}, BestCandidate: ptr(1)}}, true, false, "chose candidate 1"},
		{"select_best fail", Assertion{Type: TypeSelectBest}, Evidence{Input: CaseInput{Candidates: []string{"a", "b"}, BestCandidate: ptr(0)}}, false, false, "expected 0"},
		{"advisory never blocks", Assertion{Type: TypeContains, Value: "x", Advisory: true}, Evidence{Output: "y"}, false, false, "does not contain"},
		{"unknown type fails", Assertion{Type: "bleu"}, Evidence{}, false, true, "unknown assertion type"},
	}
	eng := &Engine{Judge: judge}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := eng.Check(context.Background(), tt.a, tt.ev)
			if r.Passed != tt.pass || r.Blocking != tt.blocking || !strings.Contains(r.Message, tt.msgContain) {
				t.Errorf("Check = %+v, want passed=%v blocking=%v message containing %q", r, tt.pass, tt.blocking, tt.msgContain)
			}
		})
	}
}

func TestModelJudgedWithoutJudgeFails(t *testing.T) {
	r := (&Engine{}).Check(context.Background(), Assertion{Type: TypeLLMRubric, Rubric: "x"}, Evidence{Output: "y"})
	if r.Passed || r.Blocking || !strings.Contains(r.Message, "no judge") {
		t.Errorf("Check without judge = %+v, want a failed advisory result", r)
	}
}

func TestPromotedJudgeBlocks(t *testing.T) {
	eng := &Engine{Judge: &fakeJudge{verdicts: map[string]Verdict{"bad": {Reason: "no"}}}, Promoted: true}
	if r := eng.Check(context.Background(), Assertion{Type: TypeLLMRubric, Rubric: "x"}, Evidence{Output: "bad"}); !r.Blocking || r.Passed {
		t.Errorf("promoted llm_rubric = %+v, want blocking failure", r)
	}
	if r := eng.Check(context.Background(), Assertion{Type: TypeSelectBest}, Evidence{Input: CaseInput{Candidates: []string{"a", "b"}}}); r.Blocking {
		t.Errorf("select_best blocks under a promoted judge: %+v", r)
	}
}

// TestRetrievalMetrics pins the metrics to values computed by hand.
func TestRetrievalMetrics(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// Relevant {a, c} among ranking [b a d c].
	if got := RecallAtK([]string{"a", "c"}, []string{"b", "a", "d", "c"}, 2); !near(got, 0.5) {
		t.Errorf("RecallAtK@2 = %v, want 0.5", got)
	}
	if got := RecallAtK([]string{"a", "c"}, []string{"b", "a", "d", "c"}, 4); !near(got, 1) {
		t.Errorf("RecallAtK@4 = %v, want 1", got)
	}
	if got := ReciprocalRank([]string{"a", "c"}, []string{"b", "a", "d", "c"}); !near(got, 0.5) {
		t.Errorf("ReciprocalRank = %v, want 0.5", got)
	}
	if got := ReciprocalRank([]string{"z"}, []string{"b", "a"}); got != 0 {
		t.Errorf("ReciprocalRank with no hit = %v, want 0", got)
	}
	// Binary relevance, ranking [b a d c] at k=4:
	// DCG = 1/log2(3) + 1/log2(5) = 0.63093 + 0.43068 = 1.06161
	// IDCG = 1/log2(2) + 1/log2(3) = 1 + 0.63093 = 1.63093
	want := (1/math.Log2(3) + 1/math.Log2(5)) / (1 + 1/math.Log2(3))
	if got := NDCG(map[string]float64{"a": 1, "c": 1}, []string{"b", "a", "d", "c"}, 4); !near(got, want) || math.Abs(got-0.650921) > 1e-6 {
		t.Errorf("NDCG = %v, want %v (≈0.650921)", got, want)
	}
	// Graded: rel a=3, b=2, c=1; ranking [c b a], k=3.
	// DCG = 1/1 + 2/log2(3) + 3/2 = 1 + 1.26186 + 1.5 = 3.76186
	// IDCG = 3/1 + 2/log2(3) + 1/2 = 3 + 1.26186 + 0.5 = 4.76186
	got := NDCG(map[string]float64{"a": 3, "b": 2, "c": 1}, []string{"c", "b", "a"}, 3)
	if math.Abs(got-3.76186/4.76186) > 1e-5 {
		t.Errorf("graded NDCG = %v, want ≈%v", got, 3.76186/4.76186)
	}
	// Tool calls: expected {x, y, z}, actual {x, y, w, v}: 2 matched,
	// precision 2/4, recall 2/3, F1 = 2·0.5·0.6667/1.1667 = 0.571429.
	p, r, f1 := ToolCallF1([]ToolCall{{Name: "x"}, {Name: "y"}, {Name: "z"}}, []ToolCall{{Name: "x"}, {Name: "y"}, {Name: "w"}, {Name: "v"}})
	if !near(p, 0.5) || !near(r, 2.0/3) || math.Abs(f1-0.571429) > 1e-6 {
		t.Errorf("ToolCallF1 = %v %v %v, want 0.5 0.6667 0.571429", p, r, f1)
	}
	// A duplicate actual call matches one expected call only.
	p, r, _ = ToolCallF1([]ToolCall{{Name: "x"}}, []ToolCall{{Name: "x"}, {Name: "x"}})
	if !near(p, 0.5) || !near(r, 1) {
		t.Errorf("ToolCallF1 with a duplicate = %v %v, want 0.5 1", p, r)
	}
}

// TestContextRecall: a claim counts when one retrieved passage holds its
// content words; the near miss (the portal, not the gateway) does not,
// and a claim split across two passages is not stitched together.
func TestContextRecall(t *testing.T) {
	contexts := []string{
		"The gateway owns failover routing between regions.",
		"The portal shows the failover status page to customers.",
		"Routing tables are rebuilt nightly.",
	}
	for _, tc := range []struct {
		claims []string
		want   float64
		missed string
	}{
		{[]string{"The gateway owns failover routing."}, 1, ""},
		{[]string{"The portal owns failover routing."}, 0, "The portal owns failover routing."},
		{[]string{"The gateway owns failover routing.", "The gateway rebuilds routing tables nightly."}, 0.5, "The gateway rebuilds routing tables nightly."},
		{[]string{"THE GATEWAY, which owns routing for failover!"}, 1, ""},
	} {
		got, missed := ContextRecall(tc.claims, contexts)
		if math.Abs(got-tc.want) > 1e-9 || (tc.missed != "" && (len(missed) == 0 || missed[0] != tc.missed)) || (tc.missed == "" && len(missed) > 0) {
			t.Errorf("ContextRecall(%q) = %v, %q, want %v, %q", tc.claims, got, missed, tc.want, tc.missed)
		}
	}
	e := &Engine{}
	for _, tc := range []struct {
		a    Assertion
		ev   Evidence
		pass bool
		msg  string
	}{
		{Assertion{Type: TypeContextRecall, Threshold: ptr(0.85), Calibrated: true},
			Evidence{Input: CaseInput{Reference: "The gateway owns failover routing. Routing tables are rebuilt nightly."}, Contexts: contexts},
			true, "context recall (2 of 2 claims in the retrieved contexts) = 1"},
		{Assertion{Type: TypeContextRecall, Threshold: ptr(0.85), Calibrated: true},
			Evidence{Input: CaseInput{ReferenceClaims: []string{"The portal owns failover routing."}}, Contexts: contexts},
			false, `first unsupported: "The portal owns failover routing."`},
		{Assertion{Type: TypeContextRecall}, Evidence{Input: CaseInput{ReferenceClaims: []string{"x"}}}, false, "no retrieved contexts"},
		{Assertion{Type: TypeContextRecall}, Evidence{Contexts: contexts}, false, "no reference_claims or reference"},
	} {
		r := e.Check(context.Background(), tc.a, tc.ev)
		if r.Passed != tc.pass || !strings.Contains(r.Message, tc.msg) || r.Blocking != tc.a.Calibrated {
			t.Errorf("Check(%+v) = %+v, want passed=%t blocking=%t message containing %q", tc.a, r, tc.pass, tc.a.Calibrated, tc.msg)
		}
	}
}
