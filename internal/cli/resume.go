package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

type resumeFlags struct {
	approve  []string
	reject   []string
	config   string
	stateDir string
	asJSON   bool
	// decide answers a pending ctx.request_decision; reason is recorded
	// with the answer in the inbox.
	decide string
	reason string
}

const resumeDoc = `resume continues the run RUN-ID, suspended in state pending_approval by
crystallize run when it reached an approval boundary nobody had decided. It
reads <state-dir>/runs/RUN-ID/journal.json, loads the same workflow (it must
be byte for byte the one that ran) with the same parameters and options, and
runs it again from the start, answering every step completed before the
boundary from the journal instead of executing it: no side effect happens
twice. --approve NAME approves the boundary, --reject NAME rejects it (the
run ends as rejected); with neither, the terminal is asked when stdin is
one, else the run stays pending. A run suspended at ctx.request_decision
takes --decide OPTION, which must be one of the options the workflow
offered (anything else is a usage error), and the call returns it. The
configuration is the one the run used unless --config names another.

The resumed run registers again in the registry (crystallize sessions),
and the inbox items of the step it waited at are marked answered once it
gets past that step.

Readiness is decided again, by the function run and validate use: a bundle
whose approval no longer holds for its workflow bytes, or that has any
validation problem, is refused (exit 1, with validate's codes) unless the
run was started with --allow-unapproved.

The run keeps its id and record directory; trace.json and session.md are
rewritten to cover the whole run.

Exit status: 0 when the workflow completed, 1 when it failed, was rejected,
is still pending or cannot be resumed, 2 on a usage error.

--json prints the same object as crystallize run --json.`

func newResumeCmd(e *env) *cobra.Command {
	f := &resumeFlags{}
	cmd := &cobra.Command{
		Use:   "resume RUN-ID [--approve NAME | --reject NAME]... [--decide OPTION] [flags]",
		Short: "Continue a run suspended at an approval or a decision",
		Long:  resumeDoc,
		Example: `  crystallize resume 20250101T120000Z-0123456789ab --approve merge
  crystallize resume 20250101T120000Z-0123456789ab --reject merge --json
  crystallize resume 20250101T120000Z-0123456789ab --decide JWT`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runResume(cmd, e, f, args[0])
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.approve, "approve", nil, "approve the boundary NAME (repeatable)")
	fs.StringArrayVar(&f.reject, "reject", nil, "reject the boundary NAME (repeatable)")
	fs.StringVar(&f.config, "config", "", "project configuration (default: the one the run used)")
	runStateDirFlag(fs, &f.stateDir)
	summaryJSONFlag(fs, &f.asJSON)
	fs.StringVar(&f.decide, "decide", "", "answer a pending decision with OPTION")
	return cmd
}

func runResume(cmd *cobra.Command, e *env, f *resumeFlags, runID string) error {
	for _, b := range f.reject {
		for _, a := range f.approve {
			if a == b {
				return usagef("boundary %s is both approved and rejected", b)
			}
		}
	}
	j, err := runner.ReadJournal(f.stateDir, runID)
	if err != nil {
		return err
	}
	if err := checkDecide(j, f.decide); err != nil {
		return err
	}
	cfg, err := j.LoadConfig(f.config)
	if err != nil {
		return err
	}
	w, err := runner.Load(j.Target)
	if err != nil {
		return err
	}
	live := newLive(e, f.stateDir, registry.TypeWorkflow, j.Workflow).As("", liveModel(cfg))
	opts := runOptions(cmd, e, cfg, f.stateDir, live)
	opts.Approve, opts.Reject, opts.Decide = f.approve, f.reject, f.decide
	res, err := runner.Resume(cmd.Context(), w, j, opts)
	live.Answered(j.Pending, res.Outcome(), registry.ResumeAnswer(j.Pending, f.approve, f.reject, f.decide, f.reason))
	live.End(res.Outcome())
	return printRunResult(e, res, err, f.asJSON)
}

// checkDecide refuses, as a usage error, a --decide that does not answer
// what run j waits for (runner.Journal.CheckDecision).
func checkDecide(j *runner.Journal, decide string) error {
	var de *runner.DecisionError
	if err := j.CheckDecision(decide); errors.As(err, &de) {
		if de.Waiting != "" {
			return usagef("--decide %q: run %s waits for %s, not for a decision", de.Decide, de.RunID, de.Waiting)
		}
		return usagef("--decide %q: not an option of decision %s (options: %s)", de.Decide, de.Decision, strings.Join(de.Options, ", "))
	}
	return nil
}
