package codify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/derive"
	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// Model refinement.
//
// A model makes the draft workflow readable: clearer names, comments that
// say why. Its answer is accepted only when codegen.Equivalent proves it
// the draft with parameters and locals renamed and comments changed. A
// renamed parameter is then a renaming of the candidate's parameter in the
// same place, and the candidate (with it the report, the bundle and
// SKILL.md) takes the new names; regenerating its workflow must give the
// refinement's signature back. Anything else is refused before a file is
// written.
//
// The alternative, asking the model for a list of renames and comments
// and applying them ourselves, would be safer still but gives the model
// no room to place comments where they help; checking its whole answer
// keeps it free in form and bound in meaning.

// ModelKeys are the [models.*] entries a Refiner uses, in order of
// preference.
var ModelKeys = []string{"refine", "default"}

// CodeRefined is the report warning that records a refinement.
const CodeRefined = "workflow_refined"

// ErrRefused wraps every reason a refinement is not accepted.
var ErrRefused = errors.New("refusing the model's refinement")

// ErrNoModel is returned by NewRefiner when the configuration has none of
// the ModelKeys entries.
var ErrNoModel = errors.New("no model to refine with")

// ModelError is a [models.KEY] entry a model cannot be made of.
type ModelError struct {
	Key string
	Err error
}

func (e *ModelError) Error() string { return "models." + e.Key + ": " + e.Err.Error() }
func (e *ModelError) Unwrap() error { return e.Err }

// Refiner asks one configured model to refine workflows.
type Refiner struct {
	key   string // the [models.key] entry used
	name  string // its model name
	model model.Provider
}

// NewRefiner returns the refiner of cfg's [models.refine], else
// [models.default], or ErrNoModel. The API key is the secret the entry's
// api_key names, from getenv or the secrets file, as in a run. client nil
// means http.DefaultClient.
func NewRefiner(cfg *runconfig.Config, getenv func(string) string, client *http.Client) (*Refiner, error) {
	var key string
	var mc runconfig.ModelConfig
	if cfg != nil {
		for _, k := range ModelKeys {
			if m, ok := cfg.Models[k]; ok {
				key, mc = k, m
				break
			}
		}
	}
	if key == "" {
		return nil, ErrNoModel
	}
	apiKey := ""
	if mc.APIKey != "" {
		var err error
		if apiKey, err = cfg.Secret(mc.APIKey, getenv); err != nil {
			return nil, fmt.Errorf("models.%s.api_key: %w", key, err)
		}
	}
	m, err := model.NewProvider(mc, apiKey, client)
	if err != nil {
		return nil, &ModelError{Key: key, Err: err}
	}
	return &Refiner{key: key, name: mc.Model, model: m}, nil
}

// prompt is what the model is asked; src is the draft, fn its function.
func prompt(src []byte, fn string) string {
	return `Refine this Starlark workflow for the person who will review it. You may change only two things:
- names: rename the parameters of ` + fn + ` (never ctx) and its local variables to clearer snake_case names, consistently at every use;
- comments: add, reword or remove # comments and the docstring, so that they say what each step does and why.
Keep everything else exactly as it is: the function name ` + fn + `, the order of its parameters and their defaults, every ctx.tool, ctx.exec, ctx.check, ctx.model and ctx.approve call in the same order with the same names, argument names and literal values (a ctx.exec argv list word for word), and the return statement. Do not add, remove or reorder statements.
Answer with the complete refined file only, as plain Starlark, without a markdown code fence.

` + string(src)
}

// Refinement is an accepted refinement.
type Refinement struct {
	Src []byte
	// Renames maps a draft parameter to its new name, for the ones that
	// changed.
	Renames map[string]string
	// Model is the model that answered.
	Model string
}

// Refine asks the model to refine src, the workflow of candidate c
// rendered with opts, and checks its answer (see the comment at the top
// of this file); a refused answer is an error wrapping ErrRefused. On
// success c's parameters carry the refinement's names.
func (r *Refiner) Refine(ctx context.Context, src []byte, c *candidate.Candidate, opts codegen.Options) (*Refinement, error) {
	fn := codegen.FuncName(c, opts)
	resp, err := r.model.Complete(ctx, model.Request{Name: "refine", Prompt: prompt(src, fn)})
	if err != nil {
		return nil, fmt.Errorf("refining the workflow with models.%s: %w", r.key, err)
	}
	text, ok := resp.Output.(string)
	if !ok {
		return nil, fmt.Errorf("%w: the answer is JSON, not Starlark source", ErrRefused)
	}
	out := []byte(stripFence(text))
	renames, err := codegen.Equivalent(src, out, fn)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	// The candidate takes the new names; its workflow must then have the
	// refinement's signature, or the report and bundle would describe
	// another function than the one written.
	renamed := *c
	if err := renameSignature(&renamed, renames); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	regen, err := codegen.Workflow(&renamed, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: regenerating the workflow with the new names: %w", ErrRefused, err)
	}
	again, err := codegen.Equivalent(regen, out, fn)
	if err != nil {
		return nil, fmt.Errorf("%w: the renamed parameters do not fit the candidate: %w", ErrRefused, err)
	}
	if len(again) > 0 {
		return nil, fmt.Errorf("%w: the renamed parameters do not fit the candidate (%s)", ErrRefused, renameList(again))
	}
	*c = renamed
	model := resp.Model
	if model == "" {
		model = r.name
	}
	return &Refinement{Src: out, Renames: renames, Model: model}, nil
}

