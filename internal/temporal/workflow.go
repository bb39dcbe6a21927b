package temporal

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// Names registered with Temporal.
const (
	// WorkflowType is the one workflow type: a run of a bundle.
	WorkflowType = "crystallize.run"
	// StepActivityType performs one step of a run.
	StepActivityType = "crystallize.step"
	// StateQuery answers a run's State.
	StateQuery = "state"
	// DefaultTaskQueue is the task queue when none is given.
	DefaultTaskQueue = "crystallize"
)

// Error types of the failures no retry can fix.
const (
	// ErrTypeRefused: the worker does not serve the bundle, the bundle is
	// not ready, or its workflow is not the one the run pinned.
	ErrTypeRefused = "crystallize.refused"
	// ErrTypeRun: the run ended without completing (failed, rejected,
	// cancelled); its record says why.
	ErrTypeRun = "crystallize.run"
)

// RunInput starts a run: workflow Workflow of the bundle whose workflow
// file has sha256 WorkflowSHA256, with Params, the boundaries in Approve
// decided in advance. RunID is the run's id, the workflow id and the name
// of its record directory.
type RunInput struct {
	RunID          string        `json:"run_id"`
	Workflow       string        `json:"workflow"`
	WorkflowSHA256 string        `json:"workflow_sha256"`
	Params         runner.Params `json:"params"`
	Approve        []string      `json:"approve,omitempty"`
}

// RunOutput is how a run ended. Dir is its record directory on the
// worker that finished it.
type RunOutput struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Dir    string `json:"dir,omitempty"`
	Output any    `json:"output,omitempty"`
	Steps  int    `json:"steps"`
}

// StepInput is one activity: the run's journal, and the decision of the
// boundary it waits at, if any.
type StepInput struct {
	Workflow       string          `json:"workflow"`
	WorkflowSHA256 string          `json:"workflow_sha256"`
	Journal        *runner.Journal `json:"journal"`
	Approve        []string        `json:"approve,omitempty"`
	Reject         []string        `json:"reject,omitempty"`
	Decide         string          `json:"decide,omitempty"`
}

// StepOutput is the journal one step further, and the run's end when it
// ended.
type StepOutput struct {
	Journal *runner.Journal `json:"journal"`
	End     *RunOutput      `json:"end,omitempty"`
}

// Decision answers a boundary: an approval (Approve, or not to reject)
// or, for ctx.request_decision, the Option chosen.
type Decision struct {
	Approve bool   `json:"approve"`
	Option  string `json:"option,omitempty"`
	// Actor says who decided, for the worker's log.
	Actor string `json:"actor,omitempty"`
}

// State is what a run is doing, as its StateQuery and memo say.
type State struct {
	Status  string            `json:"status"`
	Steps   int               `json:"steps"`
	Pending *runstate.Pending `json:"pending,omitempty"`
}

// served is one bundle a worker serves: its workflow as the worker
// loaded it, and the activity options of its steps.
type served struct {
	w    *runner.Workflow
	step workflow.ActivityOptions
	// approvalTimeout bounds a wait for a decision; 0 waits forever.
	approvalTimeout time.Duration
}

// registry is what a worker serves, by workflow name and sha256. It is
// filled when the worker is made and never changes, so the workflow code
// reading it is deterministic for the worker's life.
type registry map[string]*served

func key(name, sha string) string { return name + "@" + sha }

// pinned returns the bundle in serves, or an error saying why the
// worker cannot run it.
func (r registry) pinned(in RunInput) (*served, error) {
	if s, ok := r[key(in.Workflow, in.WorkflowSHA256)]; ok {
		return s, nil
	}
	var have []string
	for _, s := range r {
		if s.w.Name == in.Workflow {
			have = append(have, s.w.SHA256)
		}
	}
	if len(have) == 0 {
		return nil, fmt.Errorf("run %s: this worker serves no workflow %s", in.RunID, in.Workflow)
	}
	slices.Sort(have)
	return nil, fmt.Errorf("run %s: workflow %s changed: the run pinned sha256 %s, this worker has %v; a run must replay against the workflow it ran", in.RunID, in.Workflow, in.WorkflowSHA256, have)
}

