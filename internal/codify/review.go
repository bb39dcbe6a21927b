package codify

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Interactive review.
//
// A person reviews the draft candidate step by step and decides, for each
// step, to keep it, drop it, or turn some of its literal arguments into
// workflow parameters. The decisions are applied to the sources, not
// patched into the candidate: a dropped step's action is removed from
// every trace the candidate was mined from, and the traces are mined
// again. Everything derived from the steps (constants, data flow,
// approvals, expected outputs, the signature, the examples' action ids,
// savings, the shadow replay against the sources and the bundle's
// fixtures) then agrees with the kept steps by construction, which
// editing the candidate by hand could not promise. A parameter is the one
// change mining cannot infer from one example, so it is made on the
// re-mined candidate (candidate.Candidate.Parameterize).

// CodeReviewed is the report warning that records an interactive review.
const CodeReviewed = "reviewed_interactively"

// Review is what a person decided about a candidate's steps.
type Review struct {
	// Drop are the 1-based indexes of the dropped steps, increasing.
	Drop []int
	// Params are the arguments to make parameters, in step order and, in
	// a step, in the order they were asked for. A step is in Drop or has
	// params, not both.
	Params []ParamEdit
}

// ParamEdit makes the constant argument Key of step Step (a 1-based index
// in the reviewed candidate) the workflow parameter Name; or, when From
// is set, renames the parameter From that the argument already takes
// (mined from several sessions, or derived) to Name, in every step and
// derived expression that reads it.
type ParamEdit struct {
	Step int
	Key  string
	Name string
	From string
}

// Empty reports whether the review changes nothing.
func (r *Review) Empty() bool { return len(r.Drop) == 0 && len(r.Params) == 0 }

// Apply applies rv to the selected candidate of d: it drops the reviewed
// steps' actions from every example's trace and mines the result again
// as d was mined, then makes the reviewed arguments parameters. It
// returns the new draft, whose traces are the edited copies (d is not
// modified), or an error when mining the edited traces does not give
// back the reviewed candidate without the dropped steps. The report
// records the review as a warning with code CodeReviewed.
func Apply(ctx context.Context, d *Draft, rv *Review) (*Draft, error) {
	r, traces := d.Report, d.Traces
	sel := r.Selected()
	if sel == nil || rv.Empty() {
		return d, nil
	}
	dropped := map[int]bool{}
	for _, s := range rv.Drop {
		dropped[s] = true
	}
	var what []string
	if len(rv.Drop) > 0 {
		drop := map[*trace.Trace]map[string]bool{}
		for _, ex := range sel.Examples {
			i := slices.IndexFunc(traces, func(t *trace.Trace) bool { return t.ID == ex.TraceID && t.SourceHash == ex.SourceHash })
			if i < 0 {
				return nil, fmt.Errorf("applying the review: example trace %s is not among the sessions", ex.TraceID)
			}
			ids := drop[traces[i]]
			if ids == nil {
				ids = map[string]bool{}
				drop[traces[i]] = ids
			}
			for _, s := range rv.Drop {
				ids[ex.ActionIDs[s-1]] = true
			}
		}
		edited := make([]*trace.Trace, len(traces))
		for i, t := range traces {
			ids := drop[t]
			if ids == nil {
				edited[i] = t
				continue
			}
			cp := *t
			cp.Actions = slices.DeleteFunc(slices.Clone(t.Actions), func(a trace.Action) bool { return ids[a.ID] })
			edited[i] = &cp
		}
		var want []string
		for i, sig := range sel.SequenceSignature {
			if !dropped[i+1] {
				want = append(want, sig)
			}
		}
		r2, err := d.mine(ctx, edited)
		if err != nil {
			return nil, err
		}
		if s2 := r2.Selected(); s2 == nil || !slices.Equal(s2.SequenceSignature, want) {
			return nil, fmt.Errorf("applying the review: mining the sessions without the dropped steps does not give back the reviewed workflow; nothing written")
		}
		for _, s := range rv.Drop {
			what = append(what, fmt.Sprintf("dropped step %d %s", s, sel.Steps[s-1].Name))
		}
		r, traces, sel = r2, edited, r2.Selected()
	}
	// Old step index → index in the re-mined candidate.
	renumber := func(old int) int {
		n := old
		for _, s := range rv.Drop {
			if s < old {
				n--
			}
		}
		return n
	}
	renames := map[string]string{}
	for _, e := range rv.Params {
		if dropped[e.Step] {
			continue
		}
		if e.From != "" {
			what = append(what, fmt.Sprintf("renamed the parameter %s of step %d %s to %s", e.From, e.Step, sel.Steps[renumber(e.Step)-1].Name, e.Name))
			renames[e.From] = e.Name
			continue
		}
		what = append(what, fmt.Sprintf("made %s of step %d %s the parameter %s", e.Key, e.Step, sel.Steps[renumber(e.Step)-1].Name, e.Name))
		if err := sel.Parameterize(renumber(e.Step), e.Key, e.Name); err != nil {
			return nil, fmt.Errorf("applying the review: %w", err)
		}
	}
	if err := renameParameters(sel, renames); err != nil {
		return nil, fmt.Errorf("applying the review: %w", err)
	}
	sel.SortParameters()
	r.Warnings = append(r.Warnings, candidate.Problem{
		Code:    CodeReviewed,
		Message: "reviewed interactively (steps numbered as in the draft): " + strings.Join(what, "; "),
	})
	return &Draft{Report: r, Traces: traces, Mine: d.Mine}, nil
}

