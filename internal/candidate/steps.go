package candidate

import (
	"slices"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// How a workflow runs each step of a candidate, and how people read it.
// Code generation writes the calls and package skill describes them in
// SKILL.md; both take them from here, so a skill describes each step
// exactly as the workflow calls it, and the skill needs no part of code
// generation to do so.

// Call is the host call, a method of the workflow's ctx, that runs a step.
type Call string

// The host calls a step becomes (see StepCall).
const (
	CallTool    Call = "tool"
	CallModel   Call = "model"
	CallApprove Call = "approve"
	CallDecide  Call = "request_decision"
	CallExec    Call = "exec"
)

// StepCall chooses the host call for st. An approval step asks a person:
// to choose one of its options when the traces show what they chose
// between (CallDecide, ctx.request_decision), else to approve
// (CallApprove); a model call, or any step the examples did not agree on
// (a fuzzy segment), still needs a model (CallModel); a step with an
// argv template runs it (CallExec, ctx.exec); everything else is a tool
// (CallTool).
func StepCall(st Step) Call {
	switch {
	case st.Kind == trace.KindHumanApproval && len(st.Options) > 0:
		return CallDecide
	case st.Kind == trace.KindHumanApproval:
		return CallApprove
	case st.Kind == trace.KindModelCall || st.Segment == Fuzzy:
		return CallModel
	case len(st.Argv) > 0:
		return CallExec
	}
	return CallTool
}

// StepTitle names st for people: its name, or its kind when it has none.
func StepTitle(st Step) string {
	if st.Name != "" {
		return st.Name
	}
	return string(st.Kind)
}

// execCapability is the capability a step's ctx.exec needs, or "" for a
// step that does not run a command.
func execCapability(st Step) string {
	if StepCall(st) != CallExec {
		return ""
	}
	return "exec:" + ArgvProgram(st.Argv)
}

// StepCapabilities returns the capabilities st needs: its own, and the
// exec capability of its command.
func StepCapabilities(st Step) []string {
	cp := execCapability(st)
	if cp == "" || slices.Contains(st.Capabilities, cp) {
		return st.Capabilities
	}
	return append(slices.Clone(st.Capabilities), cp)
}

// DeclaredCapabilities returns what the workflow of c declares in its
// header: c's capabilities and the exec capability of every command
// step, which the runtime requires declared even when the traces did not
// record it.
func (c *Candidate) DeclaredCapabilities() []string {
	caps := slices.Clone(c.Capabilities)
	for _, st := range c.Steps {
		if cp := execCapability(st); cp != "" {
			caps = append(caps, cp)
		}
	}
	return caps
}

// Approval returns the boundary and prompt of st's approval: the step's
// own, else c's approval point for the step, else the step's title and a
// generic prompt.
func (c *Candidate) Approval(st Step) (boundary, prompt string) {
	if st.Approval != nil {
		boundary, prompt = st.Approval.Boundary, st.Approval.Prompt
	}
	for _, ap := range c.ApprovalPoints {
		if ap.Step == st.Index {
			if boundary == "" {
				boundary = ap.Boundary
			}
			if prompt == "" {
				prompt = ap.Prompt
			}
		}
	}
	if boundary == "" {
		boundary = StepTitle(st)
	}
	if prompt == "" {
		prompt = "Approve " + boundary + "?"
	}
	return boundary, prompt
}
