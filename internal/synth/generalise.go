package synth

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"go.starlark.net/syntax"
)

// MinStepExamples is the fewest recorded runs a step's synthesis works
// from: two shown to the model, and at least one withheld from it, so
// that passing the recorded runs means more than repeating what the
// model was shown.
const MinStepExamples = 3

// CodeRecordedLiteral marks a function refused because its code holds a
// recorded input value as a literal: it looks outputs up instead of
// computing them.
const CodeRecordedLiteral = "recorded_literal"

// withhold splits a step's recorded runs into those shown to the model
// and those withheld from it: the last quarter, and at least one. The
// split is by recorded order so that the same bundle always withholds
// the same runs, and a reviewer can reproduce it.
func withhold(examples []StepExample) (shown, withheld []StepExample) {
	k := max(1, len(examples)/4)
	return examples[:len(examples)-k], examples[len(examples)-k:]
}

// recordedLiterals lists every string or number literal of src (a
// parsed function) that equals an input value of a run the model was
// shown: a function that compares its input with "T-1", or keys a dict
// of outputs by it, recites the traces rather than doing the step. Only
// values that tell the shown runs apart count (an input that is the same
// in every run, like a fixed mode, is part of the step's contract), and
// "", 0 and 1 never count: they are too common to be recited.
func recordedLiterals(src string, shown []StepExample) []StepFailure {
	f, err := fileOptions().Parse("step.star", src, 0)
	if err != nil {
		return nil
	}
	type origin struct{ key, where string }
	recorded := map[string]origin{}
	distinct := map[string]map[string]bool{}
	for _, ex := range shown {
		for k, v := range ex.Inputs {
			if id, ok := literalID(v); ok {
				if distinct[k] == nil {
					distinct[k] = map[string]bool{}
				}
				distinct[k][id] = true
			}
		}
	}
	for _, ex := range shown {
		for _, k := range sortedKeys(ex.Inputs) {
			id, ok := literalID(ex.Inputs[k])
			if !ok || len(distinct[k]) < 2 {
				continue
			}
			if _, seen := recorded[id]; !seen {
				recorded[id] = origin{k, ex.Where}
			}
		}
	}
	keys := map[*syntax.Literal]bool{}
	var failures []StepFailure
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.DictEntry:
			if lit, ok := x.Key.(*syntax.Literal); ok {
				keys[lit] = true
			}
		case *syntax.Literal:
			var v any
			switch val := x.Value.(type) {
			case string:
				v = val
			case int64:
				v = val
			case float64:
				v = val
			case *big.Int:
				return true
			}
			id, ok := literalID(v)
			if !ok {
				return true
			}
			o, hit := recorded[id]
			if !hit {
				return true
			}
			what := "literal"
			if keys[x] {
				what = "dict key"
			}
			line, _ := x.Span()
			failures = append(failures, StepFailure{
				Set: "code", Code: CodeRecordedLiteral, Example: o.where,
				Reason: fmt.Sprintf("line %d: the %s %s is the recorded input %s of this run; the function must compute its output, not look it up", line.Line, what, x.Raw, o.key),
			})
		}
		return true
	})
	return failures
}

// literalID is a string or number input value as a comparable key, or
// false for values a function cannot recite as one literal (lists,
// dicts, booleans) and for "", 0 and 1.
func literalID(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return "s:" + s, s != ""
	}
	if f, ok := asFloat(v); ok {
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64), f != 0 && f != 1
	}
	return "", false
}

// StepInvariant is a metamorphic property stated for a step: changing
// its input Key in a way of kind Kind leaves the output determined, so
// the function is also run on inputs the traces did not contain.
type StepInvariant struct {
	Kind, Key string
}

// The kinds of StepInvariant.
const (
	// InvariantCase: the output does not change when the string input
	// is upper- or lower-cased.
	InvariantCase = "case"
	// InvariantWhitespace: the output does not change when the string
	// input's words are separated, led and followed by more spaces.
	InvariantWhitespace = "whitespace"
	// InvariantID: the string input is an opaque identifier; a new one
	// of the same shape (letters for letters, digits for digits) gives
	// the same output, with the identifier replaced where the output
	// repeats it.
	InvariantID = "id"
)

