package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// run builds a normalized trace of the procedure checkout → build → test,
// the checkout on branch, the test ending with exit code exit, between the
// given noise actions.
func run(id, branch string, exit int, before, after string) *trace.Trace {
	var actions []trace.Action
	if before != "" {
		actions = append(actions, trace.Action{ID: id + "-pre", Kind: trace.KindToolCall, Name: before})
	}
	actions = append(actions,
		trace.Action{ID: id + "-1", Kind: trace.KindToolCall, Name: "git.checkout", Parameters: map[string]any{"branch": branch, "repo": "acme/app"}},
		trace.Action{ID: id + "-2", Kind: trace.KindToolCall, Name: "make.build", Parameters: map[string]any{"target": "all"},
			SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "bin/app", Capability: "fs.write"}}},
		trace.Action{ID: id + "-3", Kind: trace.KindToolCall, Name: "go.test", Parameters: map[string]any{"packages": "./..."},
			Output: map[string]any{"exit_code": json.Number(fmt.Sprint(exit))}},
	)
	if after != "" {
		actions = append(actions, trace.Action{ID: id + "-post", Kind: trace.KindToolCall, Name: after})
	}
	t := &trace.Trace{Version: 1, ID: id, SourceHash: trace.HashBytes([]byte(id)), Actions: actions,
		Metadata: map[string]any{"goal": "build and test"}}
	trace.Normalize(t)
	return t
}

