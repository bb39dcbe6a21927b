package codegen

import (
	"fmt"
	"regexp"
	"strconv"

	"go.starlark.net/syntax"
)

// countsLine is the header line whose counts RefreshHeader recomputes, as
// header writes it.
var countsLine = regexp.MustCompile(`(?m)^# confidence: (\S+) · deterministic steps: (\d+) of (\d+) · remaining model calls per run: (\d+)$`)

// RefreshHeader recounts the header of a generated workflow whose source
// was changed after generation, when ctx.model calls were replaced by
// code: "remaining model calls per run" becomes the number of ctx.model
// calls left in the source, and every call that went away makes one more
// step deterministic. Nothing else changes. It reports whether src had
// the header line at all (a hand-written workflow need not), and fails
// when src does not parse.
func RefreshHeader(src []byte) ([]byte, bool, error) {
	models, err := ModelCalls(src)
	if err != nil {
		return nil, false, err
	}
	loc := countsLine.FindSubmatchIndex(src)
	if loc == nil {
		return src, false, nil
	}
	num := func(i int) int {
		n, _ := strconv.Atoi(string(src[loc[2*i]:loc[2*i+1]]))
		return n
	}
	deterministic, steps, remaining := num(2), num(3), num(4)
	if models < remaining {
		deterministic = min(steps, deterministic+remaining-models)
	}
	line := fmt.Sprintf("# confidence: %s · deterministic steps: %d of %d · remaining model calls per run: %d",
		src[loc[2]:loc[3]], deterministic, steps, models)
	out := append([]byte{}, src[:loc[0]]...)
	out = append(out, line...)
	return append(out, src[loc[1]:]...), true, nil
}

// ModelCalls counts the ctx.model calls in a workflow's source: the model
// calls a run makes, each once.
func ModelCalls(src []byte) (int, error) {
	f, err := fileOptions().Parse("workflow.star", src, 0)
	if err != nil {
		return 0, err
	}
	n := 0
	syntax.Walk(f, func(node syntax.Node) bool {
		call, ok := node.(*syntax.CallExpr)
		if !ok {
			return true
		}
		if dot, ok := call.Fn.(*syntax.DotExpr); ok && dot.Name.Name == "model" {
			if id, ok := dot.X.(*syntax.Ident); ok && id.Name == "ctx" {
				n++
			}
		}
		return true
	})
	return n, nil
}
