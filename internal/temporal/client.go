package temporal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// StartOptions say how to start a run.
type StartOptions struct {
	// TaskQueue is "" for DefaultTaskQueue.
	TaskQueue string
	// Approve lists the boundaries decided in advance.
	Approve []string
	// RunID is "" for a new one (runner.NewRunID).
	RunID string
	// Now is the clock of a new run id; nil means time.Now.
	Now func() time.Time
}

// Started is a run just started and not waited for, as run --temporal
// --json without --wait reports it: its id and StatusRunning.
type Started struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// StartedRun is the run id started, as Started.
func StartedRun(id string) Started { return Started{RunID: id, Status: runstate.StatusRunning} }

// Start starts a run of w with params and returns its id, which is also
// its workflow id. A bundle that is not ready is refused here, before the
// server sees it, as a worker would refuse it.
func Start(ctx context.Context, c client.Client, w *runner.Workflow, params runner.Params, opts StartOptions) (string, error) {
	if w.Bundle == nil {
		return "", fmt.Errorf("%s is not a bundle: only an approved bundle runs on Temporal", w.Target)
	}
	if !w.Ready() {
		if w.Readiness != nil {
			return "", w.Readiness.Err()
		}
		return "", fmt.Errorf("%w: %s", runner.ErrNotReady, w.Target)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	id := opts.RunID
	if id == "" {
		id = runner.NewRunID(now())
	}
	queue := opts.TaskQueue
	if queue == "" {
		queue = DefaultTaskQueue
	}
	in := RunInput{RunID: id, Workflow: w.Name, WorkflowSHA256: w.SHA256, Params: params, Approve: opts.Approve}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: queue,
		Memo: map[string]any{"workflow": w.Name, "workflow_sha256": w.SHA256},
	}, WorkflowType, in)
	if err != nil {
		return "", fmt.Errorf("starting run of %s: %w", w.Name, err)
	}
	return id, nil
}

// Wait waits for run runID to end and returns how it ended. A run that
// ended without completing returns its RunOutput with an error.
func Wait(ctx context.Context, c client.Client, runID string) (*RunOutput, error) {
	var out RunOutput
	err := c.GetWorkflow(ctx, runID, "").Get(ctx, &out)
	if err == nil {
		return &out, nil
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if app.Type() == ErrTypeRun && app.HasDetails() {
			var end RunOutput
			if derr := app.Details(&end); derr == nil {
				return &end, fmt.Errorf("run %s %s: %s", runID, end.Status, end.Error)
			}
		}
		return nil, fmt.Errorf("run %s: %s", runID, app.Error())
	}
	return nil, fmt.Errorf("run %s: %w", runID, err)
}

// ErrNotWaiting: the run does not wait at the boundary a decision names.
var ErrNotWaiting = errors.New("run is not waiting at that boundary")

// Decide sends d for the boundary run runID waits at, and returns what
// the run made of it ("approved merge"). A run that waits at another
// boundary, or at none, is ErrNotWaiting, naming the one it waits at.
func Decide(ctx context.Context, c client.Client, runID, boundary string, d Decision) (string, error) {
	// The memo says where the run waits: a decision for another boundary
	// is refused here, since an Update waits for a worker to take it,
	// and none may be running.
	desc, err := describe(ctx, c, runID)
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return "", fmt.Errorf("no run %s", runID)
		}
		return "", fmt.Errorf("run %s: %w", runID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	if p := pendingOf(info.GetMemo().GetFields()); p == nil || p.Boundary != boundary || info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", notWaitingErr(runID, boundary, info.GetStatus(), p)
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: runID, UpdateName: boundary, Args: []any{d},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		var res string
		err = h.Get(ctx, &res)
		if err == nil {
			return res, nil
		}
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "", fmt.Errorf("no run %s: %w", runID, err)
	}
	if strings.Contains(err.Error(), "unknown update") {
		return "", notWaiting(ctx, c, runID, boundary)
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return "", fmt.Errorf("run %s: %s", runID, app.Error())
	}
	return "", fmt.Errorf("run %s: %w", runID, err)
}

// notWaiting says which boundary, if any, runID waits at instead.
func notWaiting(ctx context.Context, c client.Client, runID, boundary string) error {
	d, err := describe(ctx, c, runID)
	if err != nil {
		return fmt.Errorf("%w: run %s, boundary %s", ErrNotWaiting, runID, boundary)
	}
	info := d.GetWorkflowExecutionInfo()
	return notWaitingErr(runID, boundary, info.GetStatus(), pendingOf(info.GetMemo().GetFields()))
}

func notWaitingErr(runID, boundary string, status enumspb.WorkflowExecutionStatus, p *runstate.Pending) error {
	if p != nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("%w: run %s waits at %s, not %s", ErrNotWaiting, runID, p.Boundary, boundary)
	}
	return fmt.Errorf("%w: run %s is %s and waits at no boundary", ErrNotWaiting, runID, statusName(status))
}

// Run is one run as List reports it.
type Run struct {
	RunID    string `json:"run_id"`
	Workflow string `json:"workflow"`
	// Status is running, pending_approval, completed, failed, cancelled
	// or terminated (Temporal's, lowercased, with pending_approval for a
	// running run that waits at a boundary).
	Status  string            `json:"status"`
	Pending *runstate.Pending `json:"pending,omitempty"`
	Started time.Time         `json:"started"`
	Ended   *time.Time        `json:"ended,omitempty"`
}

// List lists the runs on the server's namespace, newest first.
func List(ctx context.Context, c client.Client, namespace string) ([]Run, error) {
	if namespace == "" {
		namespace = "default"
	}
	var runs []Run
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: namespace, Query: "WorkflowType = '" + WorkflowType + "'", NextPageToken: token,
		})
		if err != nil {
			return nil, fmt.Errorf("listing runs: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			r := Run{RunID: e.GetExecution().GetWorkflowId(), Status: statusName(e.GetStatus()), Started: e.GetStartTime().AsTime().UTC()}
			fields := e.GetMemo().GetFields()
			if p, ok := fields["workflow"]; ok {
				_ = converter.GetDefaultDataConverter().FromPayload(p, &r.Workflow)
			}
			if e.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				if r.Pending = pendingOf(fields); r.Pending != nil {
					r.Status = runstate.StatusPendingApproval
				}
			}
			if ct := e.GetCloseTime(); ct != nil {
				t := ct.AsTime().UTC()
				r.Ended = &t
			}
			runs = append(runs, r)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	slices.SortStableFunc(runs, func(a, b Run) int {
		if c := b.Started.Compare(a.Started); c != 0 {
			return c
		}
		return strings.Compare(a.RunID, b.RunID)
	})
	return runs, nil
}

// pendingOf reads the boundary a run waits at from its memo.
func pendingOf(fields map[string]*commonpb.Payload) *runstate.Pending {
	p, ok := fields["pending"]
	if !ok {
		return nil
	}
	var pend *runstate.Pending
	if err := converter.GetDefaultDataConverter().FromPayload(p, &pend); err != nil {
		return nil
	}
	return pend
}

// statusName is a Temporal execution status in our words.
func statusName(s enumspb.WorkflowExecutionStatus) string {
	switch s {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return runstate.StatusRunning
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return runstate.StatusCompleted
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return runstate.StatusFailed
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return runstate.StatusCancelled
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed_out"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW:
		return "continued_as_new"
	}
	return strings.ToLower(s.String())
}

// describe is the server's description of run runID.
func describe(ctx context.Context, c client.Client, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := c.DescribeWorkflow(ctx, runID, "")
	if err != nil {
		return nil, err
	}
	return d.RawResponse, nil
}
