package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
)

const synthStepDoc = `step asks a model to write a fuzzy step of a bundle's workflow as code,
and accepts the code only if it proves itself on the traces.

The step's recorded runs (its inputs and outputs in the bundle's source
fixtures) go to the model named by --model (a [models.*] entry of
--config) with a fixed contract: the first fenced code block of the answer
defines one top-level Starlark function of one argument, the step's inputs
as a dict, that returns the step's output. The last quarter of the
recorded runs (at least one) is withheld from the model, so synthesis
needs at least 3 recorded runs: 2 to show and 1 to withhold.

The function must generalise. Code that holds an input value of a shown
run as a literal (comparing with a recorded id, or a dict of outputs keyed
by recorded titles) is refused with code recorded_literal, naming the
literal and the run. The function then runs in a sandboxed capsule on
every recorded run, shown or withheld, on the step's runs in the bundle's
held-out fixtures, under the metamorphic properties derived from the step
(input order invariance when its outputs are sets), and on recorded
inputs perturbed as each --invariant KIND:INPUT states the step allows:
case (the output does not change when the input is upper- or
lower-cased), whitespace (nor with more spaces around and between its
words) and id (the input is an opaque identifier: a new one of the same
shape gives the same output, with the identifier replaced where the output
repeats it). One wrong output refuses it, and the output names the run
(fixture and action id, and the perturbed input); exit 1.

An accepted function replaces the step's ctx.model call in a new version
of the bundle's workflow: workflow.star is rewritten (its header counts
one model call fewer), and report.json and candidate.json record the
evidence under synthesized_steps (model, prompt and response sha256,
tokens, function sha256, the runs checked, the workflow sha256 before and
after). The bundle's approval was for the old version, so validate
reports approval_stale and run refuses the bundle until crystallize
approve is run again. A refused function leaves the bundle unchanged.

The evidence is also written to --out (default BUNDLE.synth/step-N,
beside the bundle): step.json (model call by hashes and tokens, code
sha256, every check and failure) and, when accepted, function.star.

--json prints step.json with "workflow" set to the bundle's workflow path
when the bundle was updated, "" otherwise.`

func newSynthStepCmd(e *env) *cobra.Command {
	var stepN int
	var model, config, out string
	var invariants []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "step BUNDLE --step N",
		Short: "Replace a fuzzy step's model call with verified synthesized code",
		Long:  synthStepDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if stepN < 1 {
				return usagef("--step must be a step number (1 or more)")
			}
			step, err := pipeline.LoadStep(args[0], stepN)
			var se *pipeline.StepError
			if errors.As(err, &se) {
				return usagef("--step %d: %s", se.Step, se.Reason)
			}
			if err != nil {
				return err
			}
			if err := step.Require(invariants); err != nil {
				return usagef("--invariant %v", err)
			}
			cfg, err := loadSynthConfig(config)
			if err != nil {
				return err
			}
			sb, err := capsuleSandbox()
			if err != nil {
				return err
			}
			st, err := step.Synthesize(cmd.Context(), &pipeline.ConfigModel{Config: cfg, Getenv: e.getenv}, model, sb, out)
			if err != nil {
				return err
			}
			if asJSON {
				if _, err := e.stdout.Write(st.Evidence); err != nil {
					return err
				}
			} else {
				printStep(e, st.Report)
			}
			if r := st.Report; !r.Accepted {
				return failuref("step %d %s: the synthesized function is refused", r.Index, r.Step)
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&stepN, "step", 0, "the step to synthesize (its number in the workflow)")
	cmd.Flags().StringVar(&model, "model", "default", "the [models.*] entry that writes the function")
	cmd.Flags().StringVar(&config, "config", "", "configuration with the model (default ./crystallize.toml when present)")
	cmd.Flags().StringArrayVar(&invariants, "invariant", nil, "a metamorphic property of the step, KIND:INPUT (case, whitespace or id; repeatable)")
	cmd.Flags().StringVar(&out, "out", "", "directory for the new workflow and the evidence (default BUNDLE.synth/step-N)")
	resultJSONFlag(cmd.Flags(), &asJSON)
	return cmd
}

func printStep(e *env, r pipeline.StepReport) {
	w := e.stdout
	if r.Accepted {
		fmt.Fprintf(w, "step %d %s: accepted %s (sha256 %s), verified on %d recorded runs (%d withheld from the model) and %d held-out runs\n", r.Index, r.Step, r.Function, r.SHA256, r.RecordedChecked(), r.Checked["withheld"], r.Checked["heldout"])
		fmt.Fprintf(w, "workflow: %s is a new version; approve the bundle again before it runs\n", r.Workflow)
		return
	}
	fmt.Fprintf(w, "step %d %s: refused\n", r.Index, r.Step)
	for _, f := range r.Failures {
		switch {
		case f.Example != "" && f.Want != nil:
			got, _ := json.Marshal(f.Got)
			want, _ := json.Marshal(f.Want)
			fmt.Fprintf(w, "  %s %s: got %s, want %s\n", f.Set, f.Example, got, want)
		case f.Example != "" && f.Code != "":
			fmt.Fprintf(w, "  %s %s: %s: %s\n", f.Set, f.Example, f.Code, f.Reason)
		case f.Example != "":
			fmt.Fprintf(w, "  %s %s: %s\n", f.Set, f.Example, f.Reason)
		default:
			fmt.Fprintf(w, "  %s: %s\n", f.Set, f.Reason)
		}
	}
}