func codes(ps []candidate.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

func TestInduceAccepted(t *testing.T) {
	sources := []*trace.Trace{run("r1", "fix-1", 0, "plan", ""), run("r2", "fix-2", 0, "", "notify")}
	heldout := []*trace.Trace{run("h1", "fix-3", 0, "", "")}
	res, err := Induce(context.Background(), sources, heldout, InduceOptions{WorkflowName: "build_and_test", PackageName: "ci-workflows"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Accepted) != 1 || len(res.Rejected) != 0 {
		t.Fatalf("Induce = %d accepted, %d rejected %v; want 1 accepted", len(res.Accepted), len(res.Rejected), res.Rejected)
	}
	s := res.Accepted[0]
	sel := res.Report.Selected()
	if sel == nil || s.CandidateID != sel.ID {
		t.Fatalf("skill candidate %s, want the selected candidate %v", s.CandidateID, sel)
	}
	if want := candidate.SkillID(sel.ID, "build_and_test"); s.ID != want {
		t.Errorf("skill id = %s, want %s", s.ID, want)
	}
	if s.Name != "build-and-test" || s.Gate.Decision != skill.GateAccepted {
		t.Errorf("skill name %q decision %q, want build-and-test accepted", s.Name, s.Gate.Decision)
	}
	if s.Gate.SourceReplay != (skill.GateReplay{Compared: 2, Passed: 2}) || s.Gate.HeldoutReplay != (skill.GateHeldout{Compared: 1, Passed: 1}) {
		t.Errorf("gate replay source %+v held-out %+v, want 2/2 and 1/1", s.Gate.SourceReplay, s.Gate.HeldoutReplay)
	}
	gate, err := skill.GateJSON(s.Gate)
	if err != nil {
		t.Fatal(err)
	}
	if problems := skill.Check(s.Name, s.Markdown, gate); len(problems) > 0 {
		t.Errorf("CheckSkill(SKILL.md) = %v, want no problems", problems)
	}
	if !strings.Contains(string(s.Markdown), "name: \"build-and-test\"") {
		t.Errorf("SKILL.md does not name the skill:\n%s", s.Markdown)
	}

	// The same inputs give the same skill, byte for byte.
	again, err := Induce(context.Background(), sources, heldout, InduceOptions{WorkflowName: "build_and_test", PackageName: "ci-workflows"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(s.Markdown), string(again.Accepted[0].Markdown)); diff != "" {
		t.Errorf("SKILL.md differs between two runs (-first +second):\n%s", diff)
	}
}

func TestInduceRejected(t *testing.T) {
	sources := []*trace.Trace{run("r1", "fix-1", 0, "plan", ""), run("r2", "fix-2", 0, "", "notify")}
	tests := []struct {
		name    string
		heldout []*trace.Trace
		want    []string
		heldRep skill.GateHeldout
	}{
		{"no held-out trace", nil, []string{skill.CodeHeldoutMissing}, skill.GateHeldout{}},
		{"held-out of another procedure", []*trace.Trace{{ID: "other", Actions: []trace.Action{
			{ID: "o1", Kind: trace.KindToolCall, Name: "p"}, {ID: "o2", Kind: trace.KindToolCall, Name: "q"}}}},
			[]string{skill.CodeHeldoutMissing}, skill.GateHeldout{Unmatched: 1}},
		{"held-out drifts", []*trace.Trace{run("h1", "fix-3", 1, "", "")},
			[]string{skill.CodeHeldoutReplayFailed}, skill.GateHeldout{Compared: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Induce(context.Background(), sources, tt.heldout, InduceOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Accepted) != 0 || len(res.Rejected) != 1 {
				t.Fatalf("Induce = %d accepted, %d rejected; want 1 rejected", len(res.Accepted), len(res.Rejected))
			}
			r := res.Rejected[0]
			if diff := cmp.Diff(tt.want, codes(r.Reasons)); diff != "" {
				t.Errorf("rejection codes (-want +got):\n%s", diff)
			}
			if r.Gate.Decision != skill.GateRejected || r.Gate.HeldoutReplay != tt.heldRep {
				t.Errorf("gate decision %q held-out %+v, want rejected %+v", r.Gate.Decision, r.Gate.HeldoutReplay, tt.heldRep)
			}
			if r.CandidateID == "" || r.ID == "" || r.Name == "" {
				t.Errorf("rejected skill %+v lacks its candidate id, id or name", r)
			}
		})
	}
}

// TestInduceUnsafeCandidate checks that a candidate mining rejected is
// reported as a rejected skill with the candidate's rejection as reason.
func TestInduceUnsafeCandidate(t *testing.T) {
	r1, r2 := run("r1", "fix-1", 0, "", ""), run("r2", "fix-2", 0, "", "")
	// The build writes elsewhere in the second run: side effects that
	// differ between examples reject the candidate.
	r2.Actions[1].SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "bin/other", Capability: "fs.write"}}
	res, err := Induce(context.Background(), []*trace.Trace{r1, r2}, []*trace.Trace{run("h1", "fix-3", 0, "", "")}, InduceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Accepted) != 0 || len(res.Rejected) == 0 {
		t.Fatalf("Induce = %d accepted, %d rejected; want only rejected", len(res.Accepted), len(res.Rejected))
	}
	for _, r := range res.Rejected {
		if !slices.Contains(codes(r.Reasons), skill.CodeCandidateRejected) {
			t.Errorf("rejected skill %s codes %v, want %s among them", r.Name, codes(r.Reasons), skill.CodeCandidateRejected)
		}
	}
}

func TestInduceSingleTrace(t *testing.T) {
	src := run("r1", "fix-1", 0, "", "")
	res, err := Induce(context.Background(), []*trace.Trace{src}, []*trace.Trace{run("h1", "fix-1", 0, "", "")}, InduceOptions{WorkflowName: "build_and_test"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Report.Mining.MinExamples; got != 1 {
		t.Errorf("mining min examples = %d, want 1: the single-trace path", got)
	}
	if len(res.Accepted) != 1 {
		t.Fatalf("Induce(one trace) = %d accepted, rejected %v; want 1 accepted", len(res.Accepted), res.Rejected)
	}
	c := res.Report.Selected()
	if len(c.Steps) != len(src.Actions) || !slices.Contains(codes(c.Warnings), mine.CodeSingleTrace) {
		t.Errorf("candidate has %d steps and warnings %v; want every action a step and a %s warning", len(c.Steps), codes(c.Warnings), mine.CodeSingleTrace)
	}

	// Without a held-out trace the single trace's skill is rejected too.
	res, err = Induce(context.Background(), []*trace.Trace{src}, nil, InduceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Accepted) != 0 || len(res.Rejected) != 1 || !slices.Contains(codes(res.Rejected[0].Reasons), skill.CodeHeldoutMissing) {
		t.Errorf("Induce(one trace, no held-out) = %d accepted, %+v rejected; want rejected with %s", len(res.Accepted), res.Rejected, skill.CodeHeldoutMissing)
	}
}

// TestInduceExcludedHeldout checks that a held-out trace that broke policy
// is listed as excluded and not compared.
func TestInduceExcludedHeldout(t *testing.T) {
	bad := run("h-bad", "fix-3", 0, "", "")
	bad.Metadata["unresolved_policy_violation"] = true
	res, err := Induce(context.Background(), []*trace.Trace{run("r1", "a", 0, "", ""), run("r2", "b", 0, "", "")}, []*trace.Trace{bad}, InduceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []candidate.Exclusion{{TraceID: "h-bad", SourceHash: bad.SourceHash, Code: candidate.CodeUnresolvedPolicyViolation,
		Message: "trace metadata carries an unresolved policy violation", Role: candidate.RoleHeldout}}
	if diff := cmp.Diff(want, res.Report.ExcludedTraces); diff != "" {
		t.Errorf("excluded traces (-want +got):\n%s", diff)
	}
	if len(res.Rejected) != 1 || !slices.Contains(codes(res.Rejected[0].Reasons), skill.CodeHeldoutMissing) {
		t.Errorf("rejected = %+v, want one skill rejected with %s", res.Rejected, skill.CodeHeldoutMissing)
	}
}

func TestInduceErrors(t *testing.T) {
	r1 := run("r1", "a", 0, "", "")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name            string
		ctx             context.Context
		traces, heldout []*trace.Trace
		opts            InduceOptions
		want            error
	}{
		{"no traces", context.Background(), nil, nil, InduceOptions{}, ErrNoTraces},
		{"empty traces", context.Background(), []*trace.Trace{}, []*trace.Trace{r1}, InduceOptions{}, ErrNoTraces},
		{"nil trace", context.Background(), []*trace.Trace{r1, nil}, nil, InduceOptions{}, ErrNilTrace},
		{"nil held-out trace", context.Background(), []*trace.Trace{r1}, []*trace.Trace{nil}, InduceOptions{}, ErrNilTrace},
		{"min examples", context.Background(), []*trace.Trace{r1, run("r2", "b", 0, "", "")}, nil, InduceOptions{MinExamples: 1}, mine.ErrMinExamples},
		{"cancelled", cancelled, []*trace.Trace{r1, run("r2", "b", 0, "", "")}, nil, InduceOptions{}, context.Canceled},
		{"empty single trace", context.Background(), []*trace.Trace{{ID: "e"}}, nil, InduceOptions{}, mine.ErrEmptyTrace},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Induce(tt.ctx, tt.traces, tt.heldout, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Errorf("Induce = %v, %v; want error %v", res, err, tt.want)
			}
		})
	}
}