// StepInvariantKinds are the kinds ParseStepInvariant accepts.
var StepInvariantKinds = []string{InvariantCase, InvariantWhitespace, InvariantID}

// ParseStepInvariant reads KIND:KEY, as in case:title.
func ParseStepInvariant(s string) (StepInvariant, error) {
	kind, key, ok := strings.Cut(s, ":")
	if !ok || key == "" {
		return StepInvariant{}, fmt.Errorf("%q: want KIND:INPUT, as in case:title", s)
	}
	for _, k := range StepInvariantKinds {
		if k == kind {
			return StepInvariant{Kind: kind, Key: key}, nil
		}
	}
	return StepInvariant{}, fmt.Errorf("%q: unknown kind %q; want one of %s", s, kind, strings.Join(StepInvariantKinds, ", "))
}

// Name is the property's name in the evidence.
func (inv StepInvariant) Name() string {
	switch inv.Kind {
	case InvariantCase:
		return "case_invariant_" + inv.Key
	case InvariantWhitespace:
		return "whitespace_invariant_" + inv.Key
	}
	return "opaque_id_" + inv.Key
}

// Check says whether every recorded run has the input as a string: the
// perturbations change strings, and a property of an input the step
// does not have decides nothing.
func (inv StepInvariant) Check(examples []StepExample) error {
	for _, ex := range examples {
		if _, ok := ex.Inputs[inv.Key].(string); !ok {
			return fmt.Errorf("%s:%s: the recorded run %s has no string input %q", inv.Kind, inv.Key, ex.Where, inv.Key)
		}
	}
	return nil
}

// perturb returns the inputs the invariant derives from one recorded
// run and the output each must give. taken holds every recorded value
// of the key, which a new identifier must not be.
func (inv StepInvariant) perturb(ex StepExample, taken map[string]bool) (inputs []map[string]any, wants []any) {
	v, _ := ex.Inputs[inv.Key].(string)
	with := func(nv string, want any) {
		if nv == v {
			return
		}
		in := make(map[string]any, len(ex.Inputs))
		for k, x := range ex.Inputs {
			in[k] = x
		}
		in[inv.Key] = nv
		inputs, wants = append(inputs, in), append(wants, want)
	}
	switch inv.Kind {
	case InvariantCase:
		with(strings.ToUpper(v), ex.Output)
		with(strings.ToLower(v), ex.Output)
	case InvariantWhitespace:
		if f := strings.Fields(v); len(f) > 0 {
			with(" "+strings.Join(f, "  ")+" ", ex.Output)
		}
	case InvariantID:
		if id, ok := newID(v, taken); ok {
			with(id, replaceString(ex.Output, v, id))
		}
	}
	return inputs, wants
}

// newID is an identifier of id's shape that is not taken: each letter
// and digit shifted by the same step (T-1 becomes U-2), the rest kept.
func newID(id string, taken map[string]bool) (string, bool) {
	for step := 1; step < 10; step++ {
		out := []rune(id)
		changed := false
		for i, r := range out {
			switch {
			case r >= '0' && r <= '9':
				out[i] = '0' + (r-'0'+rune(step))%10
			case r >= 'a' && r <= 'z':
				out[i] = 'a' + (r-'a'+rune(step))%26
			case r >= 'A' && r <= 'Z':
				out[i] = 'A' + (r-'A'+rune(step))%26
			default:
				continue
			}
			changed = true
		}
		if s := string(out); changed && !taken[s] {
			return s, true
		}
	}
	return "", false
}

// replaceString replaces every string of v equal to old by new: an
// output that repeats its identifier repeats the new one.
func replaceString(v any, old, new string) any {
	switch x := v.(type) {
	case string:
		if x == old {
			return new
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = replaceString(e, old, new)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = replaceString(e, old, new)
		}
		return out
	}
	return v
}
