package candidate

// The retry rule: which actions of a trace a candidate's steps stand for.
//
// Agents fail and try again: a git push is rejected, the agent pulls and
// pushes again; a test fails, the agent edits and runs it again. Mining
// and shadow replay must agree on what such a run is, or a procedure
// mined from it does not replay. FoldRetries is the one statement of the
// rule, which the gapped miner applies to find steps and shadow replay
// applies to align a candidate with a trace.
//
// A failed action is a failed attempt of the first later action with the
// same signature that succeeds, when that success comes at most
// RetryWindow non-observation actions after it: the attempt is folded
// into the success, which stands for the step and counts the attempts it
// folded. The file edits between a folded attempt and its success are the
// repair, and are folded too: what they were depends on what broke, so
// they are not part of the procedure. Everything else between them is
// left as it is (a git pull between a rejected push and the push that
// went through is an action of its own). A failed action that no success
// retries is an ordinary action: it may be a step (a call that failed in
// every run is still what the runs did), and the candidate says how often
// it failed. Observations take no part: they are neither attempts nor
// counted in the window.

// RetryWindow bounds how far a success looks back for the failed attempts
// it retries, in non-observation actions. A retry comes soon after the
// failure; a success much later is another use of the same command.
const RetryWindow = 16

// Attempt is what the retry rule reads of one action.
type Attempt struct {
	// Key is the action's signature, interned by the caller: two actions
	// are attempts of the same step when their keys are equal.
	Key         int32
	Observation bool
	Failed      bool
	// Edit is a file mutation, which between a failed attempt and its
	// success is the repair.
	Edit bool
	// Changes is an action that changes something the workflow would
	// have to do: it has side effects, or it is a person's approval.
	Changes bool
	// NeedsPerson is an action that requires a person's approval.
	NeedsPerson bool
}

// Fold is the part the retry rule gives an action.
type Fold uint8

// The parts of FoldRetries.
const (
	// FoldStep is an action that stands for itself: a success, with the
	// attempts it folded, or a failure that no success retried.
	FoldStep Fold = iota
	// FoldObservation is an observation: neither a step nor a gap.
	FoldObservation
	// FoldAttempt is a failed attempt folded into a later success.
	FoldAttempt
	// FoldRepair is a file edit between a folded attempt and its success.
	FoldRepair
)

// FoldRetries applies the retry rule to the actions of one trace, in
// order. It sets folds[i] to the part of attempts[i] and retries[i] to
// the number of failed attempts folded into attempts[i] (zero unless it
// is a step that succeeded after failures); both must be as long as
// attempts. scratch is reused between calls when not nil: it holds the
// indexes of the non-observation actions, and is returned.
//
// Cost: O(n·RetryWindow) for n actions, with no allocation once scratch
// has grown to the longest trace.
func FoldRetries(attempts []Attempt, folds []Fold, retries []int32, scratch []int32) []int32 {
	items := scratch[:0]
	for i, a := range attempts {
		retries[i] = 0
		if a.Observation {
			folds[i] = FoldObservation
			continue
		}
		folds[i] = FoldStep
		q := len(items)
		items = append(items, int32(i))
		if a.Failed {
			continue
		}
		// The failures this success retries: those of its key in the
		// window after the last success of the key (which retried the
		// ones before it).
		first := -1
		for k := q - 1; k >= 0 && k >= q-RetryWindow; k-- {
			j := items[k]
			b := attempts[j]
			if b.Key != a.Key || folds[j] != FoldStep {
				continue
			}
			if !b.Failed {
				break
			}
			folds[j] = FoldAttempt
			retries[i]++
			first = k
		}
		if first < 0 {
			continue
		}
		for k := first + 1; k < q; k++ {
			if j := items[k]; attempts[j].Edit && folds[j] == FoldStep {
				folds[j] = FoldRepair
			}
		}
	}
	return items
}

// MayInterleave is the gap rule: whether an action, given the part f the
// retry rule gave it, may sit between two steps of a gapped procedure.
// Mining counts an occurrence of a procedure, and picks it as an
// example, only when every action between its steps may; shadow replay
// lets exactly those actions interleave a candidate's steps. The two
// must agree, or mining counts as support, and picks as examples,
// occurrences its own replay refuses.
//
// What the retry rule folded (a retried attempt, its repair) and an
// observation may sit there, and so may a failure (it did nothing the
// workflow must do) and an action that changes nothing. An action that
// changes something may not: the workflow would not do it, so a run with
// it between the steps is not a run of the procedure. Nor may anything
// that needs a person, whatever its part.
func MayInterleave(a Attempt, f Fold) bool {
	return !a.NeedsPerson && (f != FoldStep || a.Failed || !a.Changes)
}
