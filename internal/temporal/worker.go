package temporal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

// DialOptions reach a Temporal server.
type DialOptions struct {
	// Address is the server's host:port.
	Address string
	// Namespace is "" for the default namespace.
	Namespace string
	// Log receives the SDK's warnings and errors; nil discards them.
	Log io.Writer
}

// Dial connects to the server.
func Dial(o DialOptions) (client.Client, error) {
	if o.Address == "" {
		return nil, errors.New("no Temporal server address")
	}
	c, err := client.Dial(client.Options{HostPort: o.Address, Namespace: o.Namespace, Logger: logger(o.Log)})
	if err != nil {
		return nil, fmt.Errorf("connecting to Temporal at %s: %w", o.Address, err)
	}
	return c, nil
}

// logger writes the SDK's warnings and errors to w; its info lines (a
// line per poll and task) are left out.
func logger(w io.Writer) log.Logger {
	if w == nil {
		w = io.Discard
	}
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// WorkerOptions say what a worker serves and how it runs steps.
type WorkerOptions struct {
	// TaskQueue is "" for DefaultTaskQueue.
	TaskQueue string
	// Bundles are the workflows served. Each must be ready
	// (bundle.Ready) unless it is a bare .star file, which only tests
	// and embedders pass.
	Bundles []*runner.Workflow
	// Run are the options of every step: Config (whose [temporal] table
	// gives the steps' timeouts and retries), Tools, Getenv, Environ,
	// StateDir (where ended runs are recorded), Log. The approval and
	// run-identity fields are the run's own and are ignored.
	Run runner.Options
}

// NewWorker makes a worker that serves opts.Bundles on c; Run or Start
// starts it. It refuses a bundle that is not ready, listing every one.
func NewWorker(c client.Client, opts WorkerOptions) (worker.Worker, error) {
	reg, err := newRegistry(opts)
	if err != nil {
		return nil, err
	}
	queue := opts.TaskQueue
	if queue == "" {
		queue = DefaultTaskQueue
	}
	run := opts.Run
	run.Approve, run.Reject, run.Decide, run.Prompter, run.OnStart = nil, nil, "", nil, nil
	w := worker.New(c, queue, worker.Options{})
	RegisterWith(w, reg, run)
	return w, nil
}

// registrar is what RegisterWith needs of a worker or a replayer.
type registrar interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
}

// RegisterWith registers the workflow (and, on a worker, the activity)
// for reg on w.
func RegisterWith(w registrar, reg registry, run runner.Options) {
	w.RegisterWorkflowWithOptions(reg.run, workflow.RegisterOptions{Name: WorkflowType})
	if aw, ok := w.(worker.ActivityRegistry); ok {
		a := &activities{reg: reg, opts: run}
		aw.RegisterActivityWithOptions(a.step, activity.RegisterOptions{Name: StepActivityType})
	}
}

// newRegistry checks the bundles and derives each one's step options
// from the configuration.
func newRegistry(opts WorkerOptions) (registry, error) {
	cfg := opts.Run.Config
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	stepTimeout, approvalTimeout, initial, maximum, err := cfg.Temporal.Durations()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.File, err)
	}
	if stepTimeout == 0 {
		stepTimeout = cfg.StepTimeout() + time.Minute
	}
	if initial == 0 {
		initial = time.Second
	}
	retry := &temporal.RetryPolicy{
		InitialInterval:        initial,
		BackoffCoefficient:     cfg.Temporal.BackoffCoefficient,
		MaximumInterval:        maximum,
		MaximumAttempts:        int32(cfg.Temporal.MaximumAttempts),
		NonRetryableErrorTypes: []string{ErrTypeRefused, ErrTypeRun},
	}
	if retry.BackoffCoefficient == 0 {
		retry.BackoffCoefficient = 2
	}
	reg := registry{}
	var errs []error
	for _, w := range opts.Bundles {
		if w.Bundle != nil && !w.Ready() {
			msg := "not ready"
			if w.Readiness != nil {
				msg = w.Readiness.Err().Error()
			}
			errs = append(errs, fmt.Errorf("%s: %s", w.Target, msg))
			continue
		}
		reg[key(w.Name, w.SHA256)] = &served{
			w:               w,
			step:            workflow.ActivityOptions{StartToCloseTimeout: stepTimeout, RetryPolicy: retry},
			approvalTimeout: approvalTimeout,
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("refusing bundles that are not ready to run: %w", errors.Join(errs...))
	}
	if len(reg) == 0 {
		return nil, errors.New("no bundle to serve")
	}
	return reg, nil
}

// NewReplayer is a workflow replayer for the runs of bundles: a history
// recorded by a worker replays through it when the workflow it ran is
// among bundles, and fails when it is not.
func NewReplayer(bundles []*runner.Workflow) (worker.WorkflowReplayer, error) {
	reg, err := newRegistry(WorkerOptions{Bundles: bundles})
	if err != nil {
		return nil, err
	}
	r := worker.NewWorkflowReplayer()
	RegisterWith(r, reg, runner.Options{})
	return r, nil
}
