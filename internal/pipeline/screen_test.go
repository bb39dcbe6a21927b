package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestScreen: held-out traces that mining would exclude (an unresolved
// policy violation, in the trace's metadata or an action's; a side
// effect of a fuzzy action) are left out of the evidence and listed in
// the report as held-out exclusions, after those already there; the
// others are returned in their order.
func TestScreen(t *testing.T) {
	no := false
	clean := func(id string) *trace.Trace {
		return &trace.Trace{Version: 1, ID: id, Source: id + ".json", SourceHash: "h-" + id, Actions: []trace.Action{
			{ID: "a1", Kind: "tool_call", Name: "git checkout"},
		}}
	}
	policy := clean("policy")
	policy.Metadata = map[string]any{"policy_violation": "unresolved"}
	actionPolicy := clean("action-policy")
	actionPolicy.Actions[0].Metadata = map[string]any{"unresolved_policy_violation": true}
	fuzzyWrite := clean("fuzzy-write")
	fuzzyWrite.Actions = append(fuzzyWrite.Actions, trace.Action{
		ID: "a2", Kind: "tool_call", Name: "write summary", Deterministic: &no,
		SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "summary.md"}},
	})
	first, last := clean("first"), clean("last")

	mined := candidate.Exclusion{TraceID: "m", Code: candidate.CodeUnresolvedPolicyViolation}
	r := &candidate.Report{ExcludedTraces: []candidate.Exclusion{mined}, ExcludedTraceCount: 1}
	got := Screen(r, []*trace.Trace{first, policy, actionPolicy, fuzzyWrite, last})

	var ids []string
	for _, tr := range got {
		ids = append(ids, tr.ID)
	}
	if diff := cmp.Diff([]string{"first", "last"}, ids); diff != "" {
		t.Errorf("Screen kept (-want +got):\n%s", diff)
	}
	want := []candidate.Exclusion{
		mined,
		{TraceID: "policy", Source: "policy.json", SourceHash: "h-policy", Code: candidate.CodeUnresolvedPolicyViolation,
			Message: "trace metadata carries an unresolved policy violation", Role: candidate.RoleHeldout},
		{TraceID: "action-policy", Source: "action-policy.json", SourceHash: "h-action-policy", Code: candidate.CodeUnresolvedPolicyViolation,
			ActionID: "a1", Message: "action a1 carries an unresolved policy violation", Role: candidate.RoleHeldout},
		{TraceID: "fuzzy-write", Source: "fuzzy-write.json", SourceHash: "h-fuzzy-write", Code: candidate.CodeNondeterministicEffect,
			ActionID: "a2", Message: "action a2 (write summary) has side effects but is fuzzy or nondeterministic, so its effects cannot be replayed", Role: candidate.RoleHeldout},
	}
	if diff := cmp.Diff(want, r.ExcludedTraces); diff != "" {
		t.Errorf("excluded traces (-want +got):\n%s", diff)
	}
	if r.ExcludedTraceCount != 4 {
		t.Errorf("ExcludedTraceCount = %d, want 4", r.ExcludedTraceCount)
	}

	// Nothing held out is nothing returned, never nil.
	if got := Screen(&candidate.Report{}, nil); got == nil || len(got) != 0 {
		t.Errorf("Screen of no traces = %#v, want an empty slice", got)
	}
}
