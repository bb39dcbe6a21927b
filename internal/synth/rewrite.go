package synth

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"go.starlark.net/syntax"
)

// ReplaceModelCall rewrites a workflow so that the ctx.model call of step
// name calls fn instead, a verified function (source fnSrc) nested at the
// top of the workflow function: a workflow file defines exactly one
// top-level function, and a nested def keeps the step's code next to the
// call a reviewer reads. The call's inputs expression is passed to fn
// unchanged, and the step's review_required comment becomes note. The
// result is the new workflow source; the caller checks it with the
// workflow checker before writing it anywhere.
func ReplaceModelCall(src []byte, name, fn, fnSrc, note string) ([]byte, error) {
	f, err := (&syntax.FileOptions{}).Parse("workflow.star", src, syntax.RetainComments)
	if err != nil {
		return nil, fmt.Errorf("parsing the workflow: %w", err)
	}
	var defs []*syntax.DefStmt
	for _, s := range f.Stmts {
		if d, ok := s.(*syntax.DefStmt); ok {
			defs = append(defs, d)
		}
	}
	if len(defs) != 1 {
		return nil, fmt.Errorf("the workflow has %d top-level functions, want one", len(defs))
	}
	wf := defs[0]
	var calls []*syntax.CallExpr
	syntax.Walk(wf, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || !isCtxModel(call) || len(call.Args) == 0 {
			return true
		}
		if lit, ok := call.Args[0].(*syntax.Literal); ok && lit.Value == name {
			calls = append(calls, call)
		}
		return true
	})
	if len(calls) != 1 {
		return nil, fmt.Errorf("the workflow has %d ctx.model calls named %q, want one", len(calls), name)
	}
	for _, d := range defs {
		if fn == d.Name.Name || fn == "ctx" {
			return nil, fmt.Errorf("the function's name %s is taken in the workflow", fn)
		}
	}
	if strings.Contains(fnSrc, "load(") {
		if g, err := fileOptions().Parse("step.star", fnSrc, 0); err == nil {
			for _, s := range g.Stmts {
				if _, ok := s.(*syntax.LoadStmt); ok {
					return nil, fmt.Errorf("the function loads modules, which a workflow cannot")
				}
			}
		}
	}
	call := calls[0]
	inputs := "{}"
	for _, a := range call.Args[1:] {
		if bin, ok := a.(*syntax.BinaryExpr); ok && bin.Op == syntax.EQ {
			if id, ok := bin.X.(*syntax.Ident); ok && id.Name == "inputs" {
				inputs = text(src, bin.Y)
			}
		}
	}
	lines := lineStarts(src)
	cs, ce := call.Span()
	out := string(src[:offset(src, lines, cs)]) + fn + "(" + inputs + ")" + string(src[offset(src, lines, ce):])

	// The nested function goes before the first statement of the body
	// after the docstring, at the body's indentation. Everything before
	// that point is unchanged by the call's replacement, which comes
	// later in the file.
	// The comments directly above that statement belong to it, so the
	// function goes above them.
	first := wf.Body[0]
	top := wf.Def.Line // the block may not rise above this line
	if e, ok := first.(*syntax.ExprStmt); ok && len(wf.Body) > 1 {
		if lit, ok := e.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
			_, end := e.Span()
			first, top = wf.Body[1], end.Line
		}
	}
	fs, _ := first.Span()
	indent := strings.Repeat(" ", int(fs.Col)-1)
	line := fs.Line // 1-based line the block is inserted before
	for line-1 > top && strings.HasPrefix(strings.TrimSpace(lineText(src, lines, line-1)), "#") {
		line--
	}
	at := int(lines[line-1])
	var block strings.Builder
	for _, l := range strings.Split(strings.TrimRight(note, "\n"), "\n") {
		block.WriteString(indent + "# " + l + "\n")
	}
	for _, l := range strings.Split(strings.TrimRight(fnSrc, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			block.WriteString("\n")
			continue
		}
		block.WriteString(indent + l + "\n")
	}
	out = out[:at] + block.String() + out[at:]

	// The review_required comment above the call no longer applies.
	callLine := int(cs.Line) + strings.Count(block.String(), "\n")
	ls := strings.Split(out, "\n")
	for i := callLine - 2; i >= 0 && strings.HasPrefix(strings.TrimSpace(ls[i]), "#"); i-- {
		if strings.HasPrefix(strings.TrimSpace(ls[i]), "# review_required:") {
			ls = append(ls[:i], ls[i+1:]...)
			break
		}
	}
	return []byte(strings.Join(ls, "\n")), nil
}

func isCtxModel(call *syntax.CallExpr) bool {
	dot, ok := call.Fn.(*syntax.DotExpr)
	if !ok || dot.Name.Name != "model" {
		return false
	}
	id, ok := dot.X.(*syntax.Ident)
	return ok && id.Name == "ctx"
}

func lineStarts(src []byte) []int32 {
	starts := []int32{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, int32(i+1))
		}
	}
	return starts
}

// offset converts a position (1-based line, 1-based rune column) into a
// byte offset of src.
func offset(src []byte, lines []int32, p syntax.Position) int {
	i := int(lines[p.Line-1])
	for col := int32(1); col < p.Col && i < len(src); col++ {
		_, n := utf8.DecodeRune(src[i:])
		i += n
	}
	return i
}

func text(src []byte, n syntax.Node) string {
	lines := lineStarts(src)
	s, e := n.Span()
	return string(src[offset(src, lines, s):offset(src, lines, e)])
}

// lineText is line n (1-based) of src without its newline.
func lineText(src []byte, lines []int32, n int32) string {
	start := lines[n-1]
	end := int32(len(src))
	if int(n) < len(lines) {
		end = lines[n] - 1
	}
	return string(src[start:end])
}
