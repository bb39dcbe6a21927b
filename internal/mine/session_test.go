package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestSessionOfTrace checks the session a hold-out keeps together: the
// session a subagent's part or a continuation names, else the trace's
// own.
func TestSessionOfTrace(t *testing.T) {
	if got := Session(mk("s1")); got != "s1" {
		t.Errorf("a session's own trace: %q, want s1", got)
	}
	if got := Session(continued(mk("s1.agent-a"), "s1")); got != "s1" {
		t.Errorf("a continuation: %q, want s1", got)
	}
	if got := Session(&trace.Trace{ID: "s2", Metadata: map[string]any{"parent_session_id": 7}}); got != "s2" {
		t.Errorf("a parent that is no string: %q, want the trace's own s2", got)
	}
}
