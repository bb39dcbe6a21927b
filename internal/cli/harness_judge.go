package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/harness"
)

const harnessJudgeDoc = `judge holds what decides whether a model judge may block a harness run.
A judged assertion (llm_rubric, factuality) is advisory until its judge,
pinned by provider, model, temperature, prompt and rubric, has been
calibrated on a golden set of the repository and promoted: "judge
calibrate" measures it and stores the verdict, which "harness run
--judge-url" reads.`

func newHarnessJudgeCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judge",
		Short: "Calibrate model judges before they may block",
		Long:  harnessJudgeDoc,
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newHarnessCalibrateCmd(e))
	return cmd
}

const harnessCalibrateDoc = `calibrate measures a judge on the golden set SUITE (an eval suite id of
harness/manifest.json, or a JSONL file): cases labelled "expected": "pass" or
"fail" (optionally "critical": true and "split": "calibration" or "heldout";
unsplit cases are split by a hash of their id), each with an llm_rubric or
factuality assertion. The golden set holds the rubrics, so it must be a file
git tracks: an untracked, ignored or symlinked one is refused.

It pins provider, model, temperature, output schema, prompt wrapper, case
schema and rubric hash; measures false-pass and false-block rates,
precision/recall/F1 (failure as the positive class), schema validity, quorum
disagreement and rerun stability on each split; and promotes the judge to
blocking only when the held-out split has zero false passes on critical
failures, a valid and stable judge, a false-block rate within bounds, and a
deterministic companion assertion on every critical case (or an agreeing
quorum, --quorum-model). The calibration is stored in the database, naming
the suite and the digest of its golden set: the judge is promoted for that
suite alone, and any change to what was pinned or to the golden set's cases
makes it advisory again. It exits 1 when
the judge stays advisory.

--json prints the calibration.`

func newHarnessCalibrateCmd(e *env) *cobra.Command {
	var f harnessFlags
	var jf judgeFlags
	var quorum []string
	var dir string
	var passEnv []string
	cmd := &cobra.Command{
		Use:   "calibrate SUITE",
		Short: "Calibrate a judge on a golden set",
		Long:  harnessCalibrateDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			cfg := jf.config(e)
			if cfg == nil || jf.model == "" {
				return usagef("harness judge calibrate: --judge-url and --judge-model are required")
			}
			root, db, now, err := f.openAt(ctx, e, dir)
			if err != nil {
				return err
			}
			defer db.Close()
			suiteID := args[0]
			cal, err := harness.CalibrateStored(ctx, root, db, suiteID, *cfg, quorum, now, os.Environ(), passEnv)
			if err != nil {
				return err
			}
			err = printResult(e, f.asJSON, cal, func(w io.Writer) {
				h := cal.HeldOut
				fmt.Fprintf(w, "judge %s/%s on %s (%s)\n", cal.Pinned.Provider, cal.Pinned.Model, cal.SuiteID, cal.ConfigHash)
				fmt.Fprintf(w, "golden set: %s (%s)\n", cal.GoldenSet, cal.GoldenSetHash)
				fmt.Fprintf(w, "held-out: %d cases, false-pass %.3g, false-block %.3g, precision %.3g, recall %.3g, F1 %.3g, schema validity %.3g, stability %.3g, critical false passes %d\n",
					h.Cases, h.FalsePassRate, h.FalseBlockRate, h.Precision, h.Recall, h.F1, h.SchemaValidity, h.RerunStability, h.CriticalFalsePasses)
				if cal.Promoted {
					fmt.Fprintln(w, "promoted: the judge may block this suite")
				} else {
					fmt.Fprintf(w, "advisory: %s\n", strings.Join(cal.Reasons, "; "))
				}
			})
			if err != nil {
				return err
			}
			if !cal.Promoted {
				return failuref("judge stays advisory for %s", suiteID)
			}
			return nil
		},
	}
	f.register(cmd)
	jf.register(cmd)
	cmd.Flags().StringSliceVar(&quorum, "quorum-model", nil, "further judge models at the same endpoint, for a quorum")
	cmd.Flags().StringVar(&dir, "dir", ".", "repository directory")
	passEnvFlag(cmd, &passEnv)
	return cmd
}

const harnessDriftDoc = `drift compares the current profile with the last accepted one (the profile
"harness write --apply" wrote the manifest for) and the manifest with the
repository: gate scripts and suites that no longer exist, kit files edited
or deleted, risk families that appeared or went away. It records the events
in the database and proposes follow-up work; it changes no file.

--json prints {"profileId", "baselineProfileId", "events": [{"kind",
"subject", "detail", "proposal"}]}.`

func newHarnessDriftCmd(e *env) *cobra.Command {
	var f harnessFlags
	cmd := &cobra.Command{
		Use:   "drift [DIR]",
		Short: "Report where the repository and its harness have drifted apart",
		Long:  harnessDriftDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			root, db, now, err := f.openAt(ctx, e, dirArg(args))
			if err != nil {
				return err
			}
			defer db.Close()
			r, err := harness.DriftNow(ctx, root, db, now)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(e.stdout, r)
			}
			if len(r.Events) == 0 {
				fmt.Fprintln(e.stdout, "no drift")
			}
			for _, ev := range r.Events {
				fmt.Fprintf(e.stdout, "%s %s: %s\n  proposal: %s\n", ev.Kind, ev.Subject, ev.Detail, ev.Proposal)
			}
			return nil
		},
	}
	f.register(cmd)
	return cmd
}
