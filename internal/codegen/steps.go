package codegen

import "github.com/crystallize-dev/crystallize/internal/candidate"

// What other renderings of a candidate (SKILL.md, in package skill) share
// with the workflow, so that a skill describes each step exactly as the
// workflow calls it.

// How a step is called in the workflow (see StepCall).
const (
	CallTool    = "tool"
	CallModel   = "model"
	CallApprove = "approve"
	CallDecide  = "request_decision"
	CallExec    = "exec"
)

// StepCall returns the ctx method the workflow calls for st: CallApprove
// for an approval step, CallDecide for one whose options the traces show,
// CallModel for a model call or a fuzzy segment,
// CallExec for a step with an argv template, CallTool otherwise.
func StepCall(st candidate.Step) string {
	switch callOf(st) {
	case callApprove:
		return CallApprove
	case callDecide:
		return CallDecide
	case callModel:
		return CallModel
	case callExec:
		return CallExec
	}
	return CallTool
}

// StepTitle is the title of st in the workflow's step comment.
func StepTitle(st candidate.Step) string { return stepTitle(st) }

// StepCapabilities returns the capabilities st needs: its own, and the
// exec capability of its command.
func StepCapabilities(st candidate.Step) []string { return stepCapabilities(st) }

// Capabilities returns the capabilities the workflow of c declares in its
// header: the candidate's and those of its commands.
func Capabilities(c *candidate.Candidate) []string { return (&generator{c: c}).capabilities() }

// Approval returns the boundary and prompt of st's approval, from the
// step or from c's approval point at it.
func Approval(c *candidate.Candidate, st candidate.Step) (boundary, prompt string) {
	return (&generator{c: c}).approval(st)
}

// OneLine reduces untrusted text to one printable line, as the workflow's
// comments hold it.
func OneLine(s string) string { return oneLine(s) }

// JoinNames joins names as the workflow's comments list them: one line
// each, sorted, without duplicates, or "none".
func JoinNames(names []string) string { return list(names) }

// MaxTextRunes caps each piece of trace-derived text OneLine keeps.
const MaxTextRunes = maxTextRunes
