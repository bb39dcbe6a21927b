package mine

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/derive"
)

// declareParameters makes the run's declared parameters (values, by
// name: a release's versions and branch) parameters of c, the candidate
// of that one run, and every other argument that contains one an
// expression over them, so that the workflow can run the next release
// and not only replay this one.
//
// A declared value is a parameter where some step passes it whole (the
// release analysis takes current_version): that argument is where a
// held-out run's value is read, so a value no step passes whole is not
// one (it could never be checked). A string argument of any step that
// contains parameters' values is a derived parameter, its expression
// read by derive.Substitute ("git push origin " + target_release_branch);
// one that is a parameter's value is that parameter. A side effect whose
// target was such an argument's value takes the argument's value at run
// time (target_parameter); one whose target otherwise holds parameters'
// values is an expression over them too (candidate.TargetExpression).
// An expected output that names a parameter's value is no expectation of
// the next run, whose values differ: it is dropped, with a note on the
// step.
//
// With one example nothing else can be seen to vary, which is what
// candidate.ArgumentsCompared makes shadow replay hold a held-out run
// to. It returns the names of the parameters, in the order of their
// first use.
func declareParameters(c *candidate.Candidate, values map[string]string) []string {
	if len(values) == 0 {
		return nil
	}
	// First pass: the declared values some step passes whole, each at
	// its paths, in step and key order.
	paths := map[string][]string{}
	var order []string
	for _, st := range c.Steps {
		for _, arg := range st.Arguments {
			s, ok := arg.Value.(string)
			if arg.Kind != candidate.ArgConstant || !ok {
				continue
			}
			e, ok := derive.Substitute(s, values)
			if !ok || len(derive.Refs(e)) != 1 || e.String() != derive.Refs(e)[0] {
				continue
			}
			k := derive.Refs(e)[0]
			if _, seen := paths[k]; !seen {
				order = append(order, k)
			}
			paths[k] = append(paths[k], candidate.ParameterPath(st.Index, arg.Key))
		}
	}
	if len(order) == 0 {
		return nil
	}
	params := map[string]string{}
	used := map[string]bool{}
	name := map[string]string{}  // declared key → parameter name
	keyOf := map[string]string{} // parameter name → declared key
	for _, k := range order {
		params[k] = values[k]
		n := candidate.Identifier(k)
		for i := 2; used[n]; i++ {
			n = candidate.Identifier(k) + "_" + strconv.Itoa(i)
		}
		used[n] = true
		name[k], keyOf[n] = n, k
		c.Parameters = append(c.Parameters, candidate.Parameter{
			Name: n, Key: k, SourcePaths: paths[k], Examples: []any{values[k]}, Type: "string", Required: true,
		})
	}

	// Second pass: every string argument that holds parameters' values.
	replaced := map[string]bool{} // "step\x00key" of arguments no longer constant
	for j := range c.Steps {
		st := &c.Steps[j]
		argValue := map[string]string{}
		for a := range st.Arguments {
			arg := &st.Arguments[a]
			s, ok := arg.Value.(string)
			if arg.Kind != candidate.ArgConstant || !ok {
				continue
			}
			e, ok := derive.Substitute(s, params)
			if !ok {
				continue
			}
			e = derive.Rename(e, name)
			refs := derive.Refs(e)
			argValue[s] = arg.Key
			replaced[strconv.Itoa(st.Index)+"\x00"+arg.Key] = true
			arg.Kind, arg.Value = candidate.ArgParameter, nil
			if e.String() == refs[0] {
				arg.Parameter = refs[0]
				st.ParameterRefs = appendUnique(st.ParameterRefs, refs[0])
				continue
			}
			n := candidate.Identifier(st.Name + "_" + arg.Key)
			for i := 2; used[n]; i++ {
				n = candidate.Identifier(st.Name+"_"+arg.Key) + "_" + strconv.Itoa(i)
			}
			used[n] = true
			arg.Parameter = n
			st.ParameterRefs = appendUnique(st.ParameterRefs, n)
			inputs := map[string]string{}
			for _, r := range refs {
				inputs[r] = params[keyOf[r]]
			}
			c.DerivedParameters = append(c.DerivedParameters, candidate.DerivedParameter{
				Parameter: candidate.Parameter{
					Name: n, Key: arg.Key, SourcePaths: []string{candidate.ParameterPath(st.Index, arg.Key)},
					Examples: []any{s}, Type: "string", Required: true,
				},
				Expression:   e.String(),
				Refs:         refs,
				SourceChecks: 1,
				Evidence: []candidate.DerivationEvidence{{
					TraceID: c.Examples[0].TraceID, Role: candidate.RoleSource, Inputs: inputs, Want: s, Got: s, Match: true,
				}},
			})
		}
		for i := range st.SideEffects {
			se := &st.SideEffects[i]
			if key, ok := argValue[se.Target]; ok {
				se.Target = "{" + key + "}"
				se.Metadata = map[string]any{"target_parameter": key}
				continue
			}
			// A target that is no argument of its step (the branch a
			// push writes, the tag a commit makes) is computed from the
			// workflow's parameters as arguments are.
			if e, ok := derive.Substitute(se.Target, params); ok {
				e = derive.Rename(e, name)
				se.Target = "{" + e.String() + "}"
				se.Metadata = map[string]any{candidate.TargetExpression: e.String()}
			}
		}
		if st.ExpectedOutput != nil && mentions(st.ExpectedOutput, params) {
			st.ExpectedOutput = nil
			st.ReviewNotes = append(st.ReviewNotes, fmt.Sprintf("step %d %s: its recorded output names this run's parameter values; the next run's differs, so it is not an expected output", st.Index, st.Name))
		}
	}
	c.Constants = slices.DeleteFunc(c.Constants, func(k candidate.Constant) bool {
		key, ok := strings.CutPrefix(k.Path, "parameters.")
		return ok && replaced[strconv.Itoa(k.Step)+"\x00"+key]
	})
	c.ExpectedOutputs = slices.DeleteFunc(c.ExpectedOutputs, func(o candidate.ExpectedOutput) bool {
		return o.Step >= 1 && o.Step <= len(c.Steps) && c.Steps[o.Step-1].ExpectedOutput == nil
	})
	c.SideEffects = c.SideEffects[:0]
	for _, s := range c.Steps {
		c.SideEffects = append(c.SideEffects, s.SideEffects...)
	}
	sortSideEffects(c.SideEffects)
	names := make([]string, len(order))
	for i, k := range order {
		names[i] = name[k]
	}
	return names
}

// mentions reports whether a string anywhere in the JSON value v holds
// one of values as a token of its own.
func mentions(v any, values map[string]string) bool {
	switch x := v.(type) {
	case string:
		_, ok := derive.Substitute(x, values)
		return ok
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if mentions(x[k], values) {
				return true
			}
		}
	case []any:
		for _, el := range x {
			if mentions(el, values) {
				return true
			}
		}
	}
	return false
}

// dropModelOutputs removes the expected output of every fuzzy step of a
// candidate built from one run: a model answered once, and shadow
// replay compares deterministic output only where it is known to be
// stable, which one answer cannot show.
func dropModelOutputs(c *candidate.Candidate) {
	for j := range c.Steps {
		if st := &c.Steps[j]; st.Segment == candidate.Fuzzy {
			st.ExpectedOutput = nil
		}
	}
	c.ExpectedOutputs = slices.DeleteFunc(c.ExpectedOutputs, func(o candidate.ExpectedOutput) bool {
		return o.Step >= 1 && o.Step <= len(c.Steps) && c.Steps[o.Step-1].ExpectedOutput == nil
	})
}
