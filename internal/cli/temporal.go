package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/sessionindex"
	"github.com/crystallize-dev/crystallize/internal/temporal"
)

// temporalFlags reach a Temporal server.
type temporalFlags struct {
	address, namespace, taskQueue string
}

func (t *temporalFlags) register(fs *pflag.FlagSet, queue bool) {
	fs.StringVar(&t.address, "temporal", "", "address (host:port) of the Temporal server")
	fs.StringVar(&t.namespace, "namespace", "", "Temporal namespace (default: the server's default namespace)")
	if queue {
		fs.StringVar(&t.taskQueue, "task-queue", temporal.DefaultTaskQueue, "Temporal task queue of the workers")
	}
}

const workerDoc = `worker serves approved bundles as durable Temporal workflows: runs started
with "crystallize run BUNDLE --temporal ADDR" are executed by whichever worker
of the task queue serves their bundle, one activity per step, each step
performed exactly as a local run performs it (the configuration's bindings,
grants and secrets, --config, default ./crystallize.toml). A run survives
the loss of its worker: another worker replays its history and goes on
from the last completed step. Approvals and decisions wait for
"crystallize approve-run". A run that ends is recorded under --state-dir,
trace.json and session.md, as a local run is.

--bundles names bundle directories, or directories of bundles (repeatable).
Every one must be ready (approved, its workflow the one approved): the
worker refuses to start otherwise, naming each that is not. Steps are
timed and retried as crystallize.toml [temporal] says (step_timeout,
approval_timeout, initial_interval, backoff_coefficient, maximum_interval,
maximum_attempts). The worker runs until interrupted.`

func newWorkerCmd(e *env) *cobra.Command {
	var tf temporalFlags
	var bundles []string
	var config, stateDir string
	cmd := &cobra.Command{
		Use:     "worker --temporal ADDR --bundles DIR... [--namespace NS] [--task-queue Q]",
		Short:   "Serve approved bundles as durable Temporal workflows",
		Long:    workerDoc,
		Example: `  crystallize worker --temporal localhost:7233 --bundles bundles/`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tf.address == "" {
				return usagef("--temporal ADDR is required")
			}
			if len(bundles) == 0 {
				return usagef("--bundles DIR is required")
			}
			cfg, err := (&runFlags{config: config}).loadConfig()
			if err != nil {
				return err
			}
			ws, err := temporal.LoadBundles(bundles)
			if err != nil {
				return err
			}
			c, err := temporal.Dial(temporal.DialOptions{Address: tf.address, Namespace: tf.namespace, Log: e.stderr})
			if err != nil {
				return err
			}
			defer c.Close()
			opts := runOptions(cmd, e, cfg, stateDir, nil)
			opts.Prompter, opts.OnStart, opts.Inbox = nil, nil, nil
			wk, err := temporal.NewWorker(c, temporal.WorkerOptions{TaskQueue: tf.taskQueue, Bundles: ws, Run: opts})
			if err != nil {
				return err
			}
			if err := wk.Start(); err != nil {
				return fmt.Errorf("starting worker: %w", err)
			}
			for _, w := range ws {
				fmt.Fprintf(e.stdout, "serving %s (%s, sha256 %s)\n", w.Name, w.Target, w.SHA256[:12])
			}
			fmt.Fprintf(e.stdout, "worker on task queue %s at %s\n", tf.taskQueue, tf.address)
			<-cmd.Context().Done()
			wk.Stop()
			return nil
		},
	}
	fs := cmd.Flags()
	tf.register(fs, true)
	fs.StringArrayVar(&bundles, "bundles", nil, "a bundle directory, or a directory of bundles, to serve (repeatable)")
	configFlag(fs, &config)
	runStateDirFlag(fs, &stateDir)
	return cmd
}

