package mine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestSingle(t *testing.T) {
	yes := true
	approve := act("a3", trace.KindToolCall, "git.push", `{"branch":"release/v1"}`)
	approve.Approval = &trace.Approval{Required: true, Boundary: "recovery_review"}
	model := act("a4", trace.KindModelCall, "review", `{"version":"1.0.1"}`)
	model.Fuzzy = &yes
	tr := mk("run",
		act("a1", trace.KindToolCall, "git.checkout", `{"branch":"release/v1"}`),
		act("a2", trace.KindToolCall, "git.checkout", `{"branch":"release/v1"}`),
		approve, model)
	trace.Normalize(tr)
	r, err := Single(context.Background(), tr, Options{WorkflowName: "Cut release", GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Selected()
	if c == nil {
		t.Fatalf("Single selected nothing; rejected %+v, warnings %+v", r.RejectedCandidates, r.Warnings)
	}
	// Every action is a step, repeats included: no mining.
	var names []string
	for _, s := range c.Steps {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"git.checkout", "git.checkout", "git.push", "review"}, names); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if c.Name != "cut_release" || c.Support != 1 || len(c.Parameters) != 0 || len(c.Examples) != 1 || c.Examples[0].StartIndex != 0 {
		t.Errorf("Single candidate name %q support %d parameters %v examples %+v", c.Name, c.Support, c.Parameters, c.Examples)
	}
	if got := c.Examples[0].ActionIDs; !cmp.Equal(got, []string{"a1", "a2", "a3", "a4"}) {
		t.Errorf("example action ids = %v", got)
	}
	if want := candidateID(c.SequenceSignature, c.Examples); c.ID != want {
		t.Errorf("id = %s, want %s", c.ID, want)
	}
	if c.Steps[3].Segment != candidate.Fuzzy || c.Steps[2].Approval == nil || len(c.ApprovalPoints) != 1 {
		t.Errorf("fuzzy segment %v, approval %+v, points %+v", c.Steps[3].Segment, c.Steps[2].Approval, c.ApprovalPoints)
	}
	codes := map[string]bool{}
	for _, w := range c.Warnings {
		codes[w.Code] = true
	}
	if !codes[CodeSingleTrace] || !codes[candidate.CodeFuzzySegment] {
		t.Errorf("warnings %+v; want %s and %s", c.Warnings, CodeSingleTrace, candidate.CodeFuzzySegment)
	}
	if r.SourceTraceCount != 1 || r.Mining.Actions != 4 || r.Mining.DistinctSignatures != 3 || r.Mining.RepeatsFound != 0 || r.GeneratedAt != "2026-01-01T00:00:00Z" {
		t.Errorf("report counts %+v, %+v", r.SourceTraceCount, r.Mining)
	}
}

func TestSingleNoCandidate(t *testing.T) {
	no := false
	mut := act("a1", trace.KindFileMutation, "write", `{"path":"x"}`)
	mut.Deterministic = &no
	mut.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "x"}}
	r, err := Single(context.Background(), mk("bad", mut), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Selected() != nil || r.ExcludedTraceCount != 1 || r.ExcludedTraces[0].Code != candidate.CodeNondeterministicEffect {
		t.Errorf("Single(nondeterministic side effect) = selected %v, excluded %+v; want none and %s", r.SelectedCandidateID, r.ExcludedTraces, candidate.CodeNondeterministicEffect)
	}

	_, err = Single(context.Background(), mk("empty"), Options{})
	if !errors.Is(err, ErrEmptyTrace) {
		t.Errorf("Single(empty) error = %v, want %v", err, ErrEmptyTrace)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Single(ctx, mk("run", noise("a")), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Single(cancelled) error = %v, want %v", err, context.Canceled)
	}
}
