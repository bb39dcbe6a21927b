package mine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// effectStep is a step whose examples have the side effects given, each
// with the parameters params[e] (JSON).
func effectStep(params []string, effects ...[]trace.SideEffect) stepView {
	v := stepView{index: 2}
	for e, l := range effects {
		a := act(fmt.Sprintf("e%d", e), trace.KindToolCall, "write", params[e])
		a.SideEffects = l
		v.actions = append(v.actions, &a)
	}
	return v
}

// TestStepSideEffectsAcrossExamples checks the side effects a step is
// built with: those every example had; where only the target differs
// and every example's target is the value of one parameter of the step,
// that parameter as the target; and otherwise a rejection that says
// what each example did, with none said as such.
func TestStepSideEffectsAcrossExamples(t *testing.T) {
	file := func(target string) trace.SideEffect { return trace.SideEffect{Kind: "file_write", Target: target} }
	ref := func(target string) trace.SideEffect { return trace.SideEffect{Kind: "git_ref", Target: target} }
	params := []string{`{"path":"a.md","tag":"v1"}`, `{"path":"b.md","tag":"v2"}`}
	for _, tt := range []struct {
		name    string
		effects [][]trace.SideEffect
		want    []trace.SideEffect
		problem string
	}{
		{"alike", [][]trace.SideEffect{{file("x.md")}, {file("x.md")}}, []trace.SideEffect{file("x.md")}, ""},
		{"the target is a parameter", [][]trace.SideEffect{{ref("v1"), file("a.md")}, {file("b.md"), ref("v2")}},
			[]trace.SideEffect{
				{Kind: "file_write", Target: "{path}", Metadata: map[string]any{"target_parameter": "path"}},
				{Kind: "git_ref", Target: "{tag}", Metadata: map[string]any{"target_parameter": "tag"}},
			}, ""},
		{"a target no parameter holds", [][]trace.SideEffect{{file("a.md")}, {file("c.md")}}, []trace.SideEffect{file("a.md")},
			"step 2 write has different side effects across examples: e0 has file_write a.md; e1 has file_write c.md"},
		{"another kind", [][]trace.SideEffect{{file("a.md")}, {ref("b.md")}}, []trace.SideEffect{file("a.md")},
			"step 2 write has different side effects across examples: e0 has file_write a.md; e1 has git_ref b.md"},
		{"one has none", [][]trace.SideEffect{{file("a.md")}, nil}, []trace.SideEffect{file("a.md")},
			"step 2 write has different side effects across examples: e0 has file_write a.md; e1 has no side effects"},
		{"one has more", [][]trace.SideEffect{{file("a.md")}, {file("b.md"), ref("v2")}}, []trace.SideEffect{file("a.md")},
			"step 2 write has different side effects across examples: e0 has file_write a.md; e1 has file_write b.md, git_ref v2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := stepSideEffects(effectStep(params, tt.effects...))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("side effects (-want +got):\n%s", diff)
			}
			switch {
			case tt.problem == "" && problem != nil:
				t.Errorf("problem %+v, want none", problem)
			case tt.problem != "" && (problem == nil || problem.Message != tt.problem || problem.Code != candidate.CodeDivergentSideEffects || problem.Step != 2):
				t.Errorf("problem %+v, want %q", problem, tt.problem)
			}
		})
	}
}

// TestDescribeEffectsListsFour checks that a rejection for divergent side
// effects quotes at most four examples.
func TestDescribeEffectsListsFour(t *testing.T) {
	var effects [][]trace.SideEffect
	var params []string
	for i := range 6 {
		effects = append(effects, []trace.SideEffect{{Kind: "file_write", Target: fmt.Sprintf("f%d.md", i)}})
		params = append(params, `{"path":"same.md"}`)
	}
	_, problem := stepSideEffects(effectStep(params, effects...))
	if problem == nil || strings.Count(problem.Message, " has file_write") != 4 {
		t.Errorf("problem %+v, want four examples quoted", problem)
	}
}
