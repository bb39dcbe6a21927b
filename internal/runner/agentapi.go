package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// The agent API: how a workflow talks to the person who runs it.
//
//	ctx.notify(text, complete = True)
//	ctx.request_decision(question, options, name = "")
//	ctx.request_approval(text, boundary = "")
//
// Each writes a callout into the run's session.md and hands a Message to
// Options.Inbox, which the cli stores in the inbox of the registry.
//
// ctx.notify tells and does not ask: [!task_complete] by default, for the
// message a workflow ends its work with, or [!info] with complete = False
// for progress worth a person's attention mid-run. It is not a step (like
// ctx.log it neither executes nor is journaled), so adding one to a
// workflow does not change the step numbers of a suspended run.
//
// ctx.request_decision asks a person to choose one of options and returns
// the chosen string. With no choice given the run suspends in state
// pending_approval, exactly as at an undecided ctx.approve, with a
// [!decision_needed] callout that lists the options; Resume with
// Options.Decide continues it and the call returns that option. A dry run
// takes the first option. The choice is journaled like an approval, so a
// run suspended later replays it.
//
// ctx.request_approval is ctx.approve under another callout: the boundary
// (by default derived from the text) is decided by --approve and
// --reject, a prompt or a resume, and the decision is recorded exactly as
// ctx.approve records it; only the pending callout is
// [!approval_required] instead of [!decision].

// ErrDecision: a decision answered with a choice it does not offer, or
// asked with options that cannot be offered.
var ErrDecision = errors.New("invalid decision")

// agentMethods are the agent API's ctx members, added to the ctx of
// every run by newHost.
func (h *host) agentMethods() map[string]*starlark.Builtin {
	return map[string]*starlark.Builtin{
		"notify":           starlark.NewBuiltin("notify", h.notify),
		"request_decision": starlark.NewBuiltin("request_decision", h.requestDecision),
		"request_approval": starlark.NewBuiltin("request_approval", h.requestApproval),
	}
}

// message hands m to Options.Inbox.
func (h *host) message(m runstate.Message) {
	if h.opts.Inbox != nil {
		h.opts.Inbox(m)
	}
}

// notify implements ctx.notify(text, complete=True).
func (h *host) notify(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	complete := true
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "complete?", &complete); err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%s: empty text", b.Name())
	}
	if h.step < h.replayUntil {
		// Written before the run was suspended: the run stopped at
		// step replayUntil, after this call.
		return starlark.None, nil
	}
	typ := runstate.MessageTaskComplete
	if !complete {
		typ = runstate.MessageInfo
	}
	text = h.secrets.Scrub(text)
	var body []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		body = append(body, strings.TrimRight(l, " "))
	}
	h.current().Message(typ, body)
	h.message(runstate.Message{Type: typ, Step: h.step, Text: text})
	return starlark.None, nil
}

// requestDecision implements ctx.request_decision(question, options,
// name="").
func (h *host) requestDecision(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var question, name string
	var list *starlark.List
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "question", &question, "options", &list, "name?", &name); err != nil {
		return nil, err
	}
	options, err := decisionOptions(list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if strings.TrimSpace(question) == "" {
		return nil, fmt.Errorf("%s: %w: empty question", b.Name(), ErrDecision)
	}
	if name == "" {
		name = boundarySlug(question)
	}
	h.step++
	step := h.step
	question = h.secrets.Scrub(question)
	argsDigest := stepvalue.Digest(map[string]any{"question": question, "options": toAny(options), "name": name})
	if h.replaying(step) {
		return h.replay(step, "decision", name, argsDigest)
	}
	if h.yielding(step) {
		return nil, errYield
	}
	var chosen, approver string
	switch {
	case step == h.replayUntil && h.opts.Decide != "":
		if !slices.Contains(options, h.opts.Decide) {
			return nil, fmt.Errorf("%w: %q is not an option of %s (options: %s)", ErrDecision, h.opts.Decide, name, quoteList(options))
		}
		chosen, approver = h.opts.Decide, "--decide"
	case h.opts.DryRun:
		chosen, approver = options[0], "dry run"
	default:
		h.res.Pending = &runstate.Pending{Step: step, Boundary: name, Prompt: question, Kind: runstate.PendingDecision, Options: options}
		h.pendingPhase = len(h.phases)
		p := h.newPhase(fmt.Sprintf("Step %d · decide %s (pending)", step, name))
		p.Callout(session.CalloutDecisionNeeded, stepvalue.OneLine(question), "Options: "+codeList(options),
			"Continue with "+codeSpan(ResumeCommand(h.opts.StateDir, h.opts.RunID)+" --decide OPTION"))
		h.message(runstate.Message{Type: runstate.MessageDecisionNeeded, Step: step, Boundary: name, Text: question, Options: options})
		return nil, &PendingDecisionError{StateDir: h.opts.StateDir, RunID: h.opts.RunID, Name: name, Options: options}
	}
	h.recordApproval(step, name, question, approver, map[string]any{"decision": chosen}, map[string]any{"options": toAny(options)})
	// The log keeps the question with its answer: the pending phase is
	// rewritten on resume, and this is what replaces it.
	p := h.newPhase(fmt.Sprintf("Step %d · decide %s", step, name))
	p.Callout(session.CalloutDecisionNeeded, stepvalue.OneLine(question), "Options: "+codeList(options))
	callout := session.CalloutDecision
	if approver == "--decide" {
		callout = session.CalloutUser // a person answered on resume
	}
	p.Callout(callout, "", "Decided "+codeSpan(name)+": "+codeSpan(chosen)+" ("+approver+")")
	h.journalCall(step, "decision", name, argsDigest, chosen)
	return starlark.String(chosen), nil
}

