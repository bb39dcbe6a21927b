package mine

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestExclusionMessages checks that an excluded trace says why in words a
// reviewer reads: the action that carries an unresolved policy
// violation, or the trace's metadata when no action does, and the action
// whose side effects cannot be replayed.
func TestExclusionMessages(t *testing.T) {
	pair := func(id string) []trace.Action {
		return []trace.Action{act(id+"-1", trace.KindToolCall, "a", ""), act(id+"-2", trace.KindToolCall, "b", "")}
	}
	whole := mk("whole", pair("whole")...)
	whole.Metadata = map[string]any{"unresolved_policy_violation": true}
	action := mk("action", pair("action")...)
	action.Actions[1].Metadata = map[string]any{"unresolved_policy_violation": []any{"p1"}}
	fz := true
	nondet := mk("nondet", pair("nondet")...)
	nondet.Actions[1].Fuzzy = &fz
	nondet.Actions[1].SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "x"}}
	for _, tt := range []struct {
		t    *trace.Trace
		want string
	}{
		{whole, "trace metadata carries an unresolved policy violation"},
		{action, "action action-2 carries an unresolved policy violation"},
		{nondet, "action nondet-2 (b) has side effects but is fuzzy or nondeterministic, so its effects cannot be replayed"},
	} {
		ex, ok := Excluded(tt.t)
		if !ok || ex.Message != tt.want {
			t.Errorf("%s: excluded %v, message %q; want %q", tt.t.ID, ok, ex.Message, tt.want)
		}
	}
}
