package codegen

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// checks writes a step's preconditions on the state of the world
// (candidate.Step.Checks: a branch that must not exist yet, a file that
// must, a program on PATH, the shape of an earlier result) as ctx.check
// calls before the step, so a reviewer reads what the run verifies before
// it acts, and the runtime evaluates each one and follows the run's
// fallback policy when one fails. The capability and inputs_bound checks
// stay in the report and are not written: the capability policy refuses
// every call it does not grant before the call runs, and a workflow's
// parameters are bound by its signature, so a line for each would double
// the workflow's length and tell a reviewer nothing the header does not. A check's values are the
// expressions the step itself passes: a branch check tests the branch the
// step will create, not a copy of it.
func (g *generator) checks(b *strings.Builder, i int) {
	st := g.c.Steps[i]
	// The step's own rendering reports any problem with an argument's
	// value; rendering it here too would report it twice.
	nerrs := len(g.errs)
	defer func() { g.errs = g.errs[:nerrs] }()
	arg := func(key string) *node {
		for j, a := range st.Arguments {
			if a.Key == key {
				return g.value(i, j, a)
			}
		}
		return nil
	}
	for k, ch := range st.Checks {
		path := fmt.Sprintf("$.steps[%d].checks[%d]", i, k)
		items := []*node{atom(quote(ch.Kind))}
		if ch.Kind == candidate.CheckCapability {
			continue
		}
		switch ch.Kind {
		case candidate.CheckCapability:
			items = append(items, atom(quote(ch.Capability)).withPrefix("capability = "))
			if ch.Tool != "" {
				items = append(items, atom(quote(ch.Tool)).withPrefix("tool = "))
			}
		case candidate.CheckProgramOnPath:
			items = append(items, atom(quote(ch.Program)).withPrefix("program = "))
			if ch.Tool != "" {
				items = append(items, atom(quote(ch.Tool)).withPrefix("tool = "))
			}
		case candidate.CheckFileExists, candidate.CheckBranchAbsent:
			v := arg(ch.From)
			if v == nil {
				g.errorf(path+".from", "the step has no argument %q", ch.From)
				nerrs = len(g.errs)
				continue
			}
			kw := "path = "
			if ch.Kind == candidate.CheckBranchAbsent {
				kw = "branch = "
			}
			items = append(items, v.withPrefix(kw))
		case candidate.CheckInputsBound:
			for _, key := range ch.Inputs {
				if arg(key) == nil {
					g.errorf(path+".inputs", "the step has no argument %q", key)
					nerrs = len(g.errs)
				}
			}
			// Checked for the candidate's sake, not written.
			continue
		case candidate.CheckOutputShape:
			v, ok := g.result[ch.Step]
			if !ok {
				continue // no later step reads it, so nothing depends on its shape
			}
			keys := make([]string, 0, len(ch.Shape))
			for k := range ch.Shape {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			shape := make([]*node, len(keys))
			for j, k := range keys {
				shape[j] = atom(quote(ch.Shape[k])).withPrefix(quote(k) + ": ")
			}
			items = append(items, atom(v).withPrefix("value = "), atom(strconv.Itoa(ch.Step)).withPrefix("step = "), group("{", shape, "}").withPrefix("shape = "))
		default:
			g.errorf(path+".kind", "unknown check kind %q (want one of %s)", ch.Kind, strings.Join(candidate.CheckKinds, ", "))
			nerrs = len(g.errs)
			continue
		}
		statement(b, 1, group("ctx.check(", items, ")"))
	}
}

// checkChecks reports every ctx.check call whose kind is not a string
// literal naming a kind the runtime knows: a reviewer reads in the
// source which precondition a line checks, and a misspelled kind fails
// here rather than in the middle of a run.
func checkChecks(f *syntax.File) error {
	var errs []error
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		dot, ok := call.Fn.(*syntax.DotExpr)
		if !ok || dot.Name.Name != "check" {
			return true
		}
		if id, ok := dot.X.(*syntax.Ident); !ok || id.Name != "ctx" {
			return true
		}
		pos, _ := call.Span()
		if len(call.Args) > 0 {
			pos, _ = call.Args[0].Span() // the kind is what is wrong
		}
		if len(call.Args) == 0 || !isString(call.Args[0]) {
			errs = append(errs, fmt.Errorf("%s: ctx.check: the kind must be a string literal, one of %s", pos, strings.Join(candidate.CheckKinds, ", ")))
			return true
		}
		kind := call.Args[0].(*syntax.Literal).Value.(string)
		if !slices.Contains(candidate.CheckKinds, kind) {
			errs = append(errs, fmt.Errorf("%s: ctx.check: unknown kind %q, want one of %s", pos, kind, strings.Join(candidate.CheckKinds, ", ")))
		}
		return true
	})
	return errors.Join(errs...)
}

// jsonSchemaTypes maps the JSON types of candidate.JSONType to JSON Schema
// type names; "unknown" has none.
var jsonSchemaTypes = map[string]string{
	"string": "string", "number": "number", "bool": "boolean",
	"object": "object", "array": "array", "null": "null",
}

// outputSchema returns the JSON Schema of the result of step index that
// later steps rely on, as a Starlark dict, or nil when none does: an
// object with the members the output_shape checks of later steps test,
// each of the type every example's output had. A model step is sent it,
// so the model is told what to return (and its provider's structured
// output mode used), rather than finding out at the check after it.
func (g *generator) outputSchema(index int) *node {
	shape := map[string]string{}
	for _, st := range g.c.Steps {
		for _, ch := range st.Checks {
			if ch.Kind != candidate.CheckOutputShape || ch.Step != index {
				continue
			}
			for k, t := range ch.Shape {
				if _, ok := jsonSchemaTypes[t]; ok {
					shape[k] = t
				}
			}
		}
	}
	if len(shape) == 0 {
		return nil
	}
	keys := make([]string, 0, len(shape))
	for k := range shape {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	props := make([]*node, len(keys))
	required := make([]*node, len(keys))
	for i, k := range keys {
		props[i] = group("{", []*node{atom(quote(jsonSchemaTypes[shape[k]])).withPrefix(quote("type") + ": ")}, "}").withPrefix(quote(k) + ": ")
		required[i] = atom(quote(k))
	}
	return group("{", []*node{
		atom(quote("object")).withPrefix(quote("type") + ": "),
		group("{", props, "}").withPrefix(quote("properties") + ": "),
		group("[", required, "]").withPrefix(quote("required") + ": "),
	}, "}")
}
