package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
)

// withHints returns err with each runtime remedy in it worded as the
// flags and commands that apply it: the runtime says what would get past
// an error (runner.RemedyError) or which run waits for what
// (runner.PendingApprovalError, runner.PendingDecisionError), the
// command line says how to go on. The hint
// follows the message of the error it belongs to, wherever that stands in
// err (wrapped, or one of several joined); errors.Is and errors.As see
// err as before.
//
// Two errors with the same message (the same refusal joined twice) each
// get their hint after their own occurrence: the n-th error of a message
// in the tree's depth-first order is the n-th occurrence of that message
// in err's text, which is the order errors.Join and %w print them in.
// Positions are taken in the original text, so an inserted hint is never
// mistaken for a message.
func withHints(err error) error {
	msg := err.Error()
	type insertion struct {
		at   int
		text string
	}
	var ins []insertion
	seen := map[string]int{} // message → occurrences already given a hint
	for _, h := range hints(err) {
		if at := nthEnd(msg, h.after, seen[h.after]); at >= 0 {
			ins = append(ins, insertion{at, h.text})
			seen[h.after]++
		}
	}
	if len(ins) == 0 {
		return err
	}
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].at < ins[j].at })
	var b strings.Builder
	last := 0
	for _, in := range ins {
		b.WriteString(msg[last:in.at])
		b.WriteString(in.text)
		last = in.at
	}
	b.WriteString(msg[last:])
	return &hintedError{msg: b.String(), err: err}
}

// nthEnd is the index just after the occurrence of sub in s that follows
// n earlier ones (n counts from 0), or -1 when there are not that many.
func nthEnd(s, sub string, n int) int {
	from := 0
	for {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return -1
		}
		end := from + i + len(sub)
		if n == 0 {
			return end
		}
		n--
		from = end
	}
}

// hint is what the command line adds to an error's message: text, right
// after the message after.
type hint struct{ after, text string }

// remedyHint is the command line's wording of re's remedy.
func remedyHint(re *runner.RemedyError) string {
	switch re.Remedy {
	case runner.RemedyAdmit:
		return "; approve it (crystallize approve), rehearse it with --dry-run, or pass --allow-unapproved"
	case runner.RemedyDryRun:
		return ", or use --dry-run"
	case runner.RemedyApprove:
		return "; approve the bundle with crystallize approve --state-dir " + re.StateDir
	}
	return ""
}

// answerHint is the session inbox answer flag that answers the item of e.
func answerHint(e *registry.AnswerError) string {
	switch e.Need {
	case registry.ItemDecisionNeeded:
		return "; answer --decide with one of " + strings.Join(e.Options, ", ")
	case registry.ItemApprovalRequired:
		return "; answer --approve or --reject"
	}
	return ", --dismiss marks it read"
}

// hints lists the hints for the errors in err's tree, depth first: the
// remedies of runner.RemedyError, the command that continues a run
// suspended at an approval or a decision, the flag that answers an inbox
// item, where a model's configuration comes from, and the flags behind a
// refused holdout, two workflows written to one file and a missing trace
// store.
func hints(err error) []hint {
	var out []hint
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		switch e := err.(type) {
		case *runner.RemedyError:
			out = append(out, hint{e.Error(), remedyHint(e)})
		case *runner.PendingApprovalError:
			out = append(out, hint{e.Error(), fmt.Sprintf("; continue with %s --approve %s (or --reject %s)", runner.ResumeCommand(e.StateDir, e.RunID), e.Boundary, e.Boundary)})
		case *runner.PendingDecisionError:
			out = append(out, hint{e.Error(), "; continue with " + runner.ResumeCommand(e.StateDir, e.RunID) + " --decide OPTION"})
		case *registry.AnswerError:
			out = append(out, hint{e.Error(), answerHint(e)})
		case *pipeline.HoldoutTooLargeError:
			out = append(out, hint{e.Error(), " (--min-examples)"})
		case *tracestore.NoStoreError:
			out = append(out, hint{e.Error(), ": store traces first with crystallize import --from DIR --store"})
		case *pipeline.WorkflowClashError:
			out = append(out, hint{e.Error(), " (--out and a candidate's workflow)"})
		}
		if err == pipeline.ErrNoModelConfig {
			out = append(out, hint{err.Error(), "; name one with --config or create " + runconfig.ConfigFile})
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// hintedError is an error with the command line's hints in its message.
type hintedError struct {
	msg string
	err error
}

func (e *hintedError) Error() string { return e.msg }
func (e *hintedError) Unwrap() error { return e.err }

// hintRunError gives the error a run's summary shows the command line's
// hints, as the error printed on stderr has them, when err is the error
// the run recorded.
func hintRunError(res *runner.Result, err error) {
	if err != nil && res != nil && res.Error == err.Error() {
		res.Error = withHints(err).Error()
	}
}
