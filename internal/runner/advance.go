package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// Driving a run from outside.
//
// A durable-execution engine (package temporal) keeps a run's state in
// its own history and performs each step as a separate, retried task,
// possibly on another machine. Advance is the seam it uses: the journal
// that lets Resume continue a suspended run (journal.go) is exactly the
// state such an engine needs, so the engine holds the journal and calls
// Advance once per step. Each call runs the workflow from the start,
// answers every journaled step from the journal without executing it,
// performs the one step after them through the same host as Run (the
// same capability checks, grants, secrets and records), and stops before
// the step after that. A run is therefore a deterministic function of
// its parameters and the journal, whichever process advances it, and a
// step an earlier call performed is never performed again.
//
// Nothing is written while the run goes on: the journal Advance returns
// is the engine's to keep (secret values replaced, as in journal.json).
// When the run ends (completed, failed, rejected, cancelled) it is
// recorded as Run records it, trace.json and session.md under
// <StateDir>/runs/<run-id>/, so mining reads it like any other run.

// errYield stops a driven run before a step the call must not perform.
var errYield = errors.New("yield: the step belongs to the next advance")

// NewJournal is the journal of a driven run that has not started: run
// runID of w with params, the boundaries in approve decided in advance.
func NewJournal(w *Workflow, runID string, params Params, approve []string) *Journal {
	if params == nil {
		params = Params{}
	}
	return &Journal{
		RunID: runID, Status: runstate.StatusRunning, Workflow: w.Name, WorkflowSHA256: w.SHA256,
		Params: params, Approve: slices.Clone(approve), Calls: []JournalCall{},
	}
}

// Advance runs w one step further than j records (see above) and returns
// the run's journal with that step added. Its Status says what happened:
// StatusRunning when another step is to come, StatusPendingApproval when
// the run waits at the undecided boundary j.Pending (a later Advance with
// the boundary in opts.Approve or opts.Reject, or opts.Decide for a
// decision, goes on), or the status the run ended with, in which case
// the Result is the run's, recorded as Run records it. From opts it takes
// what Resume does; opts.RunID, DryRun, AllowUnapproved and MaxSteps are
// the journal's. The bundle's readiness is decided on every call, so a
// bundle whose approval was withdrawn, or whose workflow changed
// (ErrJournal), stops its runs at their next step.
func Advance(ctx context.Context, w *Workflow, j *Journal, opts Options) (*Journal, *Result, error) {
	if j == nil || j.RunID == "" {
		return nil, nil, fmt.Errorf("%w: no run id", ErrJournal)
	}
	switch j.Status {
	case runstate.StatusRunning, runstate.StatusPendingApproval:
	default:
		return nil, nil, fmt.Errorf("%w: run %s is %s", ErrJournal, j.RunID, j.Status)
	}
	if w.SHA256 != j.WorkflowSHA256 {
		return nil, nil, fmt.Errorf("%w: %s has sha256 %s, but run %s runs %s; the workflow changed", ErrJournal, w.File, w.SHA256, j.RunID, j.WorkflowSHA256)
	}
	for i, c := range j.Calls {
		if c.Step != i+1 {
			return nil, nil, fmt.Errorf("%w: journal call %d is step %d", ErrJournal, i, c.Step)
		}
	}
	for _, b := range opts.Reject {
		if slices.Contains(opts.Approve, b) {
			return nil, nil, fmt.Errorf("boundary %s is both approved and rejected", b)
		}
	}
	if p := j.Pending; opts.Decide != "" && p != nil && p.Kind == runstate.PendingDecision && !slices.Contains(p.Options, opts.Decide) {
		return nil, nil, fmt.Errorf("%w: %q is not an option of %s (options: %s)", ErrDecision, opts.Decide, p.Boundary, quoteList(p.Options))
	}
	cfg := opts.Config
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	opts.RunID = j.RunID
	opts.DryRun = j.DryRun
	opts.AllowUnapproved = j.Unapproved
	opts.MaxSteps = j.MaxSteps
	opts.OnStart = nil
	if err := admit(w, opts); err != nil {
		return nil, nil, err
	}
	if err := checkParams(w, j.Params); err != nil {
		return nil, nil, err
	}
	if err := Check(w, cfg, opts.Tools); err != nil {
		return nil, nil, err
	}
	approve := slices.Clone(j.Approve)
	for _, b := range opts.Approve {
		if !slices.Contains(approve, b) {
			approve = append(approve, b)
		}
	}
	opts.Approve = approve
	opts.Verify = j.Verify
	opts, exp, err := prepare(w, cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	opts = opts.withDefaults()
	h := newHost(ctx, w, cfg, opts)
	h.expect = exp
	h.driven = true
	h.journal = j
	h.replayUntil = len(j.Calls) + 1
	h.actions = slices.Clone(j.Actions)
	h.res.Receipts = slices.Clone(j.Receipts)
	for _, p := range j.Phases {
		h.phases = append(h.phases, runrecord.Phase{Title: p.Title, Lines: p.Lines, Loose: true})
	}
	c := j.Counts
	h.res.Steps, h.res.ToolCalls, h.res.ModelCalls, h.res.Approvals = c.Steps, c.ToolCalls, c.ModelCalls, c.Approvals
	h.res.TokensUsed, h.res.CostUSD, h.model = c.TokensUsed, c.CostUSD, c.Model
	h.calls = slices.Clone(j.Calls)
	h.res.Started = opts.Now()
	if j.Started != "" {
		if t, err := time.Parse(time.RFC3339Nano, j.Started); err == nil {
			h.res.Started = t
		}
	}
	res, err := h.run(j.Params)
	// The snapshot keeps the boundaries approved so far, as a resumed
	// run's journal does: a boundary the workflow crosses twice is
	// approved once.
	return h.snapshot(), res, err
}

// yielding reports whether step is past the one step a driven run
// performs in this call.
func (h *host) yielding(step int) bool { return h.driven && step > h.replayUntil }

// NewRunID is a new run id, as Run makes one: the time and 48 random
// bits, usable as a directory name and as an engine's workflow id.
func NewRunID(now time.Time) string { return newRunID(now) }
