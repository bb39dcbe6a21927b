package codegen

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Options controls code generation. The zero value is the default.
type Options struct {
	// PackageName, when set, is recorded in the header as the package the
	// workflow is meant for (the --package-name flag).
	PackageName string
	// WorkflowName, when set, names the generated function in place of
	// the candidate's name. NoCandidate names its function after it, or
	// "no_safe_candidate" when it is empty. It passes through
	// candidate.Identifier either way.
	WorkflowName string
}

// maxKeywordArgs is the most keyword arguments a Starlark call may have (a
// limit of go.starlark.net's compiler, checked by its resolver). Further
// arguments go into the **{…} dictionary, which has no limit.
const maxKeywordArgs = 255

// FuncName returns the name of the function that Workflow(c, opts) defines,
// or, when c is nil, the one NoCandidate defines: the want argument of
// Check.
func FuncName(c *candidate.Candidate, opts Options) string {
	switch {
	case opts.WorkflowName != "":
		return candidate.Identifier(opts.WorkflowName)
	case c == nil:
		return "no_safe_candidate"
	case c.Name == "":
		return "workflow"
	}
	return candidate.Identifier(c.Name)
}

// Workflow renders the Starlark source of one candidate: a header of
// comments and one function, FuncName(c, opts), taking ctx and the
// candidate's parameters and calling ctx once per step (twice for a step
// behind a required approval). Rejected candidates render too, with their
// rejection reasons in the header, so a reviewer can read them.
//
// It fails, reporting every problem with its path in the candidate, when
// the candidate is inconsistent: step indexes that are not increasing, an
// argument naming an unknown parameter, a binding to a step that does not
// come earlier or with a malformed path, a constant that is not JSON or is
// nested too deeply, duplicate keys. Any source it returns passes Check.
func Workflow(c *candidate.Candidate, opts Options) ([]byte, error) {
	if c == nil {
		return nil, errors.New("no candidate")
	}
	g := &generator{c: c, fn: FuncName(c, opts)}
	g.plan()
	var b strings.Builder
	g.header(&b, opts)
	g.signature(&b)
	g.prologue(&b)
	for i := range c.Steps {
		g.step(&b, i)
	}
	statement(&b, 1, atom(`return {"status": "ok"}`))
	if len(g.errs) > 0 {
		return nil, errors.Join(g.errs...)
	}
	return []byte(b.String()), nil
}

// generator holds what rendering one candidate needs beyond the
// candidate: the names chosen for parameters and step results, and the
// problems found so far.
type generator struct {
	c  *candidate.Candidate
	fn string
	// params are the function's parameters after ctx, in candidate
	// order; param maps a candidate parameter name to its identifier.
	params []string
	param  map[string]string
	// optional[i] is true when params[i] gets the default None.
	optional []bool
	// derived are the assignments of derived parameters, in candidate
	// order: the local's identifier and its expression over the
	// function's parameters.
	derived []derivedLocal
	// result maps the index of a step whose result a later step reads to
	// the local variable holding it.
	result map[int]string
	// index holds the step indexes.
	index map[int]bool
	errs  []error
}

// errorf records a problem at path, a JSON path into the candidate.
func (g *generator) errorf(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	g.errs = append(g.errs, fmt.Errorf("candidate %s: %s: %s", g.c.ID, path, msg))
}

