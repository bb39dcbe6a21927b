package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/synth"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// StepError says that a step number does not name a step SynthesizeStep
// can work on; the caller words it (the command line as a usage error of
// --step).
type StepError struct {
	Step   int
	Reason string
}

func (e *StepError) Error() string { return fmt.Sprintf("step %d: %s", e.Step, e.Reason) }

// DefaultStepOut is the evidence directory of step n of the bundle in
// dir: beside the bundle, dir.synth/step-n.
func DefaultStepOut(dir string, n int) string {
	return filepath.Join(filepath.Clean(dir)+".synth", "step-"+strconv.Itoa(n))
}

// StepReport is step.json, the evidence of a synthesized step.
type StepReport struct {
	*synth.StepResult
	Index int `json:"index"`
	// Workflow is the bundle's workflow when the function was accepted
	// and the bundle updated, "" otherwise.
	Workflow string `json:"workflow"`
}

// SynthesizedStep is what Synthesize decided and wrote.
type SynthesizedStep struct {
	Report StepReport
	// Evidence is step.json as written.
	Evidence []byte
}

// Step is a fuzzy step of a bundle's workflow with its recorded runs,
// ready for synthesis.
type Step struct {
	dir  string
	n    int
	spec synth.StepSpec
	wf   bundle.WorkflowRef
}

// LoadStep reads step n of the bundle in dir: its name and its recorded
// runs in the bundle's source and held-out fixtures. A number that names
// no model call of the workflow is a *StepError.
func LoadStep(dir string, n int) (*Step, error) {
	if n < 1 {
		return nil, &StepError{Step: n, Reason: "not a step number (1 or more)"}
	}
	spec, wf, err := stepSpec(dir, n)
	if err != nil {
		return nil, err
	}
	return &Step{dir: dir, n: n, spec: spec, wf: wf}, nil
}

// Require states metamorphic properties of the step, each KIND:INPUT
// (synth.ParseStepInvariant): the synthesized function must also give
// the outputs they determine on perturbed recorded inputs.
func (st *Step) Require(invariants []string) error {
	for _, s := range invariants {
		inv, err := synth.ParseStepInvariant(s)
		if err != nil {
			return err
		}
		if err := inv.Check(st.spec.Examples); err != nil {
			return err
		}
		st.spec.Invariants = append(st.spec.Invariants, inv)
	}
	return nil
}

// Synthesize asks model (the [models.*] entry modelName) for a function
// that computes the step and accepts it only when it proves itself: it
// holds no recorded input as a literal, and runs in sandbox on every
// recorded run of the step (those shown to the model and those withheld
// from it), on its held-out runs, under the step's metamorphic
// properties and on the perturbed inputs of the required invariants
// (synth.SynthesizeStep), and
// must fit in the workflow in place of the step's ctx.model call
// (synth.ReplaceModelCall). The evidence (step.json, and function.star
// when accepted) is written into out (DefaultStepOut when empty) before
// the bundle changes, so a bundle never holds a synthesized step whose
// evidence is missing; an accepted function then becomes a new version of
// the bundle's workflow (bundle.ReplaceWorkflow), and if the bundle
// refuses it the step is refused and the evidence written again. A
// refused function leaves the bundle unchanged.
func (st *Step) Synthesize(ctx context.Context, model synth.Model, modelName string, sandbox *synth.Sandbox, out string) (*SynthesizedStep, error) {
	dir, n, spec, wf := st.dir, st.n, st.spec, st.wf
	spec.Model = modelName
	res, err := synth.SynthesizeStep(ctx, model, sandbox, spec)
	if err != nil {
		return nil, err
	}
	if out == "" {
		out = DefaultStepOut(dir, n)
	}
	var newWorkflow []byte
	if res.Accepted {
		note := fmt.Sprintf("step %d %s: synthesized by %s (code sha256 %s), verified on %d recorded runs (%d withheld from the model) and %d held-out runs; review before promotion",
			n, spec.Name, res.Call.Model, res.SHA256[:16], res.RecordedChecked(), res.Checked["withheld"], res.Checked["heldout"])
		src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(wf.Path)))
		if err != nil {
			return nil, fmt.Errorf("reading the workflow: %w", err)
		}
		newWorkflow, err = synth.ReplaceModelCall(src, spec.Name, res.Function, res.Source, note)
		if err != nil {
			// Verified code that cannot live in the workflow (a load, a
			// while loop) is refused too.
			res.Accepted = false
			res.Failures = append(res.Failures, synth.StepFailure{Set: "workflow", Reason: err.Error()})
		}
	}
	function := filepath.Join(out, "function.star")
	report := func() StepReport {
		r := StepReport{StepResult: res, Index: n}
		if res.Accepted {
			r.Workflow = filepath.Join(dir, filepath.FromSlash(wf.Path))
		}
		return r
	}
	writeEvidence := func() ([]byte, error) {
		files := map[string][]byte{}
		if res.Accepted {
			files[function] = []byte(res.Source)
		} else if err := os.Remove(function); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		data, err := json.MarshalIndent(report(), "", "  ")
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
		return nil, err
	}
	if res.Accepted {
		if _, err := bundle.ReplaceWorkflow(dir, newWorkflow, synthesizedStep(n, res)); err != nil {
			// A bundle that cannot take it stays unchanged, and the step
			// is refused.
			res.Accepted = false
			res.Failures = append(res.Failures, synth.StepFailure{Set: "workflow", Reason: err.Error()})
			if data, err = writeEvidence(); err != nil {
				return nil, err
			}
		}
	}
	return &SynthesizedStep{Report: report(), Evidence: data}, nil
}

// synthesizedStep is the evidence the bundle keeps for an accepted
// function.
func synthesizedStep(n int, res *synth.StepResult) candidate.SynthesizedStep {
	return candidate.SynthesizedStep{
		Step: n, Name: res.Step, Function: res.Function, FunctionSHA256: res.SHA256,
		Model: res.Call.Model, ModelKey: res.Call.Key,
		PromptSHA256: res.Call.PromptSHA256, ResponseSHA256: res.Call.ResponseSHA256,
		InputTokens: res.Call.InputTokens, OutputTokens: res.Call.OutputTokens,
		ExamplesChecked: res.RecordedChecked(), HeldoutChecked: res.Checked["heldout"],
		Properties: res.Properties,
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
	rep, err := bundle.ReadReport(dir)
	if err != nil {
		return spec, m.Workflow, fmt.Errorf("reading the bundle's report: %w", err)
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
		return spec, m.Workflow, &StepError{Step: n, Reason: fmt.Sprintf("the workflow has %d steps", len(cand.Steps))}
	}
	step := cand.Steps[n-1]
	if step.Kind != trace.KindModelCall {
		return spec, m.Workflow, &StepError{Step: n, Reason: fmt.Sprintf("step %s is a %s, not a model call", step.Name, step.Kind)}
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
		return synth.StepExample{Where: path + " action " + a.ID, Inputs: candidate.ActionArgs(a), Output: out}
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