// run is RunWorkflow for the worker's registry.
func (r registry) run(ctx workflow.Context, in RunInput) (*RunOutput, error) {
	s, err := r.pinned(in)
	if err != nil {
		if workflow.IsReplaying(ctx) {
			// The history was made by a workflow this worker does not
			// hold: failing the task (not the run) leaves the run to a
			// worker that holds it, and makes a replay test fail.
			panic(err.Error())
		}
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil)
	}
	state := State{Status: runstate.StatusRunning}
	if err := workflow.SetQueryHandler(ctx, StateQuery, func() (State, error) { return state, nil }); err != nil {
		return nil, err
	}
	actx := workflow.WithActivityOptions(ctx, s.step)
	approve := slices.Clone(in.Approve)
	if approve == nil {
		approve = []string{}
	}
	params := in.Params
	if params == nil {
		params = runner.Params{}
	}
	next := StepInput{
		Workflow: in.Workflow, WorkflowSHA256: in.WorkflowSHA256,
		Journal: &runner.Journal{
			RunID: in.RunID, Status: runstate.StatusRunning,
			Workflow: in.Workflow, WorkflowSHA256: in.WorkflowSHA256,
			Params: params, Approve: approve, Calls: []runner.JournalCall{},
		},
	}
	for {
		var out StepOutput
		if err := workflow.ExecuteActivity(actx, StepActivityType, next).Get(ctx, &out); err != nil {
			return nil, err
		}
		if out.End != nil {
			if out.End.Status != runstate.StatusCompleted {
				return nil, temporal.NewNonRetryableApplicationError(
					fmt.Sprintf("run %s %s: %s", in.RunID, out.End.Status, out.End.Error), ErrTypeRun, nil, out.End)
			}
			return out.End, nil
		}
		j := out.Journal
		if j == nil {
			return nil, temporal.NewNonRetryableApplicationError("step returned no journal", ErrTypeRun, nil)
		}
		state.Steps = len(j.Calls)
		next = StepInput{Workflow: in.Workflow, WorkflowSHA256: in.WorkflowSHA256, Journal: j}
		if j.Status != runstate.StatusPendingApproval || j.Pending == nil {
			continue
		}
		d, err := r.await(ctx, s, &state, j.Pending)
		if err != nil {
			return nil, err
		}
		switch {
		case d == nil:
			next.Reject = []string{j.Pending.Boundary} // not decided in time
		case j.Pending.Kind == runstate.PendingDecision:
			next.Decide = d.Option
		case d.Approve:
			next.Approve = []string{j.Pending.Boundary}
		default:
			next.Reject = []string{j.Pending.Boundary}
		}
	}
}

// await waits for the decision of the boundary p, sent as the Update
// named after it; nil when the approval timeout passed first.
func (r registry) await(ctx workflow.Context, s *served, state *State, p *runstate.Pending) (*Decision, error) {
	state.Status, state.Pending = runstate.StatusPendingApproval, p
	if err := workflow.UpsertMemo(ctx, map[string]any{"pending": p}); err != nil {
		return nil, err
	}
	var got *Decision
	validate := func(_ workflow.Context, d Decision) error {
		if got != nil {
			return fmt.Errorf("boundary %s is already decided", p.Boundary)
		}
		return checkDecision(p, d)
	}
	handle := func(_ workflow.Context, d Decision) (string, error) {
		got = &d
		return describeDecision(p, d), nil
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, p.Boundary, handle, workflow.UpdateHandlerOptions{Validator: validate}); err != nil {
		return nil, err
	}
	decided := func() bool { return got != nil }
	if s.approvalTimeout > 0 {
		if _, err := workflow.AwaitWithTimeout(ctx, s.approvalTimeout, decided); err != nil {
			return nil, err
		}
	} else if err := workflow.Await(ctx, decided); err != nil {
		return nil, err
	}
	state.Status, state.Pending = runstate.StatusRunning, nil
	if err := workflow.UpsertMemo(ctx, map[string]any{"pending": nil}); err != nil {
		return nil, err
	}
	return got, nil
}

// checkDecision reports whether d answers p: an option of a decision,
// a plain yes or no for an approval.
func checkDecision(p *runstate.Pending, d Decision) error {
	if p.Kind == runstate.PendingDecision {
		if !slices.Contains(p.Options, d.Option) {
			return fmt.Errorf("%w: %q is not an option of %s (options: %v)", runner.ErrDecision, d.Option, p.Boundary, p.Options)
		}
		return nil
	}
	if d.Option != "" {
		return fmt.Errorf("boundary %s is an approval, not a decision: approve or reject it", p.Boundary)
	}
	return nil
}

func describeDecision(p *runstate.Pending, d Decision) string {
	switch {
	case p.Kind == runstate.PendingDecision:
		return "decided " + p.Boundary + ": " + d.Option
	case d.Approve:
		return "approved " + p.Boundary
	}
	return "rejected " + p.Boundary
}

// activities performs the steps of the bundles a worker serves.
type activities struct {
	reg  registry
	opts runner.Options
}

// step is StepActivity: it reloads the bundle (its readiness and bytes
// as they are now) and advances the run by one step.
func (a *activities) step(ctx context.Context, in StepInput) (*StepOutput, error) {
	s, err := a.reg.pinned(RunInput{RunID: in.Journal.RunID, Workflow: in.Workflow, WorkflowSHA256: in.WorkflowSHA256})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil)
	}
	w, err := runner.Load(s.w.Target)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil)
	}
	opts := a.opts
	opts.Approve, opts.Reject, opts.Decide = in.Approve, in.Reject, in.Decide
	j, res, err := runner.Advance(ctx, w, in.Journal, opts)
	if j == nil {
		// Refused before the workflow ran: not ready, changed, bad
		// parameters or bindings. Another attempt would be refused too.
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil)
	}
	switch j.Status {
	case runstate.StatusRunning, runstate.StatusPendingApproval:
		return &StepOutput{Journal: j}, nil
	}
	if res == nil || res.Dir == "" {
		return nil, fmt.Errorf("run %s ended %s but was not recorded: %w", j.RunID, j.Status, err)
	}
	return &StepOutput{End: &RunOutput{
		RunID: res.RunID, Status: res.Status, Error: res.Error, Dir: res.Dir, Output: res.Output, Steps: res.Steps,
	}}, nil
}
