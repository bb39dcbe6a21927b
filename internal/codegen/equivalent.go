package codegen

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Equivalence of a refined workflow with its draft.
//
// A model may be asked to make a generated workflow readable: clearer
// names, comments that say why. It is not trusted with the workflow
// itself, so its answer is accepted only if it is provably the same
// program: it must pass Check, and its function body must equal the
// draft's token for token once comments and the docstring are left out,
// every parameter is numbered by its place in the signature and every
// local by its first use (alpha-equivalence). That one comparison implies
// every other promise: the same ctx.tool, ctx.model and ctx.approve calls
// in the same order, with the same tool names, argument names and
// literals, the same data flow and the same return. Parameters must keep
// their places and their defaults, and none may take the name of another
// (callers pass parameters by name, so that would be a reordering in
// disguise).

// NotEquivalentError is the first difference Equivalent finds between a
// draft and its refinement beyond names and comments.
type NotEquivalentError struct {
	// Step is the 1-based step (ctx.tool, ctx.model or ctx.approve call)
	// the difference is in, 0 when it is outside every step.
	Step int
	// Line is the line of the refinement where the difference is, 0 when
	// the refinement has no such place (a step it lost, the signature).
	Line int
	// Message says what differs.
	Message string
	// Err is the refinement's parse or check error, when it has one.
	Err error
}

func (e *NotEquivalentError) Error() string {
	switch {
	case e.Err == nil:
		return e.Message
	case e.Message == "":
		return e.Err.Error()
	}
	return e.Message + ": " + e.Err.Error()
}

func (e *NotEquivalentError) Unwrap() error { return e.Err }

// notEquivalent returns a NotEquivalentError with a formatted message.
func notEquivalent(step, line int, format string, args ...any) *NotEquivalentError {
	return &NotEquivalentError{Step: step, Line: line, Message: fmt.Sprintf(format, args...)}
}

// Equivalent checks that refined is draft, the workflow whose function is
// fn, with parameters and locals renamed and comments changed, and
// nothing else. It returns the renamed parameters, draft name to refined
// name, or a *NotEquivalentError naming the first difference (an error
// reading the draft is returned as is).
func Equivalent(draft, refined []byte, fn string) (map[string]string, error) {
	if err := Check("refined workflow", refined, fn); err != nil {
		return nil, &NotEquivalentError{Message: "the workflow check fails", Err: err}
	}
	d, dparams, err := parseWorkflow(draft)
	if err != nil {
		return nil, fmt.Errorf("reading the draft: %w", err)
	}
	r, rparams, err := parseWorkflow(refined)
	if err != nil {
		return nil, &NotEquivalentError{Err: err}
	}

	// The steps first: their differences are the ones a reviewer cares
	// about, so they are named as steps.
	for i := range max(len(d.steps), len(r.steps)) {
		switch {
		case i >= len(r.steps):
			return nil, notEquivalent(i+1, 0, "step %d %s is gone: the draft has %d steps, the refinement %d", i+1, d.steps[i].call, len(d.steps), len(r.steps))
		case i >= len(d.steps):
			return nil, notEquivalent(i+1, r.steps[i].line, "the refinement adds step %d %s: the draft has %d steps, the refinement %d", i+1, r.steps[i].call, len(d.steps), len(r.steps))
		case d.steps[i].call != r.steps[i].call:
			return nil, notEquivalent(i+1, r.steps[i].line, "step %d: the draft calls %s, the refinement %s", i+1, d.steps[i].call, r.steps[i].call)
		}
	}
	// The signature: the same parameters in the same places with the
	// same defaults, renamed or not. A parameter may not take the name of
	// another one of the draft: that would be a reordering in disguise,
	// and callers pass parameters by name.
	if len(dparams) != len(rparams) {
		return nil, notEquivalent(0, 0, "the parameters changed from (%s) to (%s)", wfParamList(dparams), wfParamList(rparams))
	}
	renames := map[string]string{}
	for i, dp := range dparams {
		rp := rparams[i]
		if dp.def != rp.def {
			return nil, notEquivalent(0, 0, "parameter %d changed from %s to %s: a renamed parameter keeps its default", i+1, dp.text, rp.text)
		}
		if dp.name == rp.name {
			continue
		}
		if j := slices.IndexFunc(dparams, func(p wfParam) bool { return p.name == rp.name }); j >= 0 {
			return nil, notEquivalent(0, 0, "parameter %d %s is renamed %s, the name of the draft's parameter %d: parameters keep their places", i+1, dp.name, rp.name, j+1)
		}
		renames[dp.name] = rp.name
	}

	// The bodies, parameters numbered by place and locals by first use.
	if n, ok := firstTokenDiff(d.tokens, r.tokens); !ok {
		ds, rs := d.at(n), r.at(n)
		if ds.step > 0 && ds.step == rs.step {
			return nil, notEquivalent(ds.step, rs.line, "step %d %s: its arguments changed from %s to %s", ds.step, d.steps[ds.step-1].call, ds.text, rs.text)
		}
		return nil, notEquivalent(rs.step, rs.line, "the code changed from %s (draft line %d) to %s (refinement line %d)", ds.text, ds.line, rs.text, rs.line)
	}
	return renames, nil
}

