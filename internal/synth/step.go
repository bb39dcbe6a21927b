package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.starlark.net/syntax"
)

// StepExample is one recorded run of a fuzzy step: the inputs its model
// call was given and the output it produced, and where it was recorded.
type StepExample struct {
	// Where names the example for a reader: the fixture and action id.
	Where  string         `json:"where"`
	Inputs map[string]any `json:"inputs"`
	Output any            `json:"output"`
}

// StepSpec is what synthesis of one fuzzy step works from.
type StepSpec struct {
	// Name is the step's name (the ctx.model call's first argument).
	Name string
	// Examples are the step's recorded runs in the traces it was mined
	// from; Heldout its runs in held-out traces, checked after them.
	Examples, Heldout []StepExample
	AllowedImports    []string
	Resources         Resources
	// Invariants are the metamorphic properties stated for the step:
	// the function also runs on perturbed recorded inputs whose outputs
	// they determine.
	Invariants []StepInvariant
	// Model is the [models.*] key to ask.
	Model string
}

// StepResult is the outcome of synthesizing a step's function.
type StepResult struct {
	Step     string    `json:"step"`
	Accepted bool      `json:"accepted"`
	Function string    `json:"function,omitempty"`
	Source   string    `json:"source,omitempty"`
	SHA256   string    `json:"code_sha256,omitempty"`
	Call     ModelCall `json:"model_call"`
	// Checked counts the examples the function was run on, by set:
	// "examples" (shown to the model), "withheld" (recorded but not
	// shown), "heldout", and each property.
	Checked map[string]int `json:"checked"`
	// Withheld names the recorded runs kept out of the prompt, on which
	// the function shows that it does more than repeat what it was shown.
	Withheld []string `json:"withheld"`
	// Failures name every example the function got wrong (or the check
	// that refused it), so a reviewer can see why it was refused.
	Failures   []StepFailure `json:"failures"`
	Properties []string      `json:"properties"`
}

// StepFailure is one reason a synthesized function is refused.
type StepFailure struct {
	Set string `json:"set"` // "examples", "withheld", "heldout", a property name, or "code"
	// Code classifies a refusal of the code itself (CodeRecordedLiteral).
	Code    string `json:"code,omitempty"`
	Example string `json:"example,omitempty"`
	Got     any    `json:"got,omitempty"`
	Want    any    `json:"want,omitempty"`
	Reason  string `json:"reason"`
}

// StepPrompt is the fixed contract with the model: the step's recorded
// inputs and outputs, and the shape of the answer.
func StepPrompt(spec StepSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A workflow step named %q is done by a language model today. Write a deterministic function that does it instead.\n\n", spec.Name)
	b.WriteString("Answer with one fenced code block of Starlark (Python syntax; no recursion, classes, exceptions or import statements) that defines exactly one top-level function of one argument: the step's inputs as a dict. It returns the step's output value, built of None, booleans, numbers, strings, lists and dicts with string keys.")
	if len(spec.AllowedImports) == 0 {
		b.WriteString(" Do not use load().")
	} else {
		fmt.Fprintf(&b, " You may load only these modules, with load(\"name\", \"symbol\"): %s.", strings.Join(spec.AllowedImports, ", "))
	}
	b.WriteString("\n\nRecorded runs (inputs → output):\n")
	for _, ex := range spec.Examples {
		in, _ := json.Marshal(ex.Inputs)
		out, _ := json.Marshal(ex.Output)
		fmt.Fprintf(&b, "- %s → %s\n", in, out)
	}
	return b.String()
}

// RecordedChecked is the number of recorded runs the function was run
// on, shown to the model or withheld from it.
func (r *StepResult) RecordedChecked() int { return r.Checked["examples"] + r.Checked["withheld"] }

