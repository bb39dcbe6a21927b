package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Interactive review (session codify --interactive).
//
// The review is the "user-confirm" layer of progressive
// codification: before anything is written, the draft candidate is shown
// step by step and the person decides, for each step, to keep it, drop it,
// or turn some of its literal arguments into workflow parameters. The
// answers are plain lines, so the loop (reviewSteps) reads any io.Reader
// and tests drive it with scripted answers; only the command insists on a
// terminal.
//
// The decisions are applied to the sources, not patched into the
// candidate: a dropped step's action is removed from every trace the
// candidate was mined from, and the traces are mined again. Everything
// derived from the steps (constants, data flow, approvals, expected
// outputs, the signature, the examples' action ids, savings, the shadow
// replay against the sources and the bundle's fixtures) then agrees with
// the kept steps by construction, which editing the candidate by hand
// could not promise. A parameter is the one change mining cannot infer
// from one example, so it is made on the re-mined candidate: the literal
// becomes an argument of kind parameter and the value its example.

// reviewHelp documents the answers reviewSteps accepts.
const reviewHelp = `Answers:
  k, keep, or an empty line   keep the step as it stands and go to the next
  d, drop                     leave the step out of the workflow
  p ARG [NAME]                make the literal argument ARG a workflow parameter
                              NAME (default: ARG); asks about the step again, so
                              several arguments can be made parameters; a NAME
                              that is already a parameter is shared
  q, quit                     stop; nothing is written
  ?, help                     show this
End of input stops like q.
`

// errReviewAborted is returned by reviewSteps when the person quits or
// the answers end before every step was decided.
var errReviewAborted = errors.New("interactive review stopped; nothing written")

// stepReview is what the person decided about a candidate's steps.
type stepReview struct {
	// Drop are the 1-based indexes of the dropped steps, increasing.
	Drop []int
	// Params are the arguments to make parameters, in step order and, in
	// a step, in the order they were asked for. A step is in Drop or has
	// params, not both.
	Params []paramEdit
}

// paramEdit makes the constant argument Key of step Step (a 1-based
// index in the reviewed candidate) the workflow parameter Name.
type paramEdit struct {
	Step int
	Key  string
	Name string
}

// empty reports whether the review changes nothing.
func (r *stepReview) empty() bool { return len(r.Drop) == 0 && len(r.Params) == 0 }

// reviewSteps asks on out, one step of c at a time, whether to keep, drop
// or parameterize it, reading one answer per line from in (the syntax is
// reviewHelp). An answer it cannot use is explained and the step asked
// again. It returns errReviewAborted on q, at end of input before the
// last step is decided, or when ctx is cancelled (SIGINT while a line is
// awaited): a review cut short writes nothing. The last step standing
// cannot be dropped, since a workflow without steps is no workflow. c is
// not modified.
func reviewSteps(ctx context.Context, in io.Reader, out io.Writer, c *candidate.Candidate) (*stepReview, error) {
	lines, stop := readLines(in)
	defer stop()
	rv := &stepReview{}
	// Parameters the candidate has, and the ones made so far, so that a
	// name given twice is recognized as shared.
	names := map[string]bool{}
	for _, p := range c.Parameters {
		names[p.Name] = true
	}
	fmt.Fprintf(out, "Review of %s: %d steps. For each: k keep, d drop, p ARG NAME parameterize, q quit, ? help.\n", c.Name, len(c.Steps))
	for i, st := range c.Steps {
		var edits []paramEdit // this step's, until it is kept
		showStep(out, c, i, edits)
		for decided := false; !decided; {
			fmt.Fprintf(out, "step %d [k/d/p ARG NAME/q/?]: ", st.Index)
			var l readLine
			select {
			case got, ok := <-lines:
				l = got
				if !ok {
					l.err = io.EOF
				}
			case <-ctx.Done():
				fmt.Fprintln(out)
				return nil, fmt.Errorf("%w: %w", errReviewAborted, ctx.Err())
			}
			line := l.text
			if l.err != nil && line == "" {
				fmt.Fprintln(out)
				return nil, errReviewAborted
			}
			fields := strings.Fields(line)
			verb := ""
			if len(fields) > 0 {
				verb = strings.ToLower(fields[0])
			}
			switch verb {
			case "", "k", "keep":
				if len(fields) > 1 {
					fmt.Fprintf(out, "  %s takes no arguments\n", verb)
					continue
				}
				rv.Params = append(rv.Params, edits...)
				decided = true
			case "d", "drop":
				if len(fields) > 1 {
					fmt.Fprintf(out, "  %s takes no arguments\n", verb)
					continue
				}
				if len(rv.Drop) == len(c.Steps)-1 {
					fmt.Fprintln(out, "  every other step is dropped; keep this one, or q to stop")
					continue
				}
				if st.ResultUsed {
					fmt.Fprintf(out, "  note: a later step reads the result of step %d; that argument becomes a literal\n", st.Index)
				}
				rv.Drop = append(rv.Drop, st.Index)
				decided = true
			case "p", "param", "parameterize":
				e, msg := paramAnswer(c, i, fields[1:])
				if msg != "" {
					fmt.Fprintf(out, "  %s\n", msg)
					continue
				}
				if j := slices.IndexFunc(edits, func(x paramEdit) bool { return x.Key == e.Key }); j >= 0 {
					edits[j] = e
				} else {
					edits = append(edits, e)
				}
				shared := names[e.Name]
				for _, x := range rv.Params {
					shared = shared || x.Name == e.Name
				}
				if shared {
					fmt.Fprintf(out, "  %s of step %d takes the parameter %s, shared with the steps that already do\n", e.Key, st.Index, e.Name)
				}
				showStep(out, c, i, edits)
			case "q", "quit":
				return nil, errReviewAborted
			case "?", "h", "help":
				fmt.Fprint(out, reviewHelp)
			default:
				fmt.Fprintf(out, "  unknown answer %q: k, d, p ARG NAME, q or ? for help\n", strings.TrimSpace(line))
			}
		}
	}
	return rv, nil
}

