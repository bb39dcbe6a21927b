package mine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Bounds on how much of a step's output is indexed for data flow. Outputs
// can be whole files; values deeper or later than this are not matched.
const (
	flowMaxDepth = 8
	flowMaxNodes = 512
)

// flowRef names a value inside an earlier step's result.
type flowRef struct {
	step  int    // 1-based
	field string // "output" or "observed_output"
	path  string // JSON path, "$" for the whole value
}

// flowIndex records, per example, every value the steps so far produced,
// so a later field can be matched against them. A binding is a ref whose
// value equals the field's value in every example.
type flowIndex struct {
	values []map[flowRef]string // per example: ref → canonical value
	byVal  map[string][]flowRef // example 0: canonical value → refs
}

func newFlowIndex(examples int) *flowIndex {
	f := &flowIndex{values: make([]map[flowRef]string, examples), byVal: map[string][]flowRef{}}
	for i := range f.values {
		f.values[i] = map[flowRef]string{}
	}
	return f
}

// add indexes the outputs of a step in every example.
func (f *flowIndex) add(v stepView) {
	for e, a := range v.actions {
		for _, field := range [...]string{"output", "observed_output"} {
			val := a.Output
			if field == "observed_output" {
				val = a.ObservedOutput
			}
			if val == nil {
				continue
			}
			nodes := 0
			flatten(val, "$", 0, &nodes, func(p string, x any) {
				r := flowRef{step: v.index, field: field, path: p}
				c := canonical(x)
				f.values[e][r] = c
				if e == 0 {
					f.byVal[c] = append(f.byVal[c], r)
				}
			})
		}
	}
}

// find returns the binding for a field whose canonical values across the
// examples are canon, preferring the nearest earlier step, then output over
// observed_output, then the shortest path.
func (f *flowIndex) find(canon []string) (candidate.Binding, bool) {
	var found []flowRef
	for _, r := range f.byVal[canon[0]] {
		ok := true
		for e := 1; e < len(canon); e++ {
			if f.values[e][r] != canon[e] {
				ok = false
				break
			}
		}
		if ok {
			found = append(found, r)
		}
	}
	if len(found) == 0 {
		return candidate.Binding{}, false
	}
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.step != b.step {
			return a.step > b.step
		}
		if a.field != b.field {
			return a.field == "output"
		}
		if len(a.path) != len(b.path) {
			return len(a.path) < len(b.path)
		}
		return a.path < b.path
	})
	r := found[0]
	return candidate.Binding{FromStep: r.step, FromField: r.field, FromPath: r.path}, true
}

// flatten calls fn for v and every value inside it, with its JSON path.
func flatten(v any, p string, depth int, nodes *int, fn func(string, any)) {
	if *nodes >= flowMaxNodes {
		return
	}
	*nodes++
	fn(p, v)
	if depth >= flowMaxDepth {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			flatten(x[k], p+pathKey(k), depth+1, nodes, fn)
		}
	case []any:
		for i, el := range x {
			flatten(el, fmt.Sprintf("%s[%d]", p, i), depth+1, nodes, fn)
		}
	}
}

// pathKey renders one object member step of a JSON path: ".name" for
// identifier-like keys, `["odd key"]` otherwise.
func pathKey(k string) string {
	simple := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			simple = false
			break
		}
	}
	if simple {
		return "." + k
	}
	b, _ := json.Marshal(k)
	return "[" + string(b) + "]"
}

// paramTable assigns workflow parameters to varying fields. Fields with
// the same key and the same values in every example are one parameter
// (the same version passed to two steps); a field with the same key but
// other values gets its own name, suffixed with its step.
type paramTable struct {
	groups []*paramGroup
	taken  map[string]bool
}

type paramGroup struct {
	p      candidate.Parameter
	vector string
}

func newParamTable() *paramTable { return &paramTable{taken: map[string]bool{}} }

