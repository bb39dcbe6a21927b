package mine

import (
	"slices"
	"strings"
	"unicode/utf8"

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
	// deriveEvidence is how many matching checks the report keeps as
	// evidence of a derivation. A mismatch refuses the derivation, so no
	// evidence of one is ever reported.
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
			if i < deriveEvidence {
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

// promptTemplate returns how the workflow builds the prompt of the
// approval at the last of steps, when its examples asked different
// questions. The questions of an approval usually name what is being
// approved ("Publish 0.1.1 to crates.io?"), which varies as an argument
// does; a prompt frozen to the first example would ask this run's
// approver about another run's values. Each example's prompt is read
// left to right, taking at each position the longest string argument
// value (of this step or an earlier one, a parameter or a binding) that
// starts there, else one literal character; the examples agree on a
// template when they all read to the same parts. varies is false when
// every example asked the same, and ok is false when they differ and no
// template reads them all: the caller then makes the prompt a parameter.
func promptTemplate(steps []candidate.Step, views []stepView) (parts []candidate.PromptPart, varies, ok bool) {
	last := views[len(views)-1]
	prompts := make([]string, len(last.actions))
	for e, a := range last.actions {
		if g := candidate.ActionGate(a); g != nil {
			prompts[e] = g.Prompt
		}
	}
	if !slices.ContainsFunc(prompts, func(p string) bool { return p != prompts[0] }) {
		return nil, false, true
	}
	type source struct {
		step   int
		key    string
		values []string
	}
	var sources []source
	for j, st := range steps {
		for _, arg := range st.Arguments {
			if arg.Kind != candidate.ArgParameter && arg.Kind != candidate.ArgBinding {
				continue
			}
			values := make([]string, len(prompts))
			usable := true
			for e, a := range views[j].actions {
				s, isString := candidate.ActionArgs(a)[arg.Key].(string)
				usable = usable && isString && s != ""
				values[e] = s
			}
			if usable {
				sources = append(sources, source{step: st.Index, key: arg.Key, values: values})
			}
		}
	}
	var first []candidate.PromptPart
	for e, prompt := range prompts {
		var read []candidate.PromptPart
		for i := 0; i < len(prompt); {
			best := -1
			for k, src := range sources {
				v := src.values[e]
				if strings.HasPrefix(prompt[i:], v) && (best < 0 || len(v) > len(sources[best].values[e])) {
					best = k
				}
			}
			if best >= 0 {
				read = append(read, candidate.PromptPart{Step: sources[best].step, Key: sources[best].key})
				i += len(sources[best].values[e])
				continue
			}
			_, size := utf8.DecodeRuneInString(prompt[i:])
			if n := len(read); n > 0 && read[n-1].Key == "" {
				read[n-1].Text += prompt[i : i+size]
			} else {
				read = append(read, candidate.PromptPart{Text: prompt[i : i+size]})
			}
			i += size
		}
		if e == 0 {
			first = read
		} else if !slices.Equal(first, read) {
			return nil, true, false
		}
	}
	return first, true, true
}