// readLine is one line of answers, or the error that ended them.
type readLine struct {
	text string
	err  error
}

// readLines reads in line by line on a goroutine of its own, so that the
// review can stop on a cancelled context while a read blocks on the
// terminal. The channel is closed after the line that ended with an
// error. stop ends the goroutine once the line it may be holding is not
// wanted; a read that is blocked ends with the process.
func readLines(in io.Reader) (<-chan readLine, func()) {
	lines := make(chan readLine)
	done := make(chan struct{})
	go func() {
		defer close(lines)
		rd := bufio.NewReader(in)
		for {
			text, err := rd.ReadString('\n')
			select {
			case lines <- readLine{text, err}:
			case <-done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return lines, func() { close(done) }
}

// paramAnswer checks the arguments of a p answer about step i of c and
// returns the edit, or a message saying why it cannot be made.
func paramAnswer(c *candidate.Candidate, i int, args []string) (paramEdit, string) {
	st := c.Steps[i]
	if len(args) == 0 || len(args) > 2 {
		return paramEdit{}, "p takes the argument to make a parameter and, optionally, its name: p ARG NAME"
	}
	if st.Kind == trace.KindHumanApproval {
		return paramEdit{}, fmt.Sprintf("step %d is an approval: its prompt stands for its arguments, which the workflow does not pass", st.Index)
	}
	key := args[0]
	j := slices.IndexFunc(st.Arguments, func(a candidate.Argument) bool { return a.Key == key })
	if j < 0 {
		return paramEdit{}, fmt.Sprintf("step %d has no argument %q (it has %s)", st.Index, key, argKeys(st))
	}
	if a := st.Arguments[j]; a.Kind != candidate.ArgConstant {
		return paramEdit{}, fmt.Sprintf("%s is not a literal: it is %s", key, argSource(a))
	}
	name := candidate.Identifier(key)
	if len(args) == 2 {
		name = args[1]
	}
	if candidate.Identifier(name) != name {
		return paramEdit{}, fmt.Sprintf("%q cannot name a parameter (try %s)", name, candidate.Identifier(name))
	}
	return paramEdit{Step: st.Index, Key: key, Name: name}, ""
}

// showStep prints step i of c with its arguments, edits applied.
func showStep(out io.Writer, c *candidate.Candidate, i int, edits []paramEdit) {
	st := c.Steps[i]
	var what []string
	if st.Segment == candidate.Fuzzy {
		what = append(what, "fuzzy: stays a model call")
	}
	if st.Approval != nil && st.Approval.Required {
		what = append(what, "behind approval "+st.Approval.Boundary)
	}
	for _, se := range st.SideEffects {
		what = append(what, "side effect "+strings.TrimSpace(se.Kind+" "+se.Target))
	}
	note := ""
	if len(what) > 0 {
		note = " (" + strings.Join(what, "; ") + ")"
	}
	fmt.Fprintf(out, "Step %d of %d: %s %s%s\n", st.Index, len(c.Steps), st.Kind, st.Name, note)
	for _, a := range st.Arguments {
		src := argSource(a)
		for _, e := range edits {
			if e.Key == a.Key {
				src = "parameter " + e.Name + " (was " + src + ")"
			}
		}
		fmt.Fprintf(out, "  %s = %s\n", a.Key, src)
	}
}

// argSource says where an argument's value comes from, for people.
func argSource(a candidate.Argument) string {
	switch a.Kind {
	case candidate.ArgConstant:
		b, err := json.Marshal(a.Value)
		if err != nil {
			return "a literal"
		}
		s := string(b)
		if r := []rune(s); len(r) > 72 {
			s = string(r[:71]) + "…"
		}
		return s
	case candidate.ArgParameter:
		return "parameter " + a.Parameter
	case candidate.ArgBinding:
		if a.Binding != nil {
			return fmt.Sprintf("the result of step %d at %s", a.Binding.FromStep, a.Binding.FromPath)
		}
	case candidate.ArgSecret:
		return "secret " + a.Secret
	}
	return string(a.Kind)
}

func argKeys(st candidate.Step) string {
	if len(st.Arguments) == 0 {
		return "none"
	}
	keys := make([]string, len(st.Arguments))
	for i, a := range st.Arguments {
		keys[i] = a.Key
	}
	return strings.Join(keys, ", ")
}

// remineFunc mines traces again the way the draft was mined.
type remineFunc func(ctx context.Context, traces []*trace.Trace) (*candidate.Report, error)

// applyReview applies rv to the selected candidate of r, which was mined
// from traces: it drops the reviewed steps' actions from every example's
// trace and mines the result again with remine, then makes the reviewed
// arguments parameters. It returns the new report and the traces it was
// mined from (the edited copies; the originals are not modified), or an
// error when mining the edited traces does not give back the reviewed
// candidate without the dropped steps. The report records the review as
// a warning with code codeReviewed.
func applyReview(ctx context.Context, r *candidate.Report, traces []*trace.Trace, rv *stepReview, remine remineFunc) (*candidate.Report, []*trace.Trace, error) {
	sel := r.Selected()
	if sel == nil || rv.empty() {
		return r, traces, nil
	}
	dropped := map[int]bool{}
	for _, s := range rv.Drop {
		dropped[s] = true
	}
	var what []string
	if len(rv.Drop) > 0 {
		drop := map[*trace.Trace]map[string]bool{}
		for _, ex := range sel.Examples {
			i := slices.IndexFunc(traces, func(t *trace.Trace) bool { return t.ID == ex.TraceID && t.SourceHash == ex.SourceHash })
			if i < 0 {
				return nil, nil, fmt.Errorf("applying the review: example trace %s is not among the sessions", ex.TraceID)
			}
			ids := drop[traces[i]]
			if ids == nil {
				ids = map[string]bool{}
				drop[traces[i]] = ids
			}
			for _, s := range rv.Drop {
				ids[ex.ActionIDs[s-1]] = true
			}
		}
		edited := make([]*trace.Trace, len(traces))
		for i, t := range traces {
			ids := drop[t]
			if ids == nil {
				edited[i] = t
				continue
			}
			cp := *t
			cp.Actions = slices.DeleteFunc(slices.Clone(t.Actions), func(a trace.Action) bool { return ids[a.ID] })
			edited[i] = &cp
		}
		var want []string
		for i, sig := range sel.SequenceSignature {
			if !dropped[i+1] {
				want = append(want, sig)
			}
		}
		r2, err := remine(ctx, edited)
		if err != nil {
			return nil, nil, err
		}
		if s2 := r2.Selected(); s2 == nil || !slices.Equal(s2.SequenceSignature, want) {
			return nil, nil, fmt.Errorf("applying the review: mining the sessions without the dropped steps does not give back the reviewed workflow; nothing written")
		}
		for _, s := range rv.Drop {
			what = append(what, fmt.Sprintf("dropped step %d %s", s, sel.Steps[s-1].Name))
		}
		r, traces, sel = r2, edited, r2.Selected()
	}
	// Old step index → index in the re-mined candidate.
	renumber := func(old int) int {
		n := old
		for _, s := range rv.Drop {
			if s < old {
				n--
			}
		}
		return n
	}
	for _, e := range rv.Params {
		if dropped[e.Step] {
			continue
		}
		what = append(what, fmt.Sprintf("made %s of step %d %s the parameter %s", e.Key, e.Step, sel.Steps[renumber(e.Step)-1].Name, e.Name))
		e.Step = renumber(e.Step)
		if err := parameterize(sel, e); err != nil {
			return nil, nil, fmt.Errorf("applying the review: %w", err)
		}
	}
	sortParameters(sel)
	r.Warnings = append(r.Warnings, candidate.Problem{
		Code:    codeReviewed,
		Message: "reviewed interactively (steps numbered as in the draft): " + strings.Join(what, "; "),
	})
	return r, traces, nil
}

// codeReviewed is the report warning that records an interactive review.
const codeReviewed = "reviewed_interactively"

// parameterize makes the constant argument e.Key of step e.Step of c the
// parameter e.Name: the argument refers to it, the constant is gone, and
// the parameter (new, or shared when c has one of that name) takes the
// literal as an example and the argument's path as a source.
func parameterize(c *candidate.Candidate, e paramEdit) error {
	if e.Step < 1 || e.Step > len(c.Steps) {
		return fmt.Errorf("no step %d", e.Step)
	}
	st := &c.Steps[e.Step-1]
	j := slices.IndexFunc(st.Arguments, func(a candidate.Argument) bool { return a.Key == e.Key })
	if j < 0 || st.Arguments[j].Kind != candidate.ArgConstant {
		return fmt.Errorf("step %d has no literal argument %q", st.Index, e.Key)
	}
	a := &st.Arguments[j]
	value := a.Value
	*a = candidate.Argument{Key: e.Key, Kind: candidate.ArgParameter, Parameter: e.Name}
	if !slices.Contains(st.ParameterRefs, e.Name) {
		st.ParameterRefs = append(st.ParameterRefs, e.Name)
	}
	c.Constants = slices.DeleteFunc(c.Constants, func(k candidate.Constant) bool {
		return k.Step == st.Index && k.Path == "parameters."+e.Key
	})
	path := fmt.Sprintf("steps[%d].parameters.%s", st.Index, e.Key)
	if i := slices.IndexFunc(c.Parameters, func(p candidate.Parameter) bool { return p.Name == e.Name }); i >= 0 {
		p := &c.Parameters[i]
		p.SourcePaths = append(p.SourcePaths, path)
		if !slices.ContainsFunc(p.Examples, func(v any) bool { return canonicalJSON(v) == canonicalJSON(value) }) && len(p.Examples) < 5 {
			p.Examples = append(p.Examples, value)
		}
		if t := candidate.JSONType(value); p.Type != t {
			p.Type = "mixed"
		}
		return nil
	}
	c.Parameters = append(c.Parameters, candidate.Parameter{
		Name: e.Name, Key: e.Key, SourcePaths: []string{path},
		Examples: []any{value}, Type: candidate.JSONType(value), Required: true,
	})
	return nil
}

// sortParameters orders c's parameters by first use, step by step and
// argument by argument, as mining orders them, so that one made in review
// takes its place in the function's signature.
func sortParameters(c *candidate.Candidate) {
	type pos struct{ step, arg int }
	first := func(p candidate.Parameter) pos {
		best := pos{len(c.Steps) + 1, 0}
		for _, sp := range p.SourcePaths {
			rest, ok := strings.CutPrefix(sp, "steps[")
			num, key, ok2 := strings.Cut(rest, "].parameters.")
			n, err := strconv.Atoi(num)
			if !ok || !ok2 || err != nil || n < 1 || n > len(c.Steps) {
				continue
			}
			j := slices.IndexFunc(c.Steps[n-1].Arguments, func(a candidate.Argument) bool { return a.Key == key })
			if p := (pos{n, j}); p.step < best.step || p.step == best.step && p.arg < best.arg {
				best = p
			}
		}
		return best
	}
	slices.SortStableFunc(c.Parameters, func(a, b candidate.Parameter) int {
		pa, pb := first(a), first(b)
		return cmp.Or(cmp.Compare(pa.step, pb.step), cmp.Compare(pa.arg, pb.arg))
	})
}

// canonicalJSON is v encoded, to compare JSON values.
func canonicalJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