func (t *paramTable) use(key, srcPath string, step int, values []any, canon []string) string {
	vector := strings.Join(canon, "\x1f")
	for _, g := range t.groups {
		if g.p.Key == key && g.vector == vector {
			g.p.SourcePaths = append(g.p.SourcePaths, srcPath)
			return g.p.Name
		}
	}
	name := paramName(key)
	if t.taken[name] {
		name = paramName(fmt.Sprintf("%s_step%d", key, step))
	}
	base := name
	for i := 2; t.taken[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	t.taken[name] = true
	g := &paramGroup{vector: vector, p: candidate.Parameter{
		Name: name, Key: key, SourcePaths: []string{srcPath}, Required: true, Examples: []any{},
	}}
	seen := map[string]bool{}
	types := map[string]bool{}
	for i, v := range values {
		types[candidate.JSONType(v)] = true
		if !seen[canon[i]] && len(g.p.Examples) < 5 {
			seen[canon[i]] = true
			g.p.Examples = append(g.p.Examples, v)
		}
	}
	g.p.Type = "mixed"
	if len(types) == 1 {
		g.p.Type = sortedSet(types)[0]
	}
	t.groups = append(t.groups, g)
	return name
}

// paramName is the identifier for a key. Names of the form stepN are
// reserved for the generated code's step results.
func paramName(key string) string {
	name := candidate.Identifier(key)
	if strings.HasPrefix(name, "step") && len(name) > 4 && strings.Trim(name[4:], "0123456789") == "" {
		name += "_"
	}
	return name
}

func (t *paramTable) list() []candidate.Parameter {
	out := make([]candidate.Parameter, len(t.groups))
	for i, g := range t.groups {
		out[i] = g.p
	}
	return out
}

// stepSideEffects returns the side effects of a step, or a rejection when
// the examples disagree on them. Effects whose target differs between
// examples are still one procedure when every example's target is the
// value of the same parameter of that step (a file named after the
// version); the candidate records such a target as "{key}".
func stepSideEffects(v stepView) ([]trace.SideEffect, *candidate.Problem) {
	lists := make([][]trace.SideEffect, len(v.actions))
	for e, a := range v.actions {
		l := append([]trace.SideEffect(nil), a.SideEffects...)
		sortSideEffects(l)
		lists[e] = l
	}
	first := lists[0]
	same := true
	for _, l := range lists[1:] {
		if !equalEffects(first, l) {
			same = false
			break
		}
	}
	if same {
		return stripEffects(first), nil
	}
	// Align by everything but the target.
	byShape := make([][]trace.SideEffect, len(lists))
	for e, l := range lists {
		s := append([]trace.SideEffect(nil), l...)
		sort.SliceStable(s, func(i, j int) bool { return shapeKey(s[i]) < shapeKey(s[j]) })
		byShape[e] = s
	}
	out := stripEffects(byShape[0])
	ok := true
	for i := range out {
		for _, l := range byShape[1:] {
			if len(l) != len(out) || shapeKey(l[i]) != shapeKey(out[i]) {
				ok = false
			}
		}
		if !ok {
			break
		}
		targetsEqual := true
		for _, l := range byShape[1:] {
			if l[i].Target != out[i].Target {
				targetsEqual = false
			}
		}
		if targetsEqual {
			continue
		}
		key, found := targetParameter(v, byShape, i)
		if !found {
			ok = false
			break
		}
		out[i].Target = "{" + key + "}"
		out[i].Metadata = map[string]any{"target_parameter": key}
	}
	if ok {
		sortSideEffects(out)
		return out, nil
	}
	var parts []string
	for e, l := range lists {
		parts = append(parts, fmt.Sprintf("%s has %s", v.actions[e].ID, describeEffects(l)))
		if len(parts) == 4 {
			break
		}
	}
	return stripEffects(first), &candidate.Problem{
		Code:    candidate.CodeDivergentSideEffects,
		Message: fmt.Sprintf("step %d %s has different side effects across examples: %s", v.index, v.actions[0].Name, strings.Join(parts, "; ")),
		Step:    v.index,
	}
}

func targetParameter(v stepView, byShape [][]trace.SideEffect, i int) (string, bool) {
	for _, key := range sortedKeys(v.actions[0].Parameters) {
		match := true
		for e, a := range v.actions {
			s, ok := candidate.ActionArgs(a)[key].(string)
			if !ok || s != byShape[e][i].Target {
				match = false
				break
			}
		}
		if match {
			return key, true
		}
	}
	return "", false
}

func shapeKey(se trace.SideEffect) string {
	return se.Kind + "\x00" + se.Capability + "\x00" + se.Mutation
}

func equalEffects(a, b []trace.SideEffect) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if sideEffectKey(a[i]) != sideEffectKey(b[i]) {
			return false
		}
	}
	return true
}

// stripEffects copies side effects without per-run metadata.
func stripEffects(l []trace.SideEffect) []trace.SideEffect {
	out := make([]trace.SideEffect, len(l))
	for i, se := range l {
		out[i] = trace.SideEffect{Kind: se.Kind, Target: se.Target, Capability: se.Capability, Mutation: se.Mutation}
	}
	return out
}

func describeEffects(l []trace.SideEffect) string {
	if len(l) == 0 {
		return "no side effects"
	}
	var parts []string
	for _, se := range l {
		parts = append(parts, strings.TrimSpace(se.Kind+" "+se.Target))
	}
	return strings.Join(parts, ", ")
}