// runTemporal starts a run of target on Temporal, and with --wait waits
// for it to end.
func runTemporal(cmd *cobra.Command, e *env, f *runFlags, target string) error {
	switch {
	case f.dryRun, f.allowUnapproved, f.verify, f.check, f.fallback != "", cmd.Flags().Changed("max-steps"):
		return usagef("--temporal runs an approved bundle as it is; it cannot be combined with --dry-run, --allow-unapproved, --verify, --check, --fallback or --max-steps")
	}
	params, err := f.readParams()
	if err != nil {
		return err
	}
	w, err := runner.Load(target)
	if err != nil {
		return err
	}
	c, err := temporal.Dial(temporal.DialOptions{Address: f.temporal.address, Namespace: f.temporal.namespace, Log: e.stderr})
	if err != nil {
		return err
	}
	defer c.Close()
	id, err := temporal.Start(cmd.Context(), c, w, params, temporal.StartOptions{TaskQueue: f.temporal.taskQueue, Approve: f.approve})
	if err != nil {
		return err
	}
	if !f.wait {
		if f.asJSON {
			return writeJSON(e.stdout, temporal.StartedRun(id))
		}
		fmt.Fprintln(e.stdout, id)
		return nil
	}
	out, err := temporal.Wait(cmd.Context(), c, id)
	if out == nil {
		return err
	}
	if f.asJSON {
		if jerr := writeJSON(e.stdout, out); jerr != nil {
			return jerr
		}
		return err
	}
	fmt.Fprintf(e.stdout, "Run %s of %s: %s\n  steps: %d\n  record: %s\n", out.RunID, w.Name, out.Status, out.Steps, out.Dir)
	return err
}

const approveRunDoc = `approve-run decides the boundary a run on Temporal waits at: it approves
it (the default), rejects it with --reject, or, for a decision the workflow
asks for (ctx.request_decision), chooses --decide OPTION. The run goes on
from there on its workers; the decision is recorded in its trace as a local
approval is. A run that waits at another boundary, or at none, is refused
with the boundary it does wait at.`

func newApproveRunCmd(e *env) *cobra.Command {
	var tf temporalFlags
	var boundary, decide string
	var reject bool
	cmd := &cobra.Command{
		Use:     "approve-run RUN-ID --boundary B [--reject | --decide OPTION] --temporal ADDR",
		Short:   "Decide the approval or decision a run on Temporal waits at",
		Long:    approveRunDoc,
		Example: `  crystallize approve-run 20260112T101500Z-5f2a9c0e11d4 --boundary merge --temporal localhost:7233`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if tf.address == "" {
				return usagef("--temporal ADDR is required")
			}
			if boundary == "" {
				return usagef("--boundary B is required")
			}
			if reject && decide != "" {
				return usagef("--reject and --decide cannot be combined")
			}
			c, err := temporal.Dial(temporal.DialOptions{Address: tf.address, Namespace: tf.namespace, Log: e.stderr})
			if err != nil {
				return err
			}
			defer c.Close()
			res, err := temporal.Decide(cmd.Context(), c, args[0], boundary, temporal.Decision{Approve: !reject, Option: decide, Actor: "approve-run"})
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "run %s: %s\n", args[0], res)
			return nil
		},
	}
	fs := cmd.Flags()
	tf.register(fs, false)
	fs.StringVar(&boundary, "boundary", "", "the boundary (or decision name) the run waits at")
	fs.BoolVar(&reject, "reject", false, "reject the boundary instead of approving it")
	fs.StringVar(&decide, "decide", "", "the option chosen, for a decision")
	return cmd
}

const runsDoc = `runs lists the runs on a Temporal server, newest first: id, workflow,
status (running, pending_approval, completed, failed, cancelled,
terminated) and, for a run that waits, the boundary and the command that
decides it.

--json prints [{"run_id", "workflow", "status", "pending"?: {"step",
"boundary", "prompt"?, "kind"?, "options"?}, "started", "ended"?}].`