// stripFence removes the markdown code fence models put around code
// despite being told not to, and ends the text with a newline.
func stripFence(s string) string {
	t := strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(t, "```"); ok {
		if _, body, ok := strings.Cut(rest, "\n"); ok {
			t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(body), "```"))
		}
	}
	return t + "\n"
}

// renameSignature renames c's parameters after renames, which maps the
// names of the workflow's signature (the candidate's parameters, in
// order, as code generation spells them) to new ones.
func renameSignature(c *candidate.Candidate, renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	src, err := codegen.Workflow(c, codegen.Options{})
	if err != nil {
		return err
	}
	params, err := codegen.WorkflowParams(src)
	if err != nil {
		return err
	}
	if len(params) != len(c.Parameters)+1 {
		return fmt.Errorf("the workflow has %d parameters after ctx, the candidate %d", len(params)-1, len(c.Parameters))
	}
	byOld := map[string]string{}
	for i, p := range c.Parameters {
		to, ok := renames[params[i+1]]
		if !ok {
			continue
		}
		if candidate.Identifier(to) != to {
			return fmt.Errorf("parameter %s is renamed %s, which a workflow may not bind", params[i+1], to)
		}
		byOld[p.Name] = to
	}
	if err := renameDerived(c, byOld); err != nil {
		return err
	}
	c.RenameParameters(byOld)
	return nil
}

// renameDerived renames c's derived parameters and the parameters they
// read, in their expressions, refs and evidence, after byOld (a parameter's name to
// its new one): the workflow assigns a derived parameter from the
// parameters it reads, so a refinement that renames one of them renames
// it in the expression too, and the candidate must follow or it would
// derive from a parameter the workflow no longer has. The derived
// parameters are copied before they are changed.
func renameDerived(c *candidate.Candidate, byOld map[string]string) error {
	if len(c.DerivedParameters) == 0 || len(byOld) == 0 {
		return nil
	}
	derived := slices.Clone(c.DerivedParameters)
	for i := range derived {
		d := &derived[i]
		d.Name = cmp.Or(byOld[d.Name], d.Name)
		e, err := derive.Parse(d.Expression)
		if err != nil {
			return fmt.Errorf("derived parameter %s = %s: %w", d.Name, d.Expression, err)
		}
		d.Expression = derive.Rename(e, byOld).String()
		refs := make([]string, len(d.Refs))
		for j, r := range d.Refs {
			refs[j] = cmp.Or(byOld[r], r)
		}
		slices.Sort(refs)
		d.Refs = refs
		d.Evidence = slices.Clone(d.Evidence)
		for j := range d.Evidence {
			ev := &d.Evidence[j]
			inputs := make(map[string]string, len(ev.Inputs))
			for k, v := range ev.Inputs {
				inputs[cmp.Or(byOld[k], k)] = v
			}
			ev.Inputs = inputs
		}
	}
	c.DerivedParameters = derived
	return nil
}

// renameList is renames as "from → to" pairs, sorted.
func renameList(renames map[string]string) string {
	var parts []string
	for _, from := range slices.Sorted(maps.Keys(renames)) {
		parts = append(parts, from+" → "+renames[from])
	}
	return strings.Join(parts, ", ")
}

// Rewrite returns a hook that refines the selected workflow of a report
// and records the refinement in the report as warning CodeRefined; out is
// the workflow file named in the warning. Publishing calls it with the
// draft wherever it would write the workflow, so the refinement is
// written all or nothing.
func (r *Refiner) Rewrite(out string, opts codegen.Options) func(context.Context, *candidate.Report, *candidate.Candidate, []byte) ([]byte, error) {
	return func(ctx context.Context, rep *candidate.Report, sel *candidate.Candidate, draft []byte) ([]byte, error) {
		rf, err := r.Refine(ctx, draft, sel, opts)
		if err != nil {
			return nil, err
		}
		renamed := "no parameter renamed"
		if len(rf.Renames) > 0 {
			renamed = "parameters renamed " + renameList(rf.Renames)
		}
		rep.Warnings = append(rep.Warnings, candidate.Problem{
			Code: CodeRefined,
			Message: fmt.Sprintf("%s was refined by model %s ([models.%s]) and checked: it passes the workflow check and keeps the draft's %d steps, arguments and data flow; %s",
				filepath.ToSlash(out), rf.Model, r.key, len(sel.Steps), renamed),
		})
		return rf.Src, nil
	}
}