// SynthesizeStep asks the model for a function that does the step, and
// checks that it generalises. The model is shown all but the last
// quarter (at least one) of the recorded examples; a function whose code
// holds a shown input value as a literal is refused without running
// (CodeRecordedLiteral); the rest runs in a capsule (sb, or this process
// when nil) on every shown example, on every withheld one, on every
// held-out example, then under the metamorphic properties derived from
// the examples (StepProperties) and on the perturbed inputs of the
// stated invariants. The function is accepted only if every check
// passes; otherwise every failure is listed, each naming its example.
// Errors are reserved for a spec synthesis cannot work from (fewer than
// MinStepExamples examples, an invariant of an input the step does not
// have) and a model call that fails.
func SynthesizeStep(ctx context.Context, m Model, sb *Sandbox, spec StepSpec) (*StepResult, error) {
	res := &StepResult{Step: spec.Name, Checked: map[string]int{}, Withheld: []string{}, Failures: []StepFailure{}, Properties: []string{}}
	// Recorded values come from trace decoders (json.Number, float64);
	// compare and pass them in this package's value model.
	for _, set := range [][]StepExample{spec.Examples, spec.Heldout} {
		for i := range set {
			in, _ := normalize(map[string]any(set[i].Inputs)).(map[string]any)
			set[i].Inputs, set[i].Output = in, normalize(set[i].Output)
		}
	}
	if len(spec.Examples) < MinStepExamples {
		return nil, fmt.Errorf("step %s: %d recorded runs; synthesis needs at least %d: %d to show the model and 1 withheld from it to check that the function generalises",
			spec.Name, len(spec.Examples), MinStepExamples, MinStepExamples-1)
	}
	for _, inv := range spec.Invariants {
		if err := inv.Check(spec.Examples); err != nil {
			return nil, fmt.Errorf("step %s: invariant %w", spec.Name, err)
		}
	}
	shown, withheld := withhold(spec.Examples)
	for _, ex := range withheld {
		res.Withheld = append(res.Withheld, ex.Where)
	}
	asked := spec
	asked.Examples = shown
	prompt := StepPrompt(asked)
	res.Call = ModelCall{Step: spec.Name, Key: spec.Model, PromptSHA256: sha(prompt)}
	if m == nil {
		return nil, fmt.Errorf("step %s: no model configured", spec.Name)
	}
	ans, err := m.Complete(ctx, spec.Model, prompt)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", spec.Name, err)
	}
	res.Call.Model, res.Call.ResponseSHA256 = ans.Model, sha(ans.Text)
	res.Call.InputTokens, res.Call.OutputTokens = ans.InputTokens, ans.OutputTokens
	refuse := func(reason string) (*StepResult, error) {
		res.Failures = append(res.Failures, StepFailure{Set: "code", Reason: reason})
		return res, nil
	}
	src, ok := FirstCodeBlock(ans.Text)
	if !ok {
		return refuse("the answer has no fenced code block")
	}
	res.Source, res.SHA256 = src, sha(src)
	fn, err := soleFunction(src)
	if err != nil {
		return refuse(err.Error())
	}
	res.Function = fn
	if lits := recordedLiterals(src, shown); len(lits) > 0 {
		res.Failures = append(res.Failures, lits...)
		return res, nil
	}
	c := &Capsule{Name: spec.Name + ".star", Source: src, Entrypoint: fn, AllowedImports: spec.AllowedImports, Resources: spec.Resources, ReturnsValue: true}

	// One batch: examples, held-out examples, then each property's
	// transformed inputs.
	type run struct {
		set, where string
		input      map[string]any
		want       any
	}
	var runs []run
	for _, ex := range shown {
		runs = append(runs, run{"examples", ex.Where, ex.Inputs, ex.Output})
	}
	for _, ex := range withheld {
		runs = append(runs, run{"withheld", ex.Where, ex.Inputs, ex.Output})
	}
	for _, ex := range spec.Heldout {
		runs = append(runs, run{"heldout", ex.Where, ex.Inputs, ex.Output})
	}
	for _, p := range StepProperties(spec.Examples) {
		res.Properties = append(res.Properties, p.Name)
		for i, ex := range spec.Examples {
			if in, ok := p.apply(ex.Inputs, uint64(i)); ok {
				runs = append(runs, run{p.Name, ex.Where, in, ex.Output})
			}
		}
	}
	for _, inv := range spec.Invariants {
		res.Properties = append(res.Properties, inv.Name())
		taken := map[string]bool{}
		for _, set := range [][]StepExample{spec.Examples, spec.Heldout} {
			for _, ex := range set {
				if v, ok := ex.Inputs[inv.Key].(string); ok {
					taken[v] = true
				}
			}
		}
		for _, ex := range spec.Examples {
			ins, wants := inv.perturb(ex, taken)
			for i := range ins {
				// The run names the input it was given, which no trace holds.
				where := fmt.Sprintf("%s with %s %s", ex.Where, inv.Key, strconv.Quote(ins[i][inv.Key].(string)))
				runs = append(runs, run{inv.Name(), where, ins[i], wants[i]})
			}
		}
	}
	inputs := make([]any, len(runs))
	for i, r := range runs {
		inputs[i] = r.input
	}
	results, err := execute(ctx, sb, c, inputs)
	if err != nil {
		var ce *CapsuleError
		if !errors.As(err, &ce) {
			return nil, err
		}
		// The batch stops at the first failing execution, which is the
		// next one after the results it returned.
		where := ""
		if len(results) < len(runs) {
			where = runs[len(results)].where
		}
		res.Failures = append(res.Failures, StepFailure{Set: "code", Example: where, Reason: ce.Error()})
		return res, nil
	}
	for i, r := range runs {
		res.Checked[r.set]++
		if got := results[i].Value; !equalValue(got, r.want) {
			res.Failures = append(res.Failures, StepFailure{Set: r.set, Example: r.where, Got: got, Want: r.want, Reason: "the function's output differs from the recorded output"})
		}
	}
	res.Accepted = len(res.Failures) == 0
	return res, nil
}