// plan validates the step order and bindings and chooses every name the
// function binds, so that none collides with another, with ctx, or with
// the function itself.
func (g *generator) plan() {
	c := g.c
	g.result = map[int]string{}
	g.index = map[int]bool{}
	prev := 0
	for i, st := range c.Steps {
		if st.Index <= prev {
			g.errorf(fmt.Sprintf("$.steps[%d].index", i), "index %d does not follow %d; step indexes are 1-based and increasing", st.Index, prev)
		}
		prev = max(prev, st.Index)
		g.index[st.Index] = true
	}
	// Parameters are named first, so that each keeps the name the
	// candidate gives it whenever that is a bindable identifier (mining
	// already makes it one): the runtime passes arguments by those names.
	// Only a clash between two sanitized names adds a suffix _2, _3, ….
	used := map[string]bool{"ctx": true}
	alloc := func(base string) string {
		id := base
		for k := 2; used[id]; k++ {
			id = base + "_" + strconv.Itoa(k)
		}
		used[id] = true
		return id
	}
	g.param = map[string]string{}
	for i, p := range c.Parameters {
		if _, dup := g.param[p.Name]; dup {
			g.errorf(fmt.Sprintf("$.parameters[%d].name", i), "duplicate parameter %q", p.Name)
			continue
		}
		id := alloc(candidate.Identifier(p.Name))
		g.param[p.Name] = id
		g.params = append(g.params, id)
		g.optional = append(g.optional, !p.Required)
	}

	g.planDerived(alloc)

	// A step's result gets a local, stepN, when a later step reads it,
	// and so does a decision, whose choice is the step's point: a
	// reviewer branches on it. The name gives way to a parameter that
	// already took it.
	for i, st := range c.Steps {
		if (st.ResultUsed || candidate.StepCall(st) == candidate.CallDecide) && g.result[st.Index] == "" {
			g.result[st.Index] = alloc("step" + strconv.Itoa(st.Index))
		}
		for j, a := range st.Arguments {
			if a.Kind != candidate.ArgBinding || a.Binding == nil {
				continue
			}
			from := a.Binding.FromStep
			// With increasing indexes (checked above), a lower index is
			// an earlier step.
			if !g.index[from] || from >= st.Index {
				g.errorf(fmt.Sprintf("$.steps[%d].arguments[%d].binding.from_step", i, j), "step %d does not come before step %d", from, st.Index)
				continue
			}
			// ResultUsed should already say so; a binding is reason
			// enough to keep the result.
			if g.result[from] == "" {
				g.result[from] = alloc("step" + strconv.Itoa(from))
			}
		}
	}

	// Starlark does not allow a required parameter after one with a
	// default, so an optional parameter gets its default None only when
	// every later one is optional too; the order stays the candidate's.
	tail := true
	for i := len(g.optional) - 1; i >= 0; i-- {
		tail = tail && g.optional[i]
		g.optional[i] = tail
	}
}

// header writes the comment block above the function: what it is, where
// it came from, what it may touch, how far to trust it.
func (g *generator) header(b *strings.Builder, opts Options) {
	c := g.c
	traces := "traces"
	if len(c.Examples) == 1 {
		traces = "trace"
	}
	comment(b, 0, fmt.Sprintf("%s — crystallized from %d %s, %s", g.fn, len(c.Examples), traces, candidate.OneLine(c.ID)))
	if opts.PackageName != "" {
		comment(b, 0, "package: "+candidate.OneLine(opts.PackageName))
	}
	for _, ex := range c.Examples {
		comment(b, 0, "source: "+source(ex))
	}
	comment(b, 0, fmt.Sprintf("capabilities: %s · secrets: %s · review before promotion", candidate.JoinNames(g.c.DeclaredCapabilities()), candidate.JoinNames(c.RequiredSecrets)))
	deterministic, models := 0, 0
	for _, st := range c.Steps {
		if st.Segment != candidate.Fuzzy {
			deterministic++
		}
		if candidate.StepCall(st) == candidate.CallModel {
			models++
		}
	}
	comment(b, 0, fmt.Sprintf("confidence: %s · deterministic steps: %d of %d · remaining model calls per run: %d",
		strconv.FormatFloat(c.Confidence, 'f', 2, 64), deterministic, len(c.Steps), models))
	for _, p := range c.RejectionReasons {
		comment(b, 0, "rejected: "+problem(p))
	}
	for _, p := range c.Warnings {
		comment(b, 0, "warning: "+problem(p))
	}
}

// source describes an example for the header: its full source hash and
// the path it was read from, or its trace id when the path is unknown.
func source(ex candidate.Example) string {
	var parts []string
	if ex.SourceHash != "" {
		parts = append(parts, candidate.OneLine(ex.SourceHash))
	}
	switch {
	case ex.Source != "":
		parts = append(parts, "("+candidate.OneLine(ex.Source)+")")
	case ex.TraceID != "":
		parts = append(parts, "(trace "+candidate.OneLine(ex.TraceID)+")")
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, " ")
}

