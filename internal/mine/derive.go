package mine

import (
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
)

// Bounds of parameter derivation per candidate. The search of package
// derive is bounded per target; these bound how often it runs, so that a
// candidate with many parameters or examples stays cheap to mine.
const (
	// deriveMaxParams is the most string parameters a candidate may have
	// for derivation to be tried: the search runs about once per
	// parameter and round.
	deriveMaxParams = 16
	// deriveSearchExamples is how many examples the search looks at; an
	// expression it finds is then checked on every example.
	deriveSearchExamples = 8
	// deriveEvidence is how many matching checks per role the report
	// keeps as evidence; every mismatch is kept.
	deriveEvidence = 5
)

// deriveParameters finds the parameters of c whose value, in every
// example, an expression over the other parameters computes, and moves
// them from c.Parameters to c.DerivedParameters, so the workflow asks its
// caller only for the rest. Only required string parameters take part,
// as targets and as inputs: a value that is missing from some example or
// is not a string has nothing to derive from or to.
//
// Step arguments keep naming a derived parameter as before; code
// generation assigns it from its expression before the first step, so
// the steps are unchanged. Held-out traces are checked later, by shadow
// replay, which turns a contradicted derivation back into a parameter.
func deriveParameters(c *candidate.Candidate, views []stepView) {
	n := len(c.Examples)
	if n < 2 {
		return
	}
	values := map[string][]string{}
	var names []string
	for _, p := range c.Parameters {
		if !p.Required || p.Type != "string" || len(p.SourcePaths) == 0 {
			continue
		}
		vs, ok := exampleValues(p.SourcePaths[0], views, n)
		if !ok {
			continue
		}
		values[p.Name] = vs
		names = append(names, p.Name)
	}
	if len(names) < 2 || len(names) > deriveMaxParams {
		return
	}
	examples := func(k int) []map[string]string {
		out := make([]map[string]string, k)
		for e := range k {
			m := make(map[string]string, len(names))
			for _, name := range names {
				m[name] = values[name][e]
			}
			out[e] = m
		}
		return out
	}
	all := examples(n)
	found := derive.Parameters(all[:min(n, deriveSearchExamples)])
	if len(found) == 0 {
		return
	}
	kept := c.Parameters[:0:0]
	for _, p := range c.Parameters {
		e, ok := found[p.Name]
		if !ok {
			kept = append(kept, p)
			continue
		}
		d := candidate.DerivedParameter{
			Parameter:    p,
			Expression:   e.String(),
			Refs:         derive.Refs(e),
			Evidence:     []candidate.DerivationEvidence{},
			SourceChecks: len(all),
		}
		match := true
		for i, ex := range all {
			ev := evidence(e, d.Refs, ex, ex[p.Name])
			ev.TraceID, ev.Role = c.Examples[i].TraceID, candidate.RoleSource
			match = match && ev.Match
			if !ev.Match || i < deriveEvidence {
				d.Evidence = append(d.Evidence, ev)
			}
		}
		if !match {
			// Found on the first examples, contradicted by a later one.
			kept = append(kept, p)
			continue
		}
		c.DerivedParameters = append(c.DerivedParameters, d)
	}
	// Every expression reads only parameters derive.Parameters kept, and
	// a derivation refused above is a parameter again, so every
	// expression still reads parameters the caller passes.
	c.Parameters = kept
}

// exampleValues reads the string value at a source path
// ("steps[N].parameters.KEY") in each example.
func exampleValues(path string, views []stepView, n int) ([]string, bool) {
	step, key, ok := candidate.ParseParameterPath(path)
	if !ok || step > len(views) {
		return nil, false
	}
	out := make([]string, n)
	for e, a := range views[step-1].actions {
		if e >= n {
			break
		}
		s, ok := candidate.ActionArgs(a)[key].(string)
		if !ok {
			return nil, false
		}
		out[e] = s
	}
	return out, true
}

// evidence evaluates e on one example's parameter values: inputs holds
// the values of refs, want the value the example recorded for the
// derived parameter.
func evidence(e derive.Expr, refs []string, values map[string]string, want string) candidate.DerivationEvidence {
	ev := candidate.DerivationEvidence{Inputs: map[string]string{}, Want: want}
	for _, r := range refs {
		ev.Inputs[r] = values[r]
	}
	got, ok := e.Eval(values)
	ev.Got = got
	ev.Match = ok && got == want
	return ev
}
