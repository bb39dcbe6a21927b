package runner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/syntax"

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

// resultKeys finds, for each tool a workflow calls with a literal name,
// the members it reads from the call's result: in
//
//	step1 = ctx.tool("git.create_branch", …)
//	… step1["branch"] …
//
// the tool git.create_branch has the key path ["branch"]; x["a"]["b"]
// gives ["a", "b"]. Generated workflows read results only this way, so it
// is the shape a dry run must answer with when nothing was recorded.
// Paths are sorted, per tool, for a deterministic answer.
func resultKeys(f *syntax.File) map[string][][]string {
	vars := map[string]string{} // variable → tool name
	syntax.Walk(f, func(n syntax.Node) bool {
		a, ok := n.(*syntax.AssignStmt)
		if !ok || a.Op != syntax.EQ {
			return true
		}
		id, ok := a.LHS.(*syntax.Ident)
		if !ok {
			return true
		}
		// ctx.try_tool returns {ok, output, error}, not the tool's
		// result, so only ctx.tool and ctx.exec assignments count.
		if method, name, ok := ctxCall(a.RHS); ok && (method == "tool" || method == "exec") {
			vars[id.Name] = name
		}
		return true
	})
	out := map[string][][]string{}
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		ix, ok := n.(*syntax.IndexExpr)
		if !ok {
			return true
		}
		// Only the outermost index of a chain: x["a"]["b"] once, not
		// again as x["a"].
		var keys []string
		var x syntax.Expr = ix
		for {
			e, ok := x.(*syntax.IndexExpr)
			if !ok {
				break
			}
			lit, ok := e.Y.(*syntax.Literal)
			if !ok || lit.Token != syntax.STRING {
				return true
			}
			keys = append([]string{lit.Value.(string)}, keys...)
			x = e.X
		}
		id, ok := x.(*syntax.Ident)
		if !ok {
			return true
		}
		tool, ok := vars[id.Name]
		if !ok {
			return true
		}
		k := tool + "\x00" + strings.Join(keys, "\x00")
		if !seen[k] {
			seen[k] = true
			out[tool] = append(out[tool], keys)
		}
		return false
	})
	for _, paths := range out {
		sort.Slice(paths, func(i, j int) bool { return strings.Join(paths[i], "\x00") < strings.Join(paths[j], "\x00") })
	}
	return out
}