// problem describes a finding for a comment: "code (step n): message".
func problem(p candidate.Problem) string {
	s := candidate.OneLine(p.Code)
	if p.Step > 0 {
		s += fmt.Sprintf(" (step %d)", p.Step)
	}
	if p.Message != "" {
		s += ": " + candidate.OneLine(p.Message)
	}
	return s
}

// signature writes the def line and the docstring.
func (g *generator) signature(b *strings.Builder) {
	items := []*node{atom("ctx")}
	for i, p := range g.params {
		if g.optional[i] {
			p += " = None"
		}
		items = append(items, atom(p))
	}
	statement(b, 0, group("def "+g.fn+"(", items, "):"))

	var names []string
	for _, st := range g.c.Steps {
		names = append(names, candidate.StepTitle(st))
	}
	const shown = 5
	var summary string
	switch n := len(names); {
	case n == 0:
		summary = "Runs no steps."
	case n == 1:
		summary = "Runs " + names[0] + "."
	case n <= shown:
		summary = "Runs " + strings.Join(names[:n-1], ", ") + ", then " + names[n-1] + "."
	default:
		summary = fmt.Sprintf("Runs %s, and %d more steps.", strings.Join(names[:shown], ", "), n-shown)
	}
	// The name is made from the steps; the goal says what they are for.
	if g.c.Description != "" {
		summary += " Goal: " + g.c.Description
	}
	b.WriteString(indentUnit + docstring(summary) + "\n")
	// A parameter that fills a command's {name...} looks like any other
	// in the def line; the reader, and whoever runs the workflow, must
	// know to pass a list.
	for _, p := range g.c.Parameters {
		if id, ok := g.param[p.Name]; ok && g.argvList(p.Name) {
			comment(b, 1, fmt.Sprintf("%s is a list of strings, one argument per item (run --param %s='[\"a\", \"b\"]')", id, id))
		}
	}
}

// argvList reports whether the parameter name is the value of a list
// placeholder {key...} in some step's argv template.
func (g *generator) argvList(name string) bool {
	for _, st := range g.c.Steps {
		if candidate.StepCall(st) != candidate.CallExec {
			continue
		}
		for _, el := range st.Argv {
			key, ok := candidate.ArgvList(el)
			if !ok {
				continue
			}
			for _, a := range st.Arguments {
				if a.Key == key && a.Kind == candidate.ArgParameter && a.Parameter == name {
					return true
				}
			}
		}
	}
	return false
}

// checkArgv reports what would make step i's argv template fail at run
// time: an empty or placeholder program, a {secret:ID} (a workflow reads
// secrets with ctx.secret), or a placeholder naming no argument of the
// step.
func (g *generator) checkArgv(i int, st candidate.Step) {
	keys := map[string]bool{}
	for _, a := range st.Arguments {
		keys[a.Key] = true
	}
	for j, el := range st.Argv {
		path := fmt.Sprintf("$.steps[%d].argv[%d]", i, j)
		names := candidate.ArgvPlaceholders(el)
		if j == 0 {
			if el == "" || len(names) > 0 {
				g.errorf(path, "the program %s must be a literal name or path", quote(el))
			}
			continue
		}
		if key, ok := candidate.ArgvList(el); ok {
			for _, a := range st.Arguments {
				if _, isList := a.Value.([]any); a.Key == key && a.Kind == candidate.ArgConstant && !isList {
					g.errorf(path, "%s takes a list, but the step's argument %s is %s", quote(el), key, candidate.JSONType(a.Value))
				}
			}
		}
		for _, n := range names {
			switch {
			case strings.HasPrefix(n, "secret:"):
				g.errorf(path, "%s names a secret; pass it as an argument read with ctx.secret", quote(el))
			case !keys[n]:
				g.errorf(path, "%s names {%s}, which is not an argument of the step", quote(el), n)
			}
		}
	}
}

