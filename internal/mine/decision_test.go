package mine

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestDecisionOptions(t *testing.T) {
	ask := func(options any) *trace.Action {
		a := act("q", trace.KindHumanApproval, "ask_user", `{"question": "Deploy where?"}`)
		if options != nil {
			a.Metadata = map[string]any{"options": options}
		}
		return &a
	}
	tests := []struct {
		name    string
		actions []*trace.Action
		want    []string
	}{
		{"same options in every example",
			[]*trace.Action{ask(decodeAny(`["staging", "production"]`)), ask([]string{"staging", "production"})},
			[]string{"staging", "production"}},
		{"different options", []*trace.Action{ask([]any{"staging", "production"}), ask([]any{"production", "staging"})}, nil},
		{"one example without options", []*trace.Action{ask([]any{"a", "b"}), ask(nil)}, nil},
		{"a single option is no choice", []*trace.Action{ask([]any{"a"}), ask([]any{"a"})}, nil},
		{"repeated option", []*trace.Action{ask([]any{"a", "a"}), ask([]any{"a", "a"})}, nil},
		{"empty option", []*trace.Action{ask([]any{"a", " "}), ask([]any{"a", " "})}, nil},
		{"not strings", []*trace.Action{ask([]any{"a", 2}), ask([]any{"a", 2})}, nil},
		{"not an approval", func() []*trace.Action {
			a := act("t", trace.KindToolCall, "deploy", "")
			a.Metadata = map[string]any{"options": []any{"a", "b"}}
			return []*trace.Action{&a, &a}
		}(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decisionOptions(stepView{index: 1, actions: tt.actions})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decisionOptions (-want +got):\n%s", diff)
			}
		})
	}
}

// A question with the same options between two steps of every trace
// becomes a decision step of the candidate.
func TestMineDecisionStep(t *testing.T) {
	var traces []*trace.Trace
	for i := range 3 {
		id := fmt.Sprintf("t%d", i)
		q := act(id+"-2", trace.KindHumanApproval, "ask_user", `{"question": "Deploy where?"}`)
		q.Approval = &trace.Approval{Prompt: "Deploy where?", Required: true, Boundary: "decision"}
		q.Metadata = map[string]any{"options": []any{"staging", "production"}}
		q.Output = []string{"staging", "production", "staging"}[i]
		traces = append(traces, mk(id, act(id+"-1", trace.KindToolCall, "build", ""), q, act(id+"-3", trace.KindToolCall, "deploy", "")))
	}
	c := mustMine(t, traces, Options{}).Selected()
	if c == nil || len(c.Steps) != 3 {
		t.Fatalf("selected candidate = %+v, want 3 steps", c)
	}
	if diff := cmp.Diff([]string{"staging", "production"}, c.Steps[1].Options); diff != "" {
		t.Errorf("step 2 options (-want +got):\n%s", diff)
	}
	if c.Steps[0].Options != nil || c.Steps[2].Options != nil {
		t.Errorf("options on steps that ask nothing: %q, %q", c.Steps[0].Options, c.Steps[2].Options)
	}
}
