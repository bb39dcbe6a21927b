package trace

import (
	"slices"
	"strings"
)

// PolicyViolation reports whether the trace carries an unresolved policy
// violation, and in which action ("" when it is marked on the trace
// itself). Mining excludes such traces: a procedure learned from a run
// that broke policy would teach the workflow to break it again.
//
// A metadata map marks a violation when a key, compared case-insensitively,
//
//   - contains "unresolved_policy_violation", or is
//     "policy_violation_unresolved" or "policy_violation", and its value is
//     true, the string "unresolved" (in any case), or a non-empty array
//     (the list of open violations); or
//   - is "policy_status" with the value "unresolved" (in any case).
//
// These are the markers the recorders of the original tool write; a
// resolved violation (false, "resolved", an empty list) does not count.
// The trace's metadata is checked first, then the actions' in order, so
// the action reported is the first one marked.
func (t *Trace) PolicyViolation() (actionID string, ok bool) {
	if unresolvedPolicyViolation(t.Metadata) {
		return "", true
	}
	for i := range t.Actions {
		if unresolvedPolicyViolation(t.Actions[i].Metadata) {
			return t.Actions[i].ID, true
		}
	}
	return "", false
}

func unresolvedPolicyViolation(md map[string]any) bool {
	for key, v := range md {
		if policyMarker(key, v) {
			return true
		}
	}
	return false
}

// policyKey is what a metadata member's name says about a policy
// violation: nothing, a violation marker, or the policy status.
type policyKey int

const (
	notPolicyKey policyKey = iota
	violationKey
	statusKey
)

func policyKeyOf(key string) policyKey {
	k := strings.ToLower(key)
	switch {
	case strings.Contains(k, "unresolved_policy_violation") || k == "policy_violation_unresolved" || k == "policy_violation":
		return violationKey
	case k == "policy_status":
		return statusKey
	}
	return notPolicyKey
}

// policyMarker reports whether the metadata member key: v marks an
// unresolved policy violation (see Trace.PolicyViolation).
func policyMarker(key string, v any) bool {
	switch policyKeyOf(key) {
	case violationKey:
		switch x := v.(type) {
		case bool:
			return x
		case string:
			return strings.EqualFold(x, "unresolved")
		case []any:
			return len(x) > 0
		}
	case statusKey:
		s, ok := v.(string)
		return ok && strings.EqualFold(s, "unresolved")
	}
	return false
}

// NondeterministicSideEffect reports whether the action changes something
// outside the agent in a way a replay cannot be expected to reproduce: it
// has side effects, and it is marked deterministic: false or fuzzy: true,
// or its metadata has nondeterministic_side_effect: true, or one of its side
// effects has metadata nondeterministic: true. Mining rejects sequences
// containing such actions, since a workflow cannot promise their effects.
// An action whose determinism is not recorded counts as deterministic.
func (a *Action) NondeterministicSideEffect() bool {
	if len(a.SideEffects) == 0 {
		return false
	}
	if (a.Deterministic != nil && !*a.Deterministic) || (a.Fuzzy != nil && *a.Fuzzy) {
		return true
	}
	if isTrue(a.Metadata["nondeterministic_side_effect"]) {
		return true
	}
	return slices.ContainsFunc(a.SideEffects, func(s SideEffect) bool {
		return isTrue(s.Metadata["nondeterministic"])
	})
}

func isTrue(v any) bool {
	b, ok := v.(bool)
	return ok && b
}