// step writes the comments and statements of c.Steps[i].
func (g *generator) step(b *strings.Builder, i int) {
	st := g.c.Steps[i]
	g.stepComments(b, st)
	kind := candidate.StepCall(st)

	if kind != candidate.CallApprove && kind != candidate.CallDecide && st.Approval != nil && st.Approval.Required {
		boundary, _ := g.c.Approval(st)
		statement(b, 1, approveCall(boundary, g.prompt(i, st)))
	}
	// Checked after any approval, right before the step: a person may
	// take a while, and the world with them.
	g.checks(b, i)

	var n *node
	switch kind {
	case candidate.CallApprove:
		// The arguments of an approval step are what the person
		// approved in the traces; the prompt stands for them.
		boundary, _ := g.c.Approval(st)
		n = approveCall(boundary, g.prompt(i, st))
	case candidate.CallDecide:
		// The question is the approval's prompt; the runtime names the
		// decision after it.
		prompt := g.prompt(i, st)
		options := make([]*node, len(st.Options))
		for j, o := range st.Options {
			// The runtime refuses what is no choice; say so here, where
			// the candidate can be fixed.
			if strings.TrimSpace(o) == "" || slices.Contains(st.Options[:j], o) {
				g.errorf(fmt.Sprintf("$.steps[%d].options[%d]", i, j), "option %s is empty or repeats an earlier one", quote(o))
			}
			options[j] = atom(quote(o))
		}
		if len(st.Options) < 2 {
			g.errorf(fmt.Sprintf("$.steps[%d].options", i), "%d options; a decision needs at least 2", len(st.Options))
		}
		n = group("ctx.request_decision(", []*node{prompt, group("[", options, "]")}, ")")
	case candidate.CallModel:
		var inputs []*node
		seen := map[string]bool{}
		for j, a := range st.Arguments {
			v := g.value(i, j, a)
			k := quote(a.Key)
			if seen[k] {
				g.errorf(fmt.Sprintf("$.steps[%d].arguments[%d].key", i, j), "duplicate key %s", k)
				continue
			}
			seen[k] = true
			inputs = append(inputs, v.withPrefix(k+": "))
		}
		items := []*node{atom(quote(st.Name)), group("{", inputs, "}").withPrefix("inputs = ")}
		if sc := g.outputSchema(st.Index); sc != nil {
			items = append(items, sc.withPrefix("schema = "))
		}
		n = group("ctx.model(", items, ")")
	default:
		// ctx.exec takes the same name and keyword arguments as ctx.tool,
		// so its run records the action the traces recorded; the argv
		// template comes between them.
		items := []*node{atom(quote(st.Name))}
		open := "ctx.tool("
		if kind == candidate.CallExec {
			g.checkArgv(i, st)
			argv := make([]*node, len(st.Argv))
			for j, el := range st.Argv {
				argv[j] = atom(quote(el))
			}
			items = append(items, group("[", argv, "]"))
			open = "ctx.exec("
		}
		var extra []*node
		seen := map[string]bool{}
		for j, a := range st.Arguments {
			v := g.value(i, j, a)
			k := quote(a.Key)
			if seen[k] {
				g.errorf(fmt.Sprintf("$.steps[%d].arguments[%d].key", i, j), "duplicate key %s", k)
				continue
			}
			seen[k] = true
			if candidate.IsIdentifier(a.Key) && len(items) <= maxKeywordArgs {
				items = append(items, v.withPrefix(a.Key+" = "))
			} else {
				extra = append(extra, v.withPrefix(k+": "))
			}
		}
		if len(extra) > 0 {
			items = append(items, group("{", extra, "}").withPrefix("**"))
		}
		n = group(open, items, ")")
	}
	if v, ok := g.result[st.Index]; ok {
		n.withPrefix(v + " = ")
	}
	statement(b, 1, n)
}