// soleFunction returns the name of the one top-level function of src.
func soleFunction(src string) (string, error) {
	f, err := fileOptions().Parse("step.star", src, 0)
	if err != nil {
		return "", fmt.Errorf("the code does not parse: %v", err)
	}
	var names []string
	for _, s := range f.Stmts {
		switch d := s.(type) {
		case *syntax.DefStmt:
			names = append(names, d.Name.Name)
		case *syntax.LoadStmt:
		default:
			return "", fmt.Errorf("the code has a top-level statement other than load() and def")
		}
	}
	if len(names) != 1 {
		return "", fmt.Errorf("the code defines %d top-level functions, want exactly one", len(names))
	}
	return names[0], nil
}

// StepProperty is a metamorphic property derived from a step's examples.
type StepProperty struct {
	Name string
	// Key is the input whose list is permuted.
	Key string
}

// apply permutes the list under the property's key, when the example has
// one with at least two elements.
func (p StepProperty) apply(inputs map[string]any, seed uint64) (map[string]any, bool) {
	l, ok := inputs[p.Key].([]any)
	if !ok || len(l) < 2 {
		return nil, false
	}
	out := make(map[string]any, len(inputs))
	for k, v := range inputs {
		out[k] = v
	}
	out[p.Key] = permute(l, cycle(len(l), seed))
	return out, true
}

// StepProperties derives the properties a step's function must satisfy
// from its examples: when every list in every recorded output is sorted
// and without duplicates, the outputs are sets, and permuting any input
// list must not change them (input order invariance).
func StepProperties(examples []StepExample) []StepProperty {
	keys := map[string]bool{}
	for _, ex := range examples {
		if !setLike(ex.Output) {
			return nil
		}
		for k, v := range ex.Inputs {
			if l, ok := v.([]any); ok && len(l) >= 2 {
				keys[k] = true
			}
		}
	}
	var out []StepProperty
	for _, k := range sortedKeys(keys) {
		out = append(out, StepProperty{Name: "order_invariant_" + k, Key: k})
	}
	return out
}

// setLike reports whether every list inside v is sorted, of strings or
// of numbers, and free of duplicates.
func setLike(v any) bool {
	switch x := v.(type) {
	case []any:
		strs := make([]string, 0, len(x))
		nums := make([]float64, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				strs = append(strs, s)
			} else if f, ok := asFloat(e); ok {
				nums = append(nums, f)
			} else {
				return false
			}
		}
		if len(strs) > 0 && len(nums) > 0 {
			return false
		}
		for i := 1; i < len(strs); i++ {
			if strs[i-1] >= strs[i] {
				return false
			}
		}
		for i := 1; i < len(nums); i++ {
			if nums[i-1] >= nums[i] {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !setLike(e) {
				return false
			}
		}
	}
	return true
}

// equalValue compares a function's output with a recorded one: numbers
// by value (1 equals 1.0; within a relative 1e-9, since a recorded float
// went through JSON), everything else structurally.
func equalValue(a, b any) bool {
	fa, okA := asFloat(a)
	fb, okB := asFloat(b)
	if okA || okB {
		if !okA || !okB {
			return false
		}
		return math.Abs(fa-fb) <= 1e-9*math.Max(1, math.Max(math.Abs(fa), math.Abs(fb)))
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equalValue(v, w) {
				return false
			}
		}
		return true
	}
	return a == b
}