// decisionOptions checks a decision's options: at least two distinct,
// non-empty strings (one option is not a choice).
func decisionOptions(list *starlark.List) ([]string, error) {
	var out []string
	for i := 0; i < list.Len(); i++ {
		s, ok := starlark.AsString(list.Index(i))
		if !ok {
			return nil, fmt.Errorf("%w: options[%d] is a %s, want a string", ErrDecision, i, list.Index(i).Type())
		}
		if strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("%w: options[%d] is empty", ErrDecision, i)
		}
		if slices.Contains(out, s) {
			return nil, fmt.Errorf("%w: options[%d] %q repeats an earlier option", ErrDecision, i, s)
		}
		out = append(out, s)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("%w: %d options, want at least 2", ErrDecision, len(out))
	}
	return out, nil
}

// requestApproval implements ctx.request_approval(text, boundary="") on
// top of ctx.approve, so that both make the same decision record.
func (h *host) requestApproval(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text, boundary string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "boundary?", &boundary); err != nil {
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%s: empty text", b.Name())
	}
	if boundary == "" {
		boundary = boundarySlug(text)
	}
	approve := h.ctxValue.methods["approve"]
	v, err := h.approve(thread, approve, starlark.Tuple{starlark.String(boundary), starlark.String(text)}, nil)
	var pe *PendingApprovalError
	if errors.As(err, &pe) && h.pendingPhase >= 0 {
		// The pending phase approve wrote opens with its callout line;
		// this call asks for an approval, and says so.
		h.phases[h.pendingPhase].Retitle(session.CalloutDecision, session.CalloutApprovalRequired, stepvalue.OneLine(h.secrets.Scrub(text)))
		h.message(runstate.Message{Type: runstate.MessageApprovalRequired, Step: h.res.Pending.Step, Boundary: boundary, Text: h.secrets.Scrub(text)})
	}
	return v, err
}

// PendingDecisionError stops a run at an undecided
// ctx.request_decision named Name: Resume with one of Options decided
// continues run RunID under StateDir. It wraps ErrPendingApproval.
type PendingDecisionError struct {
	StateDir, RunID, Name string
	Options               []string
}

func (e *PendingDecisionError) Error() string {
	return fmt.Sprintf("decision pending: %s (options %s)", e.Name, quoteList(e.Options))
}

func (e *PendingDecisionError) Unwrap() error { return ErrPendingApproval }

// boundarySlug names a decision or approval after its text: lowercase
// letters and digits, other runs of characters as one "_", at most 40
// characters, so that "About to delete 47 files" is
// about_to_delete_47_files.
func boundarySlug(text string) string {
	var b strings.Builder
	sep := false
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if sep && b.Len() > 0 {
				b.WriteByte('_')
			}
			sep = false
			b.WriteRune(r)
			if b.Len() >= 40 {
				break
			}
			continue
		}
		sep = true
	}
	if b.Len() == 0 {
		return "decision"
	}
	return b.String()
}

// codeList renders options as code spans joined by ", ".
func codeList(options []string) string {
	parts := make([]string, len(options))
	for i, o := range options {
		parts[i] = codeSpan(o)
	}
	return strings.Join(parts, ", ")
}
