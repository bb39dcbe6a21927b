package trace

import (
	"cmp"
	"slices"
)

// Normalize brings a decoded trace into the canonical form the later
// stages compare and hash. It is idempotent, and it is applied by the
// loader to every trace, so code downstream may rely on its rules:
//
//   - Capabilities and RequiredSecrets of each action are sorted and
//     deduplicated. They are sets; recorders list them in whatever order
//     they met them, and two repetitions of one procedure must compare
//     equal.
//   - Side effects of each action are sorted by (kind, target, capability,
//     mutation), stably, for the same reason: mining checks that every
//     example of a step has the same side effects, and order is not part of
//     what an action changes.
//   - A model_call action that records no model calls is counted as one:
//     it is a model call by definition, and savings estimates that count
//     remaining model calls would otherwise count it as free. Cost is
//     created when missing.
//   - When the trace has no Usage, it is computed as the sum of the
//     actions' costs, with wall time adding both cost.wall_ms and
//     duration_ms (after the rule above, so a model call counts). A
//     recorded Usage is kept as the recorder's own total; it may include
//     work that no action records.
func Normalize(t *Trace) {
	for i := range t.Actions {
		normalizeAction(&t.Actions[i])
	}
	if t.Usage == nil {
		u := &Usage{}
		for i := range t.Actions {
			a := &t.Actions[i]
			if c := a.Cost; c != nil {
				u.ModelCalls += c.ModelCalls
				u.InputTokens += c.InputTokens
				u.OutputTokens += c.OutputTokens
				u.TotalCostUSD += c.TotalCostUSD
				u.WallMS += c.WallMS
			}
			if a.DurationMS != nil {
				u.WallMS += *a.DurationMS
			}
		}
		t.Usage = u
	}
}

// sortedSet sorts s and removes duplicates in place. A nil slice stays nil
// and an empty one empty, so that normalization does not change what the
// encoder writes.
func sortedSet(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

func compareSideEffects(a, b SideEffect) int {
	return cmp.Or(
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Target, b.Target),
		cmp.Compare(a.Capability, b.Capability),
		cmp.Compare(a.Mutation, b.Mutation),
	)
}

// normalizeAction is Normalize for one action.
func normalizeAction(a *Action) {
	a.Capabilities = sortedSet(a.Capabilities)
	a.RequiredSecrets = sortedSet(a.RequiredSecrets)
	slices.SortStableFunc(a.SideEffects, compareSideEffects)
	if a.Kind == KindModelCall {
		if a.Cost == nil {
			a.Cost = &Cost{}
		}
		if a.Cost.ModelCalls == 0 {
			a.Cost.ModelCalls = 1
		}
	}
}
