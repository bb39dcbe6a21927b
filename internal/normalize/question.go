package normalize

import (
	"maps"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// AskUser is the action name of a question an agent asked the person it
// works for.
const AskUser = "ask_user"

// questionActions reads an AskUserQuestion call,
//
//	{"questions": [{"question": "…", "header": "…",
//	                "options": [{"label": "…", "description": "…"}],
//	                "multiSelect": false}]}
//
// as one human decision when it asks exactly one single-select question
// whose options all have a label; anything else returns nil, and Actions
// makes it the ordinary tool call it was before. The answer, the tool's
// result, stays the action's output.
func questionActions(c Call) []trace.Action {
	qs, ok := c.Args["questions"].([]any)
	if !ok || len(qs) != 1 {
		return nil
	}
	q, ok := qs[0].(map[string]any)
	if !ok {
		return nil
	}
	text, _ := q["question"].(string)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if multi, _ := q["multiSelect"].(bool); multi {
		return nil
	}
	opts, ok := q["options"].([]any)
	if !ok || len(opts) == 0 {
		return nil
	}
	labels := make([]any, len(opts))
	for i, o := range opts {
		m, _ := o.(map[string]any)
		label, _ := m["label"].(string)
		if strings.TrimSpace(label) == "" {
			return nil
		}
		labels[i] = label
	}
	return []trace.Action{{
		Kind:       trace.KindHumanApproval,
		Name:       AskUser,
		Parameters: map[string]any{"question": text},
		Inputs:     maps.Clone(c.Args),
		Approval:   &trace.Approval{Prompt: text, Required: true, Boundary: "decision"},
		Metadata:   map[string]any{"options": labels},
	}}
}