// WorkflowParams returns the parameter names of the workflow function in
// src, a workflow that passed Check, ctx first.
func WorkflowParams(src []byte) ([]string, error) {
	_, params, err := parseWorkflow(src)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.name
	}
	return names, nil
}

func firstTokenDiff(a, b []wfToken) (int, bool) {
	for i := range min(len(a), len(b)) {
		if a[i].s != b[i].s {
			return i, false
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b)), false
	}
	return 0, true
}

// wfShape is a workflow function reduced to what a refinement must keep.
type wfShape struct {
	src    []byte
	tokens []wfToken
	steps  []wfStep
	stmts  []wfSpan // the body's statements, docstring excluded
}

// wfToken is one element of a function body's normal form.
type wfToken struct {
	s string
	// stmt is the index of the statement in shape.stmts, step the 1-based
	// step whose call holds the token (0 for none).
	stmt, step int
}

// wfSpan is the extent of a node, for messages.
type wfSpan struct {
	text string
	line int
}

// wfStep is one ctx.tool, ctx.model or ctx.approve call.
type wfStep struct {
	call string // ctx.tool("name")
	wfSpan
}

// wfLocation describes where token n of s is, for messages.
type wfLocation struct {
	step int
	wfSpan
}

func (s *wfShape) at(n int) wfLocation {
	if n >= len(s.tokens) {
		return wfLocation{wfSpan: wfSpan{text: "the end of the function", line: len(strings.Split(string(s.src), "\n"))}}
	}
	t := s.tokens[n]
	if t.step > 0 {
		return wfLocation{step: t.step, wfSpan: s.steps[t.step-1].wfSpan}
	}
	return wfLocation{wfSpan: s.stmts[t.stmt]}
}

// wfParam is one parameter of a workflow function.
type wfParam struct {
	name string
	def  string // its default in normal form, or * or ** for *args, **kwargs
	text string
}

func wfParamList(ps []wfParam) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.text
	}
	return strings.Join(names, ", ")
}

