package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codify"
)

// Interactive review (session codify --interactive).
//
// The review is the "user-confirm" layer of progressive
// codification: before anything is written, the draft candidate is shown
// step by step and the person decides, for each step, to keep it, drop it,
// or turn some of its literal arguments into workflow parameters. The
// answers are plain lines, so the loop (reviewSteps) reads any io.Reader
// and tests drive it with scripted answers; only the command insists on a
// terminal. The decisions are applied by codify.Apply.

// reviewHelp documents the answers reviewSteps accepts.
const reviewHelp = `Answers:
  k, keep, or an empty line   keep the step as it stands and go to the next
  d, drop                     leave the step out of the workflow
  p ARG [NAME]                make the literal argument ARG a workflow parameter
                              NAME (default: ARG); asks about the step again, so
                              several arguments can be made parameters; a NAME
                              that is already a parameter is shared. When ARG
                              already is a parameter, rename it NAME in every
                              step and derived value that reads it
  q, quit                     stop; nothing is written
  ?, help                     show this
End of input stops like q.
`

// errReviewAborted is returned by reviewSteps when the person quits or
// the answers end before every step was decided.
var errReviewAborted = errors.New("interactive review stopped; nothing written")

// reviewSteps asks on out, one step of c at a time, whether to keep, drop
// or parameterize it, reading one answer per line from in (the syntax is
// reviewHelp). An answer it cannot use is explained and the step asked
// again. It returns errReviewAborted on q, at end of input before the
// last step is decided, or when ctx is cancelled (SIGINT while a line is
// awaited): a review cut short writes nothing. The last step standing
// cannot be dropped, since a workflow without steps is no workflow. c is
// not modified.
func reviewSteps(ctx context.Context, in io.Reader, out io.Writer, c *candidate.Candidate) (*codify.Review, error) {
	lines, stop := readLines(in)
	defer stop()
	rv := &codify.Review{}
	// Parameters the candidate has, and the ones made so far, so that a
	// name given twice is recognized as shared.
	names := map[string]bool{}
	for _, p := range c.Parameters {
		names[p.Name] = true
	}
	fmt.Fprintf(out, "Review of %s: %d steps. For each: k keep, d drop, p ARG NAME parameterize, q quit, ? help.\n", c.Name, len(c.Steps))
	for i, st := range c.Steps {
		var edits []codify.ParamEdit // this step's, until it is kept
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
				if !rv.CanDrop(c) {
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
				shared := names[e.Name]
				for _, x := range rv.Params {
					shared = shared || x.Name == e.Name
				}
				if e.From != "" && shared {
					fmt.Fprintf(out, "  %s is already a parameter: renaming %s to it would make two parameters one\n", e.Name, e.From)
					continue
				}
				if j := slices.IndexFunc(edits, func(x codify.ParamEdit) bool { return x.Key == e.Key }); j >= 0 {
					edits[j] = e
				} else {
					edits = append(edits, e)
				}
				if e.From != "" {
					fmt.Fprintf(out, "  the parameter %s is renamed %s in every step that reads it\n", e.From, e.Name)
				} else if shared {
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
func paramAnswer(c *candidate.Candidate, i int, args []string) (codify.ParamEdit, string) {
	if len(args) == 0 || len(args) > 2 {
		return codify.ParamEdit{}, "p takes the argument to make a parameter and, optionally, its name: p ARG NAME"
	}
	name := ""
	if len(args) == 2 {
		name = args[1]
	}
	e, err := codify.NewParamEdit(c, i, args[0], name)
	if err != nil {
		return codify.ParamEdit{}, err.Error()
	}
	return e, ""
}

// showStep prints step i of c with its arguments, edits applied.
func showStep(out io.Writer, c *candidate.Candidate, i int, edits []codify.ParamEdit) {
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
		src := codify.ArgumentSource(a)
		for _, e := range edits {
			if e.Key == a.Key {
				src = "parameter " + e.Name + " (was " + src + ")"
			}
		}
		fmt.Fprintf(out, "  %s = %s\n", a.Key, src)
	}
}