func newRunsCmd(e *env) *cobra.Command {
	var tf temporalFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "runs --temporal ADDR [--json]",
		Short: "List the runs on a Temporal server",
		Long:  runsDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tf.address == "" {
				return usagef("--temporal ADDR is required")
			}
			c, err := temporal.Dial(temporal.DialOptions{Address: tf.address, Namespace: tf.namespace, Log: e.stderr})
			if err != nil {
				return err
			}
			defer c.Close()
			runs, err := temporal.List(cmd.Context(), c, tf.namespace)
			if err != nil {
				return err
			}
			if asJSON {
				if runs == nil {
					runs = []temporal.Run{}
				}
				return writeJSON(e.stdout, runs)
			}
			writeRuns(e.stdout, runs, tf.address)
			return nil
		},
	}
	tf.register(cmd.Flags(), false)
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}

func writeRuns(w io.Writer, runs []temporal.Run, addr string) {
	if len(runs) == 0 {
		fmt.Fprintln(w, "no runs")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tWORKFLOW\tSTATUS\tSTARTED")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.RunID, r.Workflow, r.Status, r.Started.Format(time.RFC3339))
	}
	tw.Flush()
	for _, r := range runs {
		if p := r.Pending; p != nil {
			how := "--boundary " + p.Boundary
			if p.Kind == runstate.PendingDecision {
				how += " --decide OPTION"
			}
			fmt.Fprintf(w, "%s waits at %s: crystallize approve-run %s %s --temporal %s\n", r.RunID, p.Boundary, r.RunID, how, addr)
		}
	}
}

// temporalPending lists the runs on the Temporal server tf names that wait
// at a boundary, for session inbox and status; nil without --temporal.
func temporalPending(cmd *cobra.Command, e *env, tf *temporalFlags) ([]temporal.Run, error) {
	if tf.address == "" {
		return nil, nil
	}
	c, err := temporal.Dial(temporal.DialOptions{Address: tf.address, Namespace: tf.namespace, Log: e.stderr})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	runs, err := temporal.List(cmd.Context(), c, tf.namespace)
	if err != nil {
		return nil, err
	}
	var out []temporal.Run
	for _, r := range runs {
		if r.Pending != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// temporalItem is a waiting run on Temporal as a session inbox entry: the
// run id stands for the session, and the type is the one a local run
// posts for the same step.
func temporalItem(r temporal.Run) sessionindex.InboxEntry {
	p := r.Pending
	typ := runstate.MessageApprovalRequired
	if p.Kind == runstate.PendingDecision {
		typ = runstate.MessageDecisionNeeded
	}
	return sessionindex.InboxEntry{
		SessionID: r.RunID, Phase: fmt.Sprintf("step-%d", p.Step), Type: typ, Title: p.Prompt,
		Step: p.Step, Boundary: p.Boundary, Options: p.Options, Started: r.Started.Format(time.RFC3339), Temporal: true,
	}
}

// writeTemporalItems prints waiting runs as session inbox lines, each
// with the approve-run command that answers it.
func writeTemporalItems(w io.Writer, runs []temporal.Run, addr string) error {
	tw := newTable(w)
	for _, r := range runs {
		it := temporalItem(r)
		text := oneLineText(it.Title)
		if len(it.Options) > 0 {
			text += " (" + joinOptions(it.Options) + ")"
		}
		how := "--boundary " + it.Boundary
		if it.Type == runstate.MessageDecisionNeeded {
			how += " --decide OPTION"
		}
		fmt.Fprintf(tw, "%s\t%s\t[!%s]\t%s\tcrystallize approve-run %s %s --temporal %s\n", r.RunID, it.Phase, it.Type, text, r.RunID, how, addr)
	}
	return tw.Flush()
}

func joinOptions(opts []string) string {
	s := ""
	for i, o := range opts {
		if i > 0 {
			s += " | "
		}
		s += o
	}
	return s
}