// stepComments writes the comment block above a step: what it is, what it
// changes and needs, and what a reviewer must look at.
func (g *generator) stepComments(b *strings.Builder, st candidate.Step) {
	parts := []string{fmt.Sprintf("step %d", st.Index), candidate.OneLine(strings.TrimSpace(string(st.Kind) + " " + st.Name))}
	covered := map[string]bool{}
	for _, se := range st.SideEffects {
		s := "side effect " + candidate.OneLine(strings.TrimSpace(se.Kind+" "+se.Target))
		if se.Capability != "" {
			s += " (" + candidate.OneLine(se.Capability) + ")"
			covered[se.Capability] = true
		}
		parts = append(parts, s)
	}
	// Each capability is named once per step: those a side effect
	// already names are not repeated.
	var caps []string
	for _, cp := range candidate.StepCapabilities(st) {
		if !covered[cp] {
			caps = append(caps, cp)
		}
	}
	if len(caps) > 0 {
		parts = append(parts, "capabilities "+candidate.JoinNames(caps))
	}
	if len(st.RequiredSecrets) > 0 {
		parts = append(parts, "secrets "+candidate.JoinNames(st.RequiredSecrets))
	}
	if st.Approval != nil || st.Kind == trace.KindHumanApproval {
		boundary, _ := g.c.Approval(st)
		req := "required"
		if st.Approval != nil && !st.Approval.Required {
			req = "not required"
		}
		parts = append(parts, fmt.Sprintf("approval %s (%s)", candidate.OneLine(boundary), req))
	}
	comment(b, 1, strings.Join(parts, " · "))

	notes := st.ReviewNotes
	if st.Segment == candidate.Fuzzy {
		// The first review note says why the step is fuzzy when mining
		// wrote one; it becomes the reason rather than a repeat.
		why := "the examples disagree on this step, so it stays a model call; check its inputs and output"
		if len(notes) > 0 {
			why, notes = notes[0], notes[1:]
		}
		comment(b, 1, "review_required: "+candidate.OneLine(why))
	}
	for _, n := range notes {
		comment(b, 1, "note: "+candidate.OneLine(n))
	}
}

// prompt returns the expression of the question step i asks its approver:
// the literal prompt, or, when the examples asked about their own values,
// the step's prompt template (candidate.Step.PromptTemplate) as a
// concatenation of literal text and the values this run has, so the
// approver of version 0.3.0 is asked about 0.3.0. A template part reads
// an argument of this step or an earlier one, or a parameter; anything
// else is reported, as a bad argument is.
func (g *generator) prompt(i int, st candidate.Step) *node {
	if len(st.PromptTemplate) == 0 {
		_, prompt := g.c.Approval(st)
		return atom(quote(prompt))
	}
	parts := make([]string, 0, len(st.PromptTemplate))
	for k, p := range st.PromptTemplate {
		path := fmt.Sprintf("$.steps[%d].prompt_template[%d]", i, k)
		var b strings.Builder
		switch {
		case p.Key == "" && p.Step == 0 && p.Parameter == "":
			b.WriteString(quote(p.Text))
		case p.Parameter != "" && p.Step == 0 && p.Key == "" && p.Text == "":
			id, ok := g.param[p.Parameter]
			if !ok {
				g.errorf(path+".parameter", "unknown parameter %q", p.Parameter)
				id = "None"
			}
			b.WriteString(id)
		case p.Step >= 1 && p.Step <= st.Index && p.Step <= len(g.c.Steps) && p.Text == "" && p.Parameter == "":
			from := g.c.Steps[p.Step-1]
			j := slices.IndexFunc(from.Arguments, func(a candidate.Argument) bool { return a.Key == p.Key })
			if j < 0 {
				g.errorf(path+".key", "step %d has no argument %q", p.Step, p.Key)
				b.WriteString("None")
				break
			}
			a := from.Arguments[j]
			if a.Kind == candidate.ArgSecret {
				// An approver's question never shows a credential.
				g.errorf(path+".key", "argument %q of step %d is a secret", p.Key, p.Step)
				b.WriteString("None")
				break
			}
			v := g.value(p.Step-1, j, a)
			if a.Kind == candidate.ArgBinding {
				b.WriteString("str(")
				v.flat(&b)
				b.WriteString(")")
			} else {
				v.flat(&b)
			}
		default:
			g.errorf(path, "a part is text, an argument of this or an earlier step, or a parameter")
			b.WriteString("None")
		}
		parts = append(parts, b.String())
	}
	return atom(strings.Join(parts, " + "))
}

