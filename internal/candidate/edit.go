package candidate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
)

// Edits a reviewer makes to a mined candidate. Mining infers parameters
// from what varies between examples; a person can see that a literal of
// one example is really an input, or give parameters clearer names. These
// methods make those edits while keeping what mining guarantees: every
// argument that refers to a parameter names one of c.Parameters, each
// parameter lists the paths it fills, and parameters are ordered by first
// use, as they appear in the workflow's signature.

// Parameterize makes the constant argument key of step (a 1-based index)
// the parameter name: the argument refers to it, the constant is gone,
// and the parameter (new, or shared when c has one of that name) takes
// the literal as an example and the argument's path as a source. It does
// not reorder the parameters; SortParameters does.
func (c *Candidate) Parameterize(step int, key, name string) error {
	if step < 1 || step > len(c.Steps) {
		return fmt.Errorf("no step %d", step)
	}
	st := &c.Steps[step-1]
	j := slices.IndexFunc(st.Arguments, func(a Argument) bool { return a.Key == key })
	if j < 0 || st.Arguments[j].Kind != ArgConstant {
		return fmt.Errorf("step %d has no literal argument %q", st.Index, key)
	}
	a := &st.Arguments[j]
	value := a.Value
	*a = Argument{Key: key, Kind: ArgParameter, Parameter: name}
	if !slices.Contains(st.ParameterRefs, name) {
		st.ParameterRefs = append(st.ParameterRefs, name)
	}
	c.Constants = slices.DeleteFunc(c.Constants, func(k Constant) bool {
		return k.Step == st.Index && k.Path == "parameters."+key
	})
	path := ParameterPath(st.Index, key)
	if i := slices.IndexFunc(c.Parameters, func(p Parameter) bool { return p.Name == name }); i >= 0 {
		p := &c.Parameters[i]
		p.SourcePaths = append(p.SourcePaths, path)
		if !slices.ContainsFunc(p.Examples, func(v any) bool { return jsonText(v) == jsonText(value) }) && len(p.Examples) < 5 {
			p.Examples = append(p.Examples, value)
		}
		if t := JSONType(value); p.Type != t {
			p.Type = "mixed"
		}
		return nil
	}
	c.Parameters = append(c.Parameters, Parameter{
		Name: name, Key: key, SourcePaths: []string{path},
		Examples: []any{value}, Type: JSONType(value), Required: true,
	})
	return nil
}

// jsonText is v encoded, to compare JSON values.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// RenameParameters renames c's parameters after renames, which maps a
// parameter's name to its new one, and every argument and parameter
// reference of the steps with them. Names not in renames are kept. The
// steps' argument lists are copied before they are changed, so a shallow
// copy of c can be renamed without changing c.
func (c *Candidate) RenameParameters(renames map[string]string) {
	if len(renames) == 0 {
		return
	}
	c.Parameters = slices.Clone(c.Parameters)
	for i := range c.Parameters {
		if to, ok := renames[c.Parameters[i].Name]; ok {
			c.Parameters[i].Name = to
		}
	}
	c.Steps = slices.Clone(c.Steps)
	for i := range c.Steps {
		st := &c.Steps[i]
		st.Arguments = slices.Clone(st.Arguments)
		for j := range st.Arguments {
			if a := &st.Arguments[j]; a.Kind == ArgParameter && renames[a.Parameter] != "" {
				a.Parameter = renames[a.Parameter]
			}
		}
		refs := make([]string, len(st.ParameterRefs))
		for j, n := range st.ParameterRefs {
			refs[j] = cmp.Or(renames[n], n)
		}
		st.ParameterRefs = refs
	}
}

// SortParameters orders c's parameters by first use, step by step and
// argument by argument, as mining orders them, so that one made by
// Parameterize takes its place in the workflow's signature.
func (c *Candidate) SortParameters() {
	type pos struct{ step, arg int }
	first := func(p Parameter) pos {
		best := pos{len(c.Steps) + 1, 0}
		for _, sp := range p.SourcePaths {
			n, key, ok := ParseParameterPath(sp)
			if !ok || n > len(c.Steps) {
				continue
			}
			j := slices.IndexFunc(c.Steps[n-1].Arguments, func(a Argument) bool { return a.Key == key })
			if p := (pos{n, j}); p.step < best.step || p.step == best.step && p.arg < best.arg {
				best = p
			}
		}
		return best
	}
	slices.SortStableFunc(c.Parameters, func(a, b Parameter) int {
		pa, pb := first(a), first(b)
		return cmp.Or(cmp.Compare(pa.step, pb.step), cmp.Compare(pa.arg, pb.arg))
	})
}
