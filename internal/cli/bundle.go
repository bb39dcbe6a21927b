package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/review"
	"github.com/crystallize-dev/crystallize/internal/runner"
)

func newValidateCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate BUNDLE",
		Short: "Check a crystallization bundle before anyone trusts it",
		Long:  validateDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			v := bundle.Validate(args[0])
			if err := printResult(e, asJSON, v, func(w io.Writer) { writeBundleValidation(w, args[0], v) }); err != nil {
				return err
			}
			if !v.OK {
				return failuref("bundle %s is not valid: %d problems", args[0], len(v.Problems))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the validation as JSON")
	return cmd
}

const shadowDoc = `shadow re-runs the shadow comparison in-process against the bundle's
redacted fixtures, calling nothing, and exits 1 when the result differs from
the shadow result recorded in the bundle: use it in CI to prove a bundle
stays self-consistent across upgrades.

--heldout DIR (repeatable) instead replays the bundle's candidate against
the held-out runs in DIR (another release-harness run, or a trace
directory), beside the bundle's source fixtures, and exits 1 unless every
one passes. The bundle is not changed: to record the evidence in a bundle,
ingest or mine again with --shadow-from. A run that is one of the bundle's
source examples is refused.

--json prints {"candidate_id", "compared", "pass", "matches", "differences"};
with --heldout {"bundle", "candidate_id", "heldout": [{"trace_id", "status",
"first_divergent_step"}], "pass"}.`

// runShadowHeldout replays the bundle's candidate against the held-out
// directories and prints one line per held-out trace; it exits 1 when a
// held-out trace does not pass.
func runShadowHeldout(ctx context.Context, e *env, dir string, dirs []string, asJSON bool) error {
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil {
			return usagef("--heldout %s: %v", d, unwrapPathError(err))
		} else if !st.IsDir() {
			return usagef("--heldout %s: not a directory", d)
		}
	}
	r := &candidate.Report{}
	traces, err := pipeline.LoadHeldout(ctx, r, pipeline.HeldoutOptions{Dirs: dirs})
	if err != nil {
		return err
	}
	if len(traces) == 0 {
		return failuref("--heldout %s: no held-out trace to compare (%d excluded)", strings.Join(dirs, ", "), len(r.ExcludedTraces))
	}
	hc, err := bundle.ShadowHeldout(dir, traces)
	if err != nil {
		return err
	}
	err = printResult(e, asJSON, hc, func(w io.Writer) {
		fmt.Fprintf(w, "Held-out replay: bundle=%s candidate_id=%s heldout=%d pass=%t\n", dir, hc.CandidateID, len(hc.Heldout), hc.Pass)
		for _, row := range hc.Heldout {
			fmt.Fprintf(w, "  %s: %s", row.TraceID, row.Status)
			if row.FirstDivergentStep > 0 {
				fmt.Fprintf(w, " (first divergent step %d)", row.FirstDivergentStep)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "  the bundle is unchanged: to record this evidence, ingest (or mine) again with --shadow-from")
	})
	if err != nil {
		return err
	}
	if !hc.Pass {
		return failuref("held-out replay of %s did not pass", dir)
	}
	return nil
}

// writeBundleValidation prints the checks of a bundle and every problem,
// "path: code: message".
func writeBundleValidation(w io.Writer, dir string, v *bundle.Validation) {
	// The header shows what candidate.json says, not what this build
	// expects: a refused schema is then visible at a glance.
	fmt.Fprintf(w, "Bundle: %s (schema=%s schema_version=%s)\n", dir, orNone(v.Schema), orNone(v.SchemaVersion))
	if v.Workflow != "" {
		fmt.Fprintf(w, "Workflow: %s sha256=%s\n", filepath.Join(dir, filepath.FromSlash(v.Workflow)), v.WorkflowSHA256)
	}
	var parts []string
	for _, c := range v.Checks {
		parts = append(parts, c.Name+"="+c.Status)
	}
	fmt.Fprintf(w, "Checks: %s\n", strings.Join(parts, " "))
	switch v.PromotionStatus {
	case bundle.StatusReady:
		fmt.Fprintln(w, "Promotion: ready (approved for these workflow bytes)")
	case "":
	default:
		fmt.Fprintf(w, "Promotion: %s (nothing runs for real until it is ready)\n", v.PromotionStatus)
	}
	for _, p := range v.Problems {
		loc := ""
		if p.Path != "" {
			loc = p.Path + ": "
		}
		fmt.Fprintf(w, "  %s%s: %s\n", loc, p.Code, p.Message)
	}
	if v.OK {
		fmt.Fprintln(w, "OK")
	}
}