// parseWorkflow parses and resolves a workflow file that passed
// Check and returns the shape of its function and its parameters.
func parseWorkflow(src []byte) (*wfShape, []wfParam, error) {
	f, err := (&syntax.FileOptions{}).Parse("workflow.star", src, 0)
	if err != nil {
		return nil, nil, err
	}
	predeclared := Predeclared()
	if err := resolve.File(f, func(n string) bool { return slices.Contains(predeclared, n) }, starlark.Universe.Has); err != nil {
		return nil, nil, err
	}
	var def *syntax.DefStmt
	for _, st := range f.Stmts {
		if d, ok := st.(*syntax.DefStmt); ok {
			def = d
		}
	}
	if def == nil {
		return nil, nil, errors.New("no workflow function")
	}
	n := &wfNormalizer{src: src, numbers: map[*resolve.Binding]int{}, params: map[*resolve.Binding]int{}}
	var params []wfParam
	for _, p := range def.Params {
		var id *syntax.Ident
		var dflt syntax.Expr
		switch p := p.(type) {
		case *syntax.Ident:
			id = p
		case *syntax.BinaryExpr:
			id, _ = p.X.(*syntax.Ident)
			dflt = p.Y
		case *syntax.UnaryExpr:
			id, _ = p.X.(*syntax.Ident)
		}
		if id == nil {
			return nil, nil, fmt.Errorf("%s: unsupported parameter", syntax.Start(p))
		}
		b, _ := id.Binding.(*resolve.Binding)
		n.params[b] = len(n.params)
		pr := wfParam{name: id.Name, text: n.text(p)}
		if u, ok := p.(*syntax.UnaryExpr); ok {
			pr.def = u.Op.String()
		}
		if dflt != nil {
			pr.def = "=" + wfTokenString(n.normalDefault(dflt))
		}
		params = append(params, pr)
	}
	body := def.Body
	if len(body) > 0 {
		if es, ok := body[0].(*syntax.ExprStmt); ok {
			if lit, ok := es.X.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				body = body[1:] // the docstring is documentation
			}
		}
	}
	for i, st := range body {
		n.stmt = i
		n.shape.stmts = append(n.shape.stmts, wfSpan{text: n.text(st), line: int(syntax.Start(st).Line)})
		syntax.Walk(st, n.visit)
	}
	n.shape.src = src
	return &n.shape, params, nil
}

func wfTokenString(ts []wfToken) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.s
	}
	return strings.Join(parts, " ")
}

// wfNormalizer turns a function body into tokens: one per node on entry,
// with what the node holds besides its children, and ")" on exit, so that
// equal token lists are equal trees. Parentheses are left out: they
// change nothing. A parameter is written as its place in the signature and
// a local as its number in order of first use, so renaming does not change
// the tokens; other names (the
// universe, json, struct, keyword and attribute names) are written as
// they are.
type wfNormalizer struct {
	src     []byte
	numbers map[*resolve.Binding]int
	params  map[*resolve.Binding]int // a parameter's place
	shape   wfShape
	stmt    int
	// step is the step whose call is being walked (0 outside one), and
	// stepDepth the depth of the stack outside that call.
	step, stepDepth int
	stack           []bool // per open node: whether it wrote a token
}

func (n *wfNormalizer) emit(s string) {
	n.shape.tokens = append(n.shape.tokens, wfToken{s: s, stmt: n.stmt, step: n.step})
}

func (n *wfNormalizer) visit(node syntax.Node) bool {
	if node == nil {
		wrote := n.stack[len(n.stack)-1]
		n.stack = n.stack[:len(n.stack)-1]
		if wrote {
			n.emit(")")
		}
		if n.step > 0 && len(n.stack) == n.stepDepth {
			n.step = 0
		}
		return true
	}
	if _, ok := node.(*syntax.ParenExpr); ok {
		n.stack = append(n.stack, false)
		return true
	}
	if call, ok := node.(*syntax.CallExpr); ok && n.step == 0 {
		if name, ok := n.stepName(call); ok {
			n.shape.steps = append(n.shape.steps, wfStep{call: name, wfSpan: wfSpan{text: n.text(call), line: int(syntax.Start(call).Line)}})
			n.step, n.stepDepth = len(n.shape.steps), len(n.stack)
		}
	}
	n.stack = append(n.stack, true)
	n.emit(n.label(node))
	return true
}

