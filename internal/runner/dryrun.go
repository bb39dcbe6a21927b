package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Sources of a dry-run answer, DryRunCall.Source.
const (
	// AnswerExpected: the candidate's expected output, the value every
	// trace the step was mined from agreed on.
	AnswerExpected = "expected_output"
	// AnswerPlaceholder: a placeholder of the recorded shape (the
	// bundle's fixtures, else the members the workflow reads from the
	// result), each leaf a string that says it is one.
	AnswerPlaceholder = "placeholder"
	// AnswerNothing: nothing was recorded and the workflow reads nothing
	// from the result, so the answer is None.
	AnswerNothing = "nothing_recorded"
	// AnswerRecorded: a model step's output in the bundle's fixtures (the
	// run whose inputs match, else the first), which a dry run replays
	// so the workflow's later steps see an answer of the model's form.
	AnswerRecorded = "recorded"
)

// DryRunCall is one call of a dry run, a tool call or a model step: what
// the step would have received and the answer the run went on with.
type DryRunCall struct {
	Step      int            `json:"step"`
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
	Answer    any            `json:"answer"`
	Source    string         `json:"source"` // AnswerExpected, AnswerPlaceholder or AnswerNothing
}

// dryRunAnswer is the answer a dry run gives a tool call, in place of
// executing it. A value a dry run invents must not pass for a real one,
// and a workflow with data flow must still get through every step, so:
//
//  1. the candidate step's expected output, when its traces agreed on one:
//     that is what the step returns whenever the procedure holds;
//  2. otherwise a placeholder of the output a bundle fixture recorded for
//     the call (see fixture): the same members and nesting, every leaf
//     replaced by "<dry-run: step N path>";
//  3. otherwise, for a bare workflow file, a placeholder object with the
//     members the workflow reads from this tool's result (result["key"]),
//     so step1["branch"] is "<dry-run: step 1 branch>";
//  4. otherwise None: nothing is known of the result and nothing reads
//     it (code that tells a dry run by a None result, as lowered task
//     plans do for verify, keeps working).
//
// Returning a recorded value itself (the answer of one past run) would
// let a reviewer mistake it for what this run would produce.
func (h *host) dryRunAnswer(step int, name string, kind trace.Kind, args map[string]any) any {
	var out any
	source := AnswerPlaceholder
	label := "step " + strconv.Itoa(step)
	switch s := h.candidateStep(step, name); {
	case s != nil && s.ExpectedOutput != nil:
		out, source = s.ExpectedOutput, AnswerExpected
	default:
		if rec := h.fixture(name, kind, args); rec != nil {
			out = placeholderOf(rec, label)
		} else if paths := h.w.ResultKeys[name]; len(paths) > 0 {
			out = placeholderFromPaths(paths, label)
		} else {
			source = AnswerNothing
		}
	}
	h.res.DryRunCalls = append(h.res.DryRunCalls, DryRunCall{Step: step, Tool: name, Arguments: args, Answer: out, Source: source})
	return out
}

func placeholder(label string) string { return "<dry-run: " + label + ">" }

// placeholderOf returns v with every scalar leaf replaced by a
// placeholder naming its path under label; null stays null.
func placeholderOf(v any, label string) any {
	switch v := v.(type) {
	case nil:
		return nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = placeholderOf(e, label+" "+k)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = placeholderOf(e, fmt.Sprintf("%s[%d]", label, i))
		}
		return out
	}
	return placeholder(label)
}

// placeholderFromPaths builds the object whose members are the key paths
// (each a list of keys, outermost first), leaves placeholders.
func placeholderFromPaths(paths [][]string, label string) map[string]any {
	root := map[string]any{}
	for _, p := range paths {
		m := root
		for i, k := range p {
			if i == len(p)-1 {
				if _, isObj := m[k].(map[string]any); !isObj {
					m[k] = placeholder(label + " " + strings.Join(p, " "))
				}
				break
			}
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
	}
	return root
}
