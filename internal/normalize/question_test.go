package normalize

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestQuestionTool(t *testing.T) {
	option := func(label string) P { return P{"label": label, "description": "about " + label} }
	question := func(q P) Call {
		return Call{ID: "toolu_q", Tool: "AskUserQuestion", Args: P{"questions": []any{q}}, Result: "User chose: staging"}
	}
	decision := &trace.Approval{Prompt: "Deploy where?", Required: true, Boundary: "decision"}
	tests := []struct {
		name     string
		call     Call
		kind     trace.Kind
		action   string
		params   map[string]any
		approval *trace.Approval
		options  any
	}{
		{
			name: "one single-select question",
			call: question(P{"question": "Deploy where?", "header": "Target",
				"options": []any{option("staging"), option("production")}, "multiSelect": false}),
			kind: trace.KindHumanApproval, action: AskUser, params: P{"question": "Deploy where?"},
			approval: decision, options: []any{"staging", "production"},
		},
		{
			name: "multiSelect absent is single-select",
			call: question(P{"question": "Deploy where?", "options": []any{option("a"), option("b"), option("c")}}),
			kind: trace.KindHumanApproval, action: AskUser, params: P{"question": "Deploy where?"},
			approval: decision, options: []any{"a", "b", "c"},
		},
		{
			name: "multi-select stays a tool call",
			call: question(P{"question": "Deploy where?", "options": []any{option("a"), option("b")}, "multiSelect": true}),
			kind: trace.KindToolCall, action: "AskUserQuestion",
		},
		{
			name: "two questions stay a tool call",
			call: Call{ID: "toolu_q", Tool: "AskUserQuestion", Args: P{"questions": []any{
				P{"question": "Deploy where?", "options": []any{option("a"), option("b")}},
				P{"question": "When?", "options": []any{option("now"), option("later")}},
			}}},
			kind: trace.KindToolCall, action: "AskUserQuestion",
		},
		{
			name: "an option without a label stays a tool call",
			call: question(P{"question": "Deploy where?", "options": []any{option("a"), P{"description": "b"}}}),
			kind: trace.KindToolCall, action: "AskUserQuestion",
		},
		{
			name: "no question text stays a tool call",
			call: question(P{"question": " ", "options": []any{option("a"), option("b")}}),
			kind: trace.KindToolCall, action: "AskUserQuestion",
		},
		{
			name: "malformed arguments stay a tool call",
			call: Call{ID: "toolu_q", Tool: "AskUserQuestion", Args: P{"questions": "Deploy where?"}},
			kind: trace.KindToolCall, action: "AskUserQuestion",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acts := Default().Actions(tt.call)
			if len(acts) != 1 {
				t.Fatalf("Actions = %d actions, want 1: %+v", len(acts), acts)
			}
			a := acts[0]
			if a.ID != "toolu_q" || a.Kind != tt.kind || a.Name != tt.action {
				t.Errorf("action %s %s %s, want toolu_q %s %s", a.ID, a.Kind, a.Name, tt.kind, tt.action)
			}
			if a.Metadata["agent_tool"] != "AskUserQuestion" {
				t.Errorf("metadata agent_tool = %v", a.Metadata["agent_tool"])
			}
			if tt.kind != trace.KindHumanApproval {
				if !cmp.Equal(a.Parameters, map[string]any(tt.call.Args)) || a.Approval != nil || a.Metadata["options"] != nil {
					t.Errorf("tool call: parameters %v approval %v options %v, want the arguments and no decision", a.Parameters, a.Approval, a.Metadata["options"])
				}
				return
			}
			if diff := cmp.Diff(tt.params, a.Parameters); diff != "" {
				t.Errorf("parameters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.approval, a.Approval); diff != "" {
				t.Errorf("approval (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.options, a.Metadata["options"]); diff != "" {
				t.Errorf("metadata options (-want +got):\n%s", diff)
			}
			if a.Output != "User chose: staging" {
				t.Errorf("output = %v, want the answer", a.Output)
			}
		})
	}
}
