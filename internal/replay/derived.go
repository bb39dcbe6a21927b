package replay

import (
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// heldoutEvidence is how many matching held-out checks a derived
// parameter keeps as evidence; every mismatch is kept.
const heldoutEvidence = 5

// heldoutMatch is a held-out trace that contains a candidate's procedure,
// and where its comparison is in the candidate's shadow report.
type heldoutMatch struct {
	at int
	t  *trace.Trace
}

// checkDerived evaluates each derived parameter's expression on every
// held-out trace that contains the procedure (an alignment with the
// steps that read and take the parameters) and adds what it found to the
// parameter's evidence. One mismatch is enough to refuse the derivation:
// mining found it on the source examples only, and a held-out trace that
// contradicts it is a caller who would need to pass another value. The
// parameter goes back to c.Parameters, so the workflow asks for it again,
// and a derivation_rejected warning names the trace. A candidate that
// compares arguments (Candidate.ArgumentsCompared) keeps the derivation
// and records the mismatch as evidence only: its shadow replay failed the
// trace already, and its derived values are parts of the recorded run,
// not values a caller would choose.
//
// matched are the held-out traces that contain the procedure, each with
// the index of its comparison in sh.Traces.
func checkDerived(c *candidate.Candidate, sh *candidate.ShadowReport, matched []heldoutMatch) {
	if len(c.DerivedParameters) == 0 {
		return
	}
	paths := map[string]string{}
	for _, p := range c.Parameters {
		if len(p.SourcePaths) > 0 {
			paths[p.Name] = p.SourcePaths[0]
		}
	}
	kept := c.DerivedParameters[:0:0]
	for _, d := range c.DerivedParameters {
		e, err := derive.Parse(d.Expression)
		if err != nil {
			c.Parameters = append(c.Parameters, d.Parameter)
			c.Warnings = append(c.Warnings, candidate.Problem{
				Code:    candidate.CodeDerivationRejected,
				Message: fmt.Sprintf("derived parameter %s is a parameter again: %v", d.Name, err),
				Path:    "derived_parameters." + d.Name,
			})
			continue
		}
		// The names come from the expression itself, not from the
		// report's refs, which may have been edited to disagree with it;
		// a name that is no parameter of the candidate has no value in
		// any trace, and would otherwise pass every check by skipping it.
		refs := derive.Refs(e)
		if r, ok := unknownRef(refs, paths); ok {
			c.Parameters = append(c.Parameters, d.Parameter)
			c.Warnings = append(c.Warnings, candidate.Problem{
				Code:    candidate.CodeDerivationRejected,
				Message: fmt.Sprintf("derived parameter %s is a parameter again: %s reads %s, which is not a parameter", d.Name, d.Expression, r),
				Path:    "derived_parameters." + d.Name,
			})
			continue
		}
		var refused *candidate.DerivationEvidence
		for _, m := range matched {
			values := map[string]string{}
			ok := true
			for _, r := range refs {
				v, found := stepValue(paths[r], sh.Traces[m.at].Alignment, m.t)
				ok = ok && found
				values[r] = v
			}
			want, found := "", false
			if len(d.SourcePaths) > 0 {
				want, found = stepValue(d.SourcePaths[0], sh.Traces[m.at].Alignment, m.t)
			}
			if !ok || !found {
				// The trace lacks a step or a value; its alignment
				// already fails it, and there is nothing to compare.
				continue
			}
			ev := candidate.DerivationEvidence{TraceID: m.t.ID, Role: candidate.RoleHeldout, Inputs: values, Want: want}
			got, defined := e.Eval(values)
			ev.Got, ev.Match = got, defined && got == want
			d.HeldoutChecks++
			if ev.Match && d.HeldoutChecks > heldoutEvidence {
				continue
			}
			d.Evidence = append(d.Evidence, ev)
			if !ev.Match && refused == nil {
				refused = &d.Evidence[len(d.Evidence)-1]
			}
		}
		if refused != nil && c.ArgumentsCompared {
			// A candidate that compares arguments has already failed the
			// trace (argument_differs): the value is not one the caller
			// may choose, so it stays derived and the evidence says
			// where it did not hold.
			kept = append(kept, d)
			continue
		}
		if refused != nil {
			c.Parameters = append(c.Parameters, d.Parameter)
			c.Warnings = append(c.Warnings, candidate.Problem{
				Code: candidate.CodeDerivationRejected,
				Message: fmt.Sprintf("derived parameter %s is a parameter again: held-out trace %s has %q where %s gives %q",
					d.Name, refused.TraceID, refused.Want, d.Expression, refused.Got),
				Path:    "derived_parameters." + d.Name,
				TraceID: refused.TraceID,
			})
			continue
		}
		kept = append(kept, d)
	}
	c.DerivedParameters = kept
}

// unknownRef returns the first of refs that is not a parameter with a
// source path.
func unknownRef(refs []string, paths map[string]string) (string, bool) {
	for _, r := range refs {
		if _, ok := paths[r]; !ok {
			return r, true
		}
	}
	return "", false
}

// stepValue reads the string at a parameter source path
// ("steps[N].parameters.KEY") from the action that step N is aligned
// with.
func stepValue(path string, moves []candidate.Move, t *trace.Trace) (string, bool) {
	step, key, ok := candidate.ParseParameterPath(path)
	if !ok {
		return "", false
	}
	for _, m := range moves {
		if m.Kind == candidate.MoveSync && m.Step == step && m.ActionIndex >= 0 && m.ActionIndex < len(t.Actions) {
			s, ok := candidate.ActionArgs(&t.Actions[m.ActionIndex])[key].(string)
			return s, ok
		}
	}
	return "", false
}