// orNone prints a missing manifest member as "none".
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func newShadowCmd(e *env) *cobra.Command {
	var asJSON bool
	var heldout []string
	cmd := &cobra.Command{
		Use:   "shadow BUNDLE [--heldout DIR]...",
		Short: "Re-run the shadow comparison on a bundle's fixtures",
		Long:  shadowDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(heldout) > 0 {
				return runShadowHeldout(cmd.Context(), e, args[0], heldout, asJSON)
			}
			sc, err := bundle.ReplayShadow(args[0])
			if err != nil {
				return err
			}
			err = printResult(e, asJSON, sc, func(w io.Writer) {
				fmt.Fprintf(w, "Shadow replay: bundle=%s candidate_id=%s compared=%d pass=%t\n", args[0], sc.CandidateID, sc.Compared, sc.Pass)
				for _, d := range sc.Differences {
					fmt.Fprintf(w, "  differs: %s\n", d)
				}
			})
			if err != nil {
				return err
			}
			if !sc.Matches {
				return failuref("shadow replay of %s differs from the recorded result", args[0])
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&heldout, "heldout", nil, "replay the bundle's candidate against the held-out runs in this directory (a release-harness run or a trace directory; repeatable); the bundle is not changed")
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}

const approveDoc = `approve records a human decision on a crystallized workflow: who, when,
why, for which candidate, and the sha256 of the workflow file approved.
It appends to promotion.approval_history in candidate.json and turns a
needs_approval candidate into ready. A blocked candidate cannot be
approved. Changing workflow.star afterwards makes "crystallize validate"
report the approval as stale. It prints the workflow file and the sha256
the decision is about.

The decision is also appended to the approval ledger of the state
directory (--state-dir, default .crystallize: <dir>/approvals.jsonl), each
line authenticated with the directory's key (<dir>/state.key, created 0600
on first use). A configuration with [approvals] require_ledger = true
runs a bundle for real only with an authenticated approval of its
workflow bytes in the run's state directory, so an approval record written
into candidate.json by hand is not enough.

--approver on "crystallize mine" only names who is expected to approve;
this command is the approval. The author a bundle records (mine --author)
cannot approve it: another person must, unless the project configuration
(--config, default ./crystallize.toml when it exists) sets [approvals]
allow_self_approval = true. The author may reject it.

--json prints the updated promotion block.`

func newApproveCmd(e *env) *cobra.Command {
	var (
		approver, reason, stateDir, config string
		reject, asJSON                     bool
	)
	cmd := &cobra.Command{
		Use:   "approve BUNDLE --approver NAME [--reason TEXT] [--reject]",
		Short: "Record a person's decision on a bundle",
		Long:  approveDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(approver) == "" {
				return usagef("--approver is required: the person making the decision")
			}
			at, err := generatedAt(e.getenv)
			if err != nil {
				return err
			}
			cfg, err := projectConfig(config)
			if err != nil {
				return err
			}
			a := bundle.Approval{Actor: approver, Reason: reason, Reject: reject, At: at}
			a.AllowSelfApproval = cfg != nil && cfg.Approvals.AllowSelfApproval
			m, err := review.ApproveBundle(args[0], stateDir, a)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, m.Promotion)
			}
			decision := "approved"
			if reject {
				decision = "rejected"
			}
			fmt.Fprintf(e.stdout, "Recorded: %s %s %s at %s; promotion status is now %s\n", approver, decision, m.CandidateID, at, m.Promotion.Criteria.Status)
			fmt.Fprintf(e.stdout, "Workflow: %s sha256=%s\n", filepath.Join(args[0], filepath.FromSlash(m.Workflow.Path)), m.Workflow.SHA256)
			return nil
		},
	}
	cmd.Flags().StringVar(&approver, "approver", "", "who makes the decision (required)")
	cmd.Flags().StringVar(&reason, "reason", "", "why")
	cmd.Flags().BoolVar(&reject, "reject", false, "record a rejection instead of an approval")
	cmd.Flags().StringVar(&stateDir, "state-dir", runner.DefaultStateDir, "state directory whose approval ledger records the decision")
	configFlag(cmd.Flags(), &config)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the updated promotion block as JSON")
	return cmd
}

const evalDoc = `eval runs the assertions of the bundle's eval pack (harn.eval.toml): the
crystallization-shadow assertion re-runs the shadow comparison on the
bundle's fixtures, and assertions of the harness case format (exit_code
aside: a bundle's eval runs no commands) are checked by the assertion
engine of "harness run" against their case's input: recorded output or
output_file, trajectory or trace, expected documents and tool calls.
Model-judged kinds fail without blocking, since no judge is configured
here. It exits 1 when any blocking assertion fails, naming them.

--json prints {"assertions": [{"id", "kind", "blocking", "passed",
"message"}], "passed"}.`

func newEvalCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "eval BUNDLE",
		Short: "Run a bundle's eval pack",
		Long:  evalDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := bundle.Eval(args[0])
			if err != nil {
				return err
			}
			err = printResult(e, asJSON, res, func(w io.Writer) {
				for _, a := range res.Assertions {
					fmt.Fprintf(w, "%s %s (%s, blocking=%t): %s\n", passOrFail(a.Passed), a.ID, a.Kind, a.Blocking, a.Message)
				}
			})
			if err != nil {
				return err
			}
			if !res.Passed {
				return failuref("eval pack of %s failed: %s", args[0], strings.Join(res.Failed(), ", "))
			}
			return nil
		},
	}
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}