// CanDrop reports whether the review may drop one more step of c: a
// workflow keeps at least one step.
func (r *Review) CanDrop(c *candidate.Candidate) bool { return len(r.Drop) < len(c.Steps)-1 }

// NewParamEdit checks that the argument key of step i (0-based) of c can
// become a workflow parameter and returns the edit: name, or key as an
// identifier when name is empty. Only a literal argument of a step that
// passes its arguments can; the error says why another cannot, in words
// a reviewer can act on.
func NewParamEdit(c *candidate.Candidate, i int, key, name string) (ParamEdit, error) {
	st := c.Steps[i]
	if st.Kind == trace.KindHumanApproval {
		return ParamEdit{}, fmt.Errorf("step %d is an approval: its prompt stands for its arguments, which the workflow does not pass", st.Index)
	}
	j := slices.IndexFunc(st.Arguments, func(a candidate.Argument) bool { return a.Key == key })
	if j < 0 {
		return ParamEdit{}, fmt.Errorf("step %d has no argument %q (it has %s)", st.Index, key, argKeys(st))
	}
	a := st.Arguments[j]
	if a.Kind == candidate.ArgParameter {
		// Already a parameter: the answer renames it.
		if name == "" || name == a.Parameter {
			return ParamEdit{}, fmt.Errorf("%s is already the parameter %s; give it another name to rename it", key, a.Parameter)
		}
		if candidate.Identifier(name) != name {
			return ParamEdit{}, fmt.Errorf("%q cannot name a parameter (try %s)", name, candidate.Identifier(name))
		}
		if hasParameter(c, name) {
			return ParamEdit{}, fmt.Errorf("%s is already a parameter: renaming %s to it would make two parameters one", name, a.Parameter)
		}
		return ParamEdit{Step: st.Index, Key: key, Name: name, From: a.Parameter}, nil
	}
	if a.Kind != candidate.ArgConstant {
		return ParamEdit{}, fmt.Errorf("%s is not a literal: it is %s", key, ArgumentSource(a))
	}
	if name == "" {
		name = candidate.Identifier(key)
	}
	if candidate.Identifier(name) != name {
		return ParamEdit{}, fmt.Errorf("%q cannot name a parameter (try %s)", name, candidate.Identifier(name))
	}
	return ParamEdit{Step: st.Index, Key: key, Name: name}, nil
}

// hasParameter reports whether c has a parameter or a derived parameter
// named name.
func hasParameter(c *candidate.Candidate, name string) bool {
	return slices.ContainsFunc(c.Parameters, func(p candidate.Parameter) bool { return p.Name == name }) ||
		slices.ContainsFunc(c.DerivedParameters, func(d candidate.DerivedParameter) bool { return d.Name == name })
}

// renameParameters renames c's parameters and derived parameters after
// renames (a name to its new one), in the steps that read them and the
// derived expressions too. A name that is not one of c's, or a new name
// that is already taken, is an error: the candidate would no longer be
// what the review showed.
func renameParameters(c *candidate.Candidate, renames map[string]string) error {
	if len(renames) == 0 {
		return nil
	}
	for _, from := range slices.Sorted(maps.Keys(renames)) {
		to := renames[from]
		if !hasParameter(c, from) {
			return fmt.Errorf("the workflow has no parameter %s to rename to %s", from, to)
		}
		if _, renamed := renames[to]; hasParameter(c, to) && !renamed {
			return fmt.Errorf("cannot rename %s to %s: %s is already a parameter", from, to, to)
		}
	}
	if err := renameDerived(c, renames); err != nil {
		return err
	}
	c.RenameParameters(renames)
	return nil
}

// ArgumentSource says where a step's argument comes from, as a reviewer
// reads it: a literal (its JSON, cut at 72 characters), a parameter, the
// result of an earlier step, or a secret.
func ArgumentSource(a candidate.Argument) string {
	switch a.Kind {
	case candidate.ArgConstant:
		b, err := json.Marshal(a.Value)
		if err != nil {
			return "a literal"
		}
		s := string(b)
		if r := []rune(s); len(r) > 72 {
			s = string(r[:71]) + "…"
		}
		return s
	case candidate.ArgParameter:
		return "parameter " + a.Parameter
	case candidate.ArgBinding:
		if a.Binding != nil {
			return fmt.Sprintf("the result of step %d at %s", a.Binding.FromStep, a.Binding.FromPath)
		}
	case candidate.ArgSecret:
		return "secret " + a.Secret
	}
	return string(a.Kind)
}

// argKeys lists the argument keys of st, "none" without any.
func argKeys(st candidate.Step) string {
	if len(st.Arguments) == 0 {
		return "none"
	}
	keys := make([]string, len(st.Arguments))
	for i, a := range st.Arguments {
		keys[i] = a.Key
	}
	return strings.Join(keys, ", ")
}
