package candidate

import (
	"maps"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ActionArgs returns the values an action was called with, keyed as a
// step's arguments (Argument.Key): its parameters and, for a model call,
// the members of its inputs when they are an object. The trace format
// gives a model call its data in inputs (the title an earlier step
// returned, the text to classify); reading only parameters would mine a
// model step that is sent nothing. A parameter and an input of the same
// key are the same argument, and the parameter wins. The result is nil
// when the action has neither; callers read it and never write it.
//
// Every stage that pairs a step's argument with a trace's value reads it
// here (mining, derived parameters, shadow replay, synthesis examples),
// so a key means the same value in all of them.
func ActionArgs(a *trace.Action) map[string]any {
	in, ok := a.Inputs.(map[string]any)
	if a.Kind != trace.KindModelCall || !ok || len(in) == 0 {
		return a.Parameters
	}
	if len(a.Parameters) == 0 {
		return in
	}
	out := maps.Clone(in)
	maps.Copy(out, a.Parameters)
	return out
}

// ArgKeys returns the argument keys a step has when its examples are
// actions: every parameter key (the same in every example, since they are
// part of the signature) and every input key that all of them passed, in
// sorted order. An input only some examples passed is no argument of the
// procedure; DroppedInputs names them for the reviewer.
func ArgKeys(actions []*trace.Action) []string {
	if len(actions) == 0 {
		return nil
	}
	count := map[string]int{}
	for _, a := range actions {
		for k := range ActionArgs(a) {
			count[k]++
		}
	}
	var out []string
	for k, n := range count {
		if n == len(actions) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// DroppedInputs returns, in sorted order, the input keys some but not all
// of the actions passed (see ArgKeys).
func DroppedInputs(actions []*trace.Action) []string {
	count := map[string]int{}
	for _, a := range actions {
		for k := range ActionArgs(a) {
			count[k]++
		}
	}
	var out []string
	for k, n := range count {
		if n < len(actions) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
