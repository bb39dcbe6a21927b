package replay

import (
	"fmt"
	"strconv"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// arguments is what a candidate that compares arguments
// (Candidate.ArgumentsCompared) holds a trace to, precomputed once.
type arguments struct {
	// paths are the source paths of each parameter, by name: where a
	// trace's value of it is read (the first) and must recur (the rest).
	paths map[string][]string
	// derived are the expressions of the derived parameters, by name;
	// an expression that does not parse is nil, and every trace differs
	// from it.
	derived map[string]derive.Expr
}

func newArguments(c *candidate.Candidate) *arguments {
	if !c.ArgumentsCompared {
		return nil
	}
	a := &arguments{paths: map[string][]string{}, derived: map[string]derive.Expr{}}
	for _, p := range c.Parameters {
		a.paths[p.Name] = p.SourcePaths
	}
	for _, d := range c.DerivedParameters {
		e, err := derive.Parse(d.Expression)
		if err != nil {
			e = nil
		}
		a.derived[d.Name] = e
	}
	return a
}

// compareArguments compares the arguments of every deterministic step
// with the action aligned to it, for a trace that aligned with every
// step: a constant must be the action's value; a parameter is the
// trace's own value, read at its first source path, and must be the same
// at its other paths (the workflow passes one value to all of them); a
// derived parameter must be what its expression computes from those
// values. Fuzzy steps are not compared: a model's inputs as recorded may
// hold its answer, which no two runs share. Bindings and secrets come
// from the run, not from the candidate.
func (p *plan) compareArguments(t *trace.Trace, moves []candidate.Move) []candidate.Problem {
	a := p.args
	at := syncActions(moves)
	values := p.paramValues(t, moves)
	var out []candidate.Problem
	for j := range p.c.Steps {
		s := &p.c.Steps[j]
		i, ok := at[s.Index]
		if !ok || s.Segment == candidate.Fuzzy {
			continue
		}
		got := candidate.ActionArgs(&t.Actions[i])
		differs := func(key string, want any, how string) {
			g, present := got[key]
			if present && equal(want, g) {
				return
			}
			gs := "nothing"
			if present {
				gs = quote(g)
			}
			out = append(out, candidate.Problem{
				Code:    candidate.CodeArgumentDiffers,
				Message: fmt.Sprintf("step %d %s: action %s passes %s %s, the candidate %s", s.Index, s.Name, t.Actions[i].ID, key, gs, how),
				Step:    s.Index,
				Path:    fmt.Sprintf("$.actions[%d].parameters.%s", i, key),
			})
		}
		for _, arg := range s.Arguments {
			switch arg.Kind {
			case candidate.ArgConstant:
				differs(arg.Key, arg.Value, "passes "+quote(arg.Value))
			case candidate.ArgParameter:
				if e, isDerived := a.derived[arg.Parameter]; isDerived {
					if e == nil {
						differs(arg.Key, nil, fmt.Sprintf("cannot compute %s: its expression does not parse", arg.Parameter))
						continue
					}
					want, ok := e.Eval(values)
					if !ok {
						differs(arg.Key, nil, fmt.Sprintf("cannot compute %s: the trace lacks a parameter of %s", arg.Parameter, e))
						continue
					}
					differs(arg.Key, want, fmt.Sprintf("computes %s = %s = %s", arg.Parameter, e, quote(want)))
					continue
				}
				paths := a.paths[arg.Parameter]
				if len(paths) == 0 || paths[0] == candidate.ParameterPath(s.Index, arg.Key) {
					continue // where the trace's value is read
				}
				if want, ok := values[arg.Parameter]; ok {
					differs(arg.Key, want, fmt.Sprintf("passes parameter %s, which the trace gives as %s at %s", arg.Parameter, quote(want), paths[0]))
				}
			}
		}
	}
	return out
}

// syncActions maps each step to the trace action it is aligned with.
func syncActions(moves []candidate.Move) map[int]int {
	at := map[int]int{}
	for _, mv := range moves {
		if mv.Kind == candidate.MoveSync {
			at[mv.Step] = mv.ActionIndex
		}
	}
	return at
}

// paramValues returns the trace's value of each string parameter of the
// candidate, by name: the argument at the parameter's first source path
// of the action aligned with that step. A parameter whose step the trace
// lacks, or whose value there is not a string, has none.
func (p *plan) paramValues(t *trace.Trace, moves []candidate.Move) map[string]string {
	at := syncActions(moves)
	values := map[string]string{}
	for _, prm := range p.c.Parameters {
		if len(prm.SourcePaths) == 0 {
			continue
		}
		step, key, ok := candidate.ParseParameterPath(prm.SourcePaths[0])
		if !ok {
			continue
		}
		i, ok := at[step]
		if !ok || i < 0 || i >= len(t.Actions) {
			continue
		}
		if s, ok := candidate.ActionArgs(&t.Actions[i])[key].(string); ok {
			values[prm.Name] = s
		}
	}
	return values
}

// quote writes a value for a message: a string quoted, anything else as
// JSON would show it.
func quote(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// EffectTarget returns the target of a candidate side effect in a run
// whose parameters have values (by parameter name): the expression of an
// effect with metadata candidate.TargetExpression evaluated on them, or
// the effect's Target as it is when it has none, when the expression does
// not parse or Target is not it in braces (an edited report), or when a
// value it reads is missing. Shadow replay resolves a candidate's targets
// with it, and the runtime the targets it records.
func EffectTarget(se trace.SideEffect, values map[string]string) string {
	e := targetExpr(se)
	if e == nil {
		return se.Target
	}
	if v, ok := e.Eval(values); ok {
		return v
	}
	return se.Target
}

// targetExpr returns the parsed target expression of se, or nil.
func targetExpr(se trace.SideEffect) derive.Expr {
	src, ok := se.Metadata[candidate.TargetExpression].(string)
	if !ok || se.Target != "{"+src+"}" {
		return nil
	}
	e, err := derive.Parse(src)
	if err != nil {
		return nil
	}
	return e
}
