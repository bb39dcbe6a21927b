package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/synth"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

const synthStepDoc = `step asks a model to write a fuzzy step of a bundle's workflow as code,
and accepts the code only if it proves itself on the traces.

The step's recorded runs (its inputs and outputs in the bundle's source
fixtures) go to the model named by --model (a [models.*] entry of
--config) with a fixed contract: the first fenced code block of the answer
defines one top-level Starlark function of one argument, the step's inputs
as a dict, that returns the step's output. The function then runs in a
sandboxed capsule on every recorded run, on the step's runs in the
bundle's held-out fixtures, and under the metamorphic properties derived
from the step (input order invariance when its outputs are sets). One
wrong output refuses it, and the output names the run (fixture and action
id); exit 1.

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
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "step BUNDLE --step N",
		Short: "Replace a fuzzy step's model call with verified synthesized code",
		Long:  synthStepDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if stepN < 1 {
				return usagef("--step must be a step number (1 or more)")
			}
			spec, wf, err := stepSpec(dir, stepN)
			if err != nil {
				return err
			}
			spec.Model = model
			cfg, err := loadSynthConfig(config)
			if err != nil {
				return err
			}
			sb, err := capsuleSandbox()
			if err != nil {
				return err
			}
			res, err := synth.SynthesizeStep(cmd.Context(), &synthModel{cfg: cfg, getenv: e.getenv}, sb, spec)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(filepath.Clean(dir)+".synth", "step-"+strconv.Itoa(stepN))
			}
			// The evidence is written before the bundle changes, so a
			// bundle never holds a synthesized step whose step.json is
			// missing; if the bundle then refuses the workflow, the
			// evidence is written again as a refusal.
			var newWorkflow []byte
			if res.Accepted {
				note := fmt.Sprintf("step %d %s: synthesized by %s (code sha256 %s), verified on %d recorded and %d held-out runs; review before promotion",
					stepN, spec.Name, res.Call.Model, res.SHA256[:16], res.Checked["examples"], res.Checked["heldout"])
				src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(wf.Path)))
				if err != nil {
					return fmt.Errorf("reading the workflow: %w", err)
				}
				newWorkflow, err = synth.ReplaceModelCall(src, spec.Name, res.Function, res.Source, note)
				if err != nil {
					// Verified code that cannot live in the workflow (a
					// load, a while loop) is refused too.
					res.Accepted = false
					res.Failures = append(res.Failures, synth.StepFailure{Set: "workflow", Reason: err.Error()})
				}
			}
			function := filepath.Join(out, "function.star")
			writeEvidence := func() ([]byte, error) {
				files := map[string][]byte{}
				workflowPath := ""
				if res.Accepted {
					workflowPath = filepath.Join(dir, filepath.FromSlash(wf.Path))
					files[function] = []byte(res.Source)
				} else if err := os.Remove(function); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, err
				}
				report := stepJSON{StepResult: res, Index: stepN, Workflow: workflowPath}
				data, err := json.MarshalIndent(report, "", "  ")
				if err != nil {
					return nil, err
				}
				data = append(data, '\n')
				files[filepath.Join(out, "step.json")] = data
				if err := os.MkdirAll(out, 0o755); err != nil {
					return nil, err
				}
				return data, atomicfile.WriteAll(files, 0o644)
			}
			data, err := writeEvidence()
			if err != nil {
				return err
			}
			if res.Accepted {
				if _, err := bundle.ReplaceWorkflow(dir, newWorkflow, synthesizedStep(stepN, res)); err != nil {
					// A bundle that cannot take it leaves the bundle
					// unchanged, and the step refused.
					res.Accepted = false
					res.Failures = append(res.Failures, synth.StepFailure{Set: "workflow", Reason: err.Error()})
					if data, err = writeEvidence(); err != nil {
						return err
					}
				}
			}
			if asJSON {
				if _, err := e.stdout.Write(data); err != nil {
					return err
				}
			} else {
				workflowPath := ""
				if res.Accepted {
					workflowPath = filepath.Join(dir, filepath.FromSlash(wf.Path))
				}
				printStep(e, stepJSON{StepResult: res, Index: stepN, Workflow: workflowPath})
			}
			if !res.Accepted {
				return exitError{exitFailure, fmt.Errorf("step %d %s: the synthesized function is refused", stepN, spec.Name)}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&stepN, "step", 0, "the step to synthesize (its number in the workflow)")
	cmd.Flags().StringVar(&model, "model", "default", "the [models.*] entry that writes the function")
	cmd.Flags().StringVar(&config, "config", "", "configuration with the model (default ./crystallize.toml when present)")
	cmd.Flags().StringVar(&out, "out", "", "directory for the new workflow and the evidence (default BUNDLE.synth/step-N)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// synthesizedStep is the evidence the bundle keeps for an accepted
// function.
func synthesizedStep(n int, res *synth.StepResult) candidate.SynthesizedStep {
	return candidate.SynthesizedStep{
		Step: n, Name: res.Step, Function: res.Function, FunctionSHA256: res.SHA256,
		Model: res.Call.Model, ModelKey: res.Call.Key,
		PromptSHA256: res.Call.PromptSHA256, ResponseSHA256: res.Call.ResponseSHA256,
		InputTokens: res.Call.InputTokens, OutputTokens: res.Call.OutputTokens,
		ExamplesChecked: res.Checked["examples"], HeldoutChecked: res.Checked["heldout"],
		Properties: res.Properties,
	}
}

// stepJSON is step.json and the --json output of synth step.
type stepJSON struct {
	*synth.StepResult
	Index    int    `json:"index"`
	Workflow string `json:"workflow"`
}

func printStep(e *env, r stepJSON) {
	w := e.stdout
	if r.Accepted {
		fmt.Fprintf(w, "step %d %s: accepted %s (sha256 %s), verified on %d recorded and %d held-out runs\n", r.Index, r.Step, r.Function, r.SHA256, r.Checked["examples"], r.Checked["heldout"])
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
		case f.Example != "":
			fmt.Fprintf(w, "  %s %s: %s\n", f.Set, f.Example, f.Reason)
		default:
			fmt.Fprintf(w, "  %s: %s\n", f.Set, f.Reason)
		}
	}
}

// stepSpec gathers step n of the bundle in dir: its name and its
// recorded runs in the source and held-out fixtures.
func stepSpec(dir string, n int) (synth.StepSpec, bundle.WorkflowRef, error) {
	var spec synth.StepSpec
	b, err := bundle.Read(dir)
	if err != nil {
		return spec, bundle.WorkflowRef{}, err
	}
	m := b.Manifest
	data, err := os.ReadFile(filepath.Join(dir, bundle.ReportFile))
	if err != nil {
		return spec, m.Workflow, fmt.Errorf("reading the bundle's report: %w", err)
	}
	var rep candidate.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return spec, m.Workflow, fmt.Errorf("%s: %w", filepath.Join(dir, bundle.ReportFile), err)
	}
	var cand *candidate.Candidate
	for i := range rep.Candidates {
		if rep.Candidates[i].ID == m.CandidateID {
			cand = &rep.Candidates[i]
		}
	}
	if cand == nil {
		return spec, m.Workflow, fmt.Errorf("%s: candidate %s is not in the report", dir, m.CandidateID)
	}
	if n > len(cand.Steps) {
		return spec, m.Workflow, usagef("--step %d: the workflow has %d steps", n, len(cand.Steps))
	}
	step := cand.Steps[n-1]
	if step.Kind != trace.KindModelCall {
		return spec, m.Workflow, usagef("--step %d: step %s is a %s, not a model call", n, step.Name, step.Kind)
	}
	spec.Name = step.Name
	fixtures := map[string]*trace.Trace{}
	load := func(st bundle.SourceTrace) (*trace.Trace, error) {
		if t, ok := fixtures[st.FixturePath]; ok {
			return t, nil
		}
		file := filepath.Join(dir, filepath.FromSlash(st.FixturePath))
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading fixture: %w", err)
		}
		t, err := trace.Decode(data, file, 0)
		if err != nil {
			return nil, err
		}
		fixtures[st.FixturePath] = t
		return t, nil
	}
	example := func(path string, a *trace.Action) synth.StepExample {
		out := a.Output
		if out == nil {
			out = a.ObservedOutput
		}
		return synth.StepExample{Where: path + " action " + a.ID, Inputs: a.Parameters, Output: out}
	}
	for _, ex := range cand.Examples {
		if n > len(ex.ActionIDs) {
			continue
		}
		for _, st := range m.SourceTraces {
			if st.TraceID != ex.TraceID || st.Role != candidate.RoleSource {
				continue
			}
			t, err := load(st)
			if err != nil {
				return spec, m.Workflow, err
			}
			for i := range t.Actions {
				if t.Actions[i].ID == ex.ActionIDs[n-1] {
					spec.Examples = append(spec.Examples, example(st.FixturePath, &t.Actions[i]))
				}
			}
		}
	}
	for _, st := range m.SourceTraces {
		if st.Role != candidate.RoleHeldout {
			continue
		}
		t, err := load(st)
		if err != nil {
			return spec, m.Workflow, err
		}
		for i := range t.Actions {
			if a := &t.Actions[i]; a.Kind == step.Kind && a.Name == step.Name {
				spec.Heldout = append(spec.Heldout, example(st.FixturePath, a))
			}
		}
	}
	if len(spec.Examples) == 0 {
		return spec, m.Workflow, errors.New("no recorded run of the step in the bundle's fixtures")
	}
	return spec, m.Workflow, nil
}