// approveCall returns ctx.approve(boundary, prompt = prompt).
func approveCall(boundary string, prompt *node) *node {
	return group("ctx.approve(", []*node{atom(quote(boundary)), prompt.withPrefix("prompt = ")}, ")")
}

// fileText reports whether the argument key of st is text the step
// writes into a file: fs.write's content, fs.edit's old and new text.
// Such a constant is written as a block of lines (textBlock).
func fileText(st candidate.Step, key string) bool {
	switch st.Name {
	case "fs.write":
		return key == "content"
	case "fs.edit":
		return key == "old" || key == "new"
	}
	return false
}

// value returns the expression for argument j of step i. On a problem it
// records it and returns None, so rendering goes on and every problem is
// reported.
func (g *generator) value(i, j int, a candidate.Argument) *node {
	path := fmt.Sprintf("$.steps[%d].arguments[%d]", i, j)
	switch a.Kind {
	case candidate.ArgConstant:
		if text, ok := a.Value.(string); ok && fileText(g.c.Steps[i], a.Key) {
			if block, ok := textBlock(text); ok {
				return atom(block)
			}
		}
		n, err := literal(a.Value)
		if err != nil {
			g.errorf(path+".value", "%v", err)
			break
		}
		return n
	case candidate.ArgParameter:
		id, ok := g.param[a.Parameter]
		if !ok {
			g.errorf(path+".parameter", "unknown parameter %q", a.Parameter)
			break
		}
		return atom(id)
	case candidate.ArgBinding:
		if a.Binding == nil {
			g.errorf(path+".binding", "binding argument without a binding")
			break
		}
		v, ok := g.result[a.Binding.FromStep]
		if !ok {
			break // reported by plan
		}
		sel, err := selector(a.Binding.FromPath)
		if err != nil {
			g.errorf(path+".binding.from_path", "%v", err)
			break
		}
		return atom(v + sel)
	case candidate.ArgSecret:
		if a.Secret == "" {
			g.errorf(path+".secret", "secret argument without a secret id")
			break
		}
		return atom("ctx.secret(" + quote(a.Secret) + ")")
	default:
		g.errorf(path+".kind", "unknown argument kind %q", a.Kind)
	}
	return atom("None")
}

// NoCandidate renders the workflow written when mining found no safe
// candidate: a header listing every rejected candidate with its reasons
// and the report's warnings, and a function, FuncName(nil, opts), that
// fails when run. It passes Check.
func NoCandidate(r *candidate.Report, opts Options) []byte {
	if r == nil {
		r = &candidate.Report{}
	}
	fn := FuncName(nil, opts)
	var b strings.Builder
	comment(&b, 0, fn+" — mining found no safe crystallization candidate")
	if opts.PackageName != "" {
		comment(&b, 0, "package: "+candidate.OneLine(opts.PackageName))
	}
	comment(&b, 0, fmt.Sprintf("traces: %d read, %d excluded · candidates: %d safe, %d rejected",
		r.SourceTraceCount, r.ExcludedTraceCount, len(r.Candidates), len(r.RejectedCandidates)))
	for _, c := range r.RejectedCandidates {
		comment(&b, 0, "rejected: "+candidate.OneLine(strings.TrimSpace(c.ID+" "+c.Name)))
		for _, p := range c.RejectionReasons {
			comment(&b, 0, "  "+problem(p))
		}
	}
	for _, p := range r.Warnings {
		comment(&b, 0, "warning: "+problem(p))
	}
	statement(&b, 0, atom("def "+fn+"(ctx):"))
	b.WriteString(indentUnit + docstring("Fails: mining found no safe crystallization candidate.") + "\n")
	statement(&b, 1, atom(`ctx.fail("no safe crystallization candidate")`))
	return []byte(b.String())
}