// label is a node's token.
func (n *wfNormalizer) label(node syntax.Node) string {
	switch x := node.(type) {
	case *syntax.Ident:
		b, _ := x.Binding.(*resolve.Binding)
		if b == nil || b.Scope == resolve.Predeclared || b.Scope == resolve.Universal || b.Scope == resolve.Global {
			return "name " + x.Name
		}
		if i, ok := n.params[b]; ok {
			return "param " + strconv.Itoa(i)
		}
		k, ok := n.numbers[b]
		if !ok {
			k = len(n.numbers)
			n.numbers[b] = k
		}
		return "local " + strconv.Itoa(k)
	case *syntax.Literal:
		if s, ok := x.Value.(string); ok {
			return x.Token.String() + " " + strconv.Quote(s)
		}
		return fmt.Sprintf("%s %v", x.Token, x.Value)
	case *syntax.BinaryExpr:
		return "binary " + x.Op.String()
	case *syntax.UnaryExpr:
		return "unary " + x.Op.String()
	case *syntax.AssignStmt:
		return "assign " + x.Op.String()
	case *syntax.BranchStmt:
		return "branch " + x.Token.String()
	case *syntax.IfStmt:
		return fmt.Sprintf("if %d %d", len(x.True), len(x.False))
	case *syntax.ForStmt:
		return fmt.Sprintf("for %d", len(x.Body))
	case *syntax.WhileStmt:
		return fmt.Sprintf("while %d", len(x.Body))
	case *syntax.DefStmt:
		return fmt.Sprintf("def %d %d", len(x.Params), len(x.Body))
	case *syntax.LambdaExpr:
		return fmt.Sprintf("lambda %d", len(x.Params))
	case *syntax.CallExpr:
		return fmt.Sprintf("call %d", len(x.Args))
	case *syntax.ListExpr:
		return fmt.Sprintf("list %d", len(x.List))
	case *syntax.TupleExpr:
		return fmt.Sprintf("tuple %d", len(x.List))
	case *syntax.DictExpr:
		return fmt.Sprintf("dict %d", len(x.List))
	case *syntax.Comprehension:
		return fmt.Sprintf("comprehension %t %d", x.Curly, len(x.Clauses))
	case *syntax.SliceExpr:
		return fmt.Sprintf("slice %t %t %t", x.Lo != nil, x.Hi != nil, x.Step != nil)
	case *syntax.ReturnStmt:
		return fmt.Sprintf("return %t", x.Result != nil)
	}
	return fmt.Sprintf("%T", node)
}

// stepName returns ctx.tool("name") for a call of a ctx step method.
func (n *wfNormalizer) stepName(call *syntax.CallExpr) (string, bool) {
	dot, ok := call.Fn.(*syntax.DotExpr)
	if !ok {
		return "", false
	}
	id, ok := dot.X.(*syntax.Ident)
	if !ok || id.Name != "ctx" {
		return "", false
	}
	switch dot.Name.Name {
	case "tool", "model", "approve":
	default:
		return "", false
	}
	name := "…"
	if len(call.Args) > 0 {
		if lit, ok := call.Args[0].(*syntax.Literal); ok {
			if s, ok := lit.Value.(string); ok {
				name = strconv.Quote(s)
			}
		}
	}
	return "ctx." + dot.Name.Name + "(" + name + ")", true
}

// normalDefault returns the tokens of a parameter's default value, which
// is outside the body.
func (n *wfNormalizer) normalDefault(x syntax.Expr) []wfToken {
	saved := n.shape.tokens
	n.shape.tokens = nil
	syntax.Walk(x, n.visit)
	ts := n.shape.tokens
	n.shape.tokens = saved
	return ts
}

// text is the source of node on one line, shortened for a message.
func (n *wfNormalizer) text(node syntax.Node) string {
	start, end := node.Span()
	lines := strings.Split(string(n.src), "\n")
	if start.Line < 1 || int(end.Line) > len(lines) {
		return "?"
	}
	var b strings.Builder
	for l := start.Line; l <= end.Line; l++ {
		line := []rune(lines[l-1])
		from, to := 0, len(line)
		if l == start.Line {
			from = min(int(start.Col)-1, len(line))
		}
		if l == end.Line {
			to = min(int(end.Col)-1, len(line))
		}
		if from < to {
			b.WriteString(strings.TrimSpace(string(line[from:to])))
			b.WriteByte(' ')
		}
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	s = strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(s, "( ", "("), " )", ")"), ", )", ")")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return "`" + s + "`"
}
