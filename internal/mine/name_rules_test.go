package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestStepsNameWithoutSteps checks that a procedure with no step to name
// it after is still named, as a workflow.
func TestStepsNameWithoutSteps(t *testing.T) {
	if got := stepsName(nil); got != "workflow" {
		t.Errorf("stepsName(no steps) = %q, want workflow", got)
	}
}

// TestAskedBeforeUnreadableTime checks that a step whose time cannot be
// read was asked for by no prompt: none can be placed before it.
func TestAskedBeforeUnreadableTime(t *testing.T) {
	tr := &trace.Trace{Metadata: map[string]any{trace.MetaPrompts: []any{
		map[string]any{"timestamp": "2026-01-02T10:00:00Z", "text": "commit and push these changes"},
	}}}
	if got := askedBefore(tr, "yesterday"); got != "" {
		t.Errorf("askedBefore(yesterday) = %q, want none", got)
	}
	if got := askedBefore(tr, "2026-01-02T10:00:01Z"); got == "" {
		t.Error("askedBefore(a readable time after the prompt) = none, want the prompt")
	}
}
