package runner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// Remedy is what a caller can change to get past an error, said in the
// terms of this package (Options fields, the approval ledger) rather than
// of any front end: the command line words it as flags, an MCP server as
// what its client may do.
type Remedy int

const (
	// RemedyAdmit: a bundle that is not ready runs once it is approved,
	// as a rehearsal (Options.DryRun), or anyway when the caller says so
	// (Options.AllowUnapproved, which the run records).
	RemedyAdmit Remedy = iota + 1
	// RemedyDryRun: a rehearsal (Options.DryRun) calls no model, so a
	// model step needs no provider.
	RemedyDryRun
	// RemedyApprove: the approval ledger under StateDir holds no
	// authenticated approval; recording one there admits the bundle.
	RemedyApprove
)

// RemedyError is an error the caller can get past by its Remedy. Its
// message says what is wrong and nothing about how a front end would fix
// it; errors.Is and errors.As see the error it wraps.
type RemedyError struct {
	Err    error
	Remedy Remedy
	// StateDir is the state directory the remedy applies to
	// (RemedyApprove).
	StateDir string
}

func (e *RemedyError) Error() string { return e.Err.Error() }
func (e *RemedyError) Unwrap() error { return e.Err }

// withRemedy wraps err, when it is not nil, with the remedy r.
func withRemedy(err error, r Remedy, stateDir string) error {
	if err == nil {
		return nil
	}
	return &RemedyError{Err: err, Remedy: r, StateDir: stateDir}
}

// DecisionError says that a decision given to Resume does not answer
// what the suspended run waits for. Waiting names that (an approval of a
// boundary, or nothing); Options, when the run waits for a decision, are
// the answers it takes.
type DecisionError struct {
	RunID, Decide string
	// Waiting is what the run waits for when it is not a decision:
	// "nothing" or "approval of boundary NAME".
	Waiting string
	// Decision and Options are the decision the run waits for and its
	// options, when Decide is not one of them.
	Decision string
	Options  []string
}

func (e *DecisionError) Error() string {
	if e.Waiting != "" {
		return fmt.Sprintf("decision %q: run %s waits for %s, not for a decision", e.Decide, e.RunID, e.Waiting)
	}
	return fmt.Sprintf("decision %q: not an option of decision %s (options: %s)", e.Decide, e.Decision, strings.Join(e.Options, ", "))
}

// CheckDecision returns a *DecisionError when decide, an answer to give
// Resume, does not answer what run j waits for; an empty decide is none.
// Resume makes the same check, but a caller makes it before anything
// runs, so that a typo does not fail a run whose earlier steps had side
// effects.
func (j *Journal) CheckDecision(decide string) error {
	p := j.Pending
	if decide == "" {
		return nil
	}
	if p == nil || p.Kind != runstate.PendingDecision {
		what := "nothing"
		if p != nil {
			what = "approval of boundary " + p.Boundary
		}
		return &DecisionError{RunID: j.RunID, Decide: decide, Waiting: what}
	}
	if !slices.Contains(p.Options, decide) {
		return &DecisionError{RunID: j.RunID, Decide: decide, Decision: p.Boundary, Options: p.Options}
	}
	return nil
}
