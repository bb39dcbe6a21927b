package mine

import (
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// What is not a procedure.
//
// A sequence repeats in agent sessions for reasons that have nothing to do
// with a procedure: an agent reads three files before it does anything,
// or edits a file, then another, then another. A workflow made of such
// steps does nothing a reviewer could approve: reads change nothing, and
// an edit that recorded only its path (what it wrote is not in the trace)
// would write nothing. Such a repeat is ranked after every procedure, is
// never what subsumes one, and, when it is built, is rejected with a code
// that says why: candidate.CodeObservationsOnly when every step is an
// observation, candidate.CodeEditsWithoutContent when every step is an
// observation or an edit without content and at least one is an edit, and
// candidate.CodeOneToolRepeated when its steps that do something are two
// or more calls of one tool (the same name, other flags: psql, then psql).
// An agent uses a tool in bursts, so a tool follows itself far more often
// than the noise rule's model of chance expects; a procedure a person
// would name does more than one thing.
//
// The shape is read off the steps' signatures, which is all the first pass
// keeps of an action (kind:name:sorted,parameter,keys): an observation is
// of kind observation, and an edit without content is a file_mutation
// whose parameters are no more than a path.

// pathKeys are the parameter keys that name the file an edit changed
// (the canonical "path", and the file tools' own names for it). An edit
// with no other parameter carries nothing of what it wrote.
var pathKeys = map[string]bool{"path": true, "file_path": true, "notebook_path": true, "filename": true, "target_file": true, "file": true}

// The shape of one step, from its signature.
const (
	shapeAction      uint8 = iota // anything a workflow can do
	shapeObservation              // a read-only action
	shapeBareEdit                 // a file edit that recorded only its path
)

// signatureShape classifies a step by its signature. The kind ends at
// the first colon and the parameter keys start after the last one (a name
// may hold colons; a key with a colon in it reads as its last part, which
// is a path key only if the key ends in ":path" or the like).
func signatureShape(sig string) uint8 {
	kind, rest, ok := strings.Cut(sig, ":")
	if !ok {
		return shapeAction
	}
	switch trace.Kind(kind) {
	case trace.KindObservation:
		return shapeObservation
	case trace.KindFileMutation:
		keys := rest[strings.LastIndexByte(rest, ':')+1:]
		if keys == "" {
			return shapeBareEdit
		}
		for k := range strings.SplitSeq(keys, ",") {
			if !pathKeys[k] {
				return shapeAction
			}
		}
		return shapeBareEdit
	}
	return shapeAction
}

// toolName is the name of the tool a signature (kind:name:keys) calls,
// or "" when it is no tool call: edits of several files are a procedure
// even though they all go through one edit tool.
func toolName(sig string) string {
	kind, rest, ok := strings.Cut(sig, ":")
	if !ok || trace.Kind(kind) != trace.KindToolCall {
		return ""
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// shapes holds, by symbol, what notProcedure reads of a step: its shape
// and the tool it calls (toolName).
type shapes struct {
	shape []uint8
	tool  []string
}

// symbolShapes returns the shapes of the symbols of a scan.
func symbolShapes(symbols map[string]int32) shapes {
	out := shapes{shape: make([]uint8, len(symbols)), tool: make([]string, len(symbols))}
	for sig, id := range symbols {
		out.shape[id], out.tool[id] = signatureShape(sig), toolName(sig)
	}
	return out
}

// notProcedure returns the rejection code of a sequence of n steps, with
// the given shapes and tools, when it is not a procedure, or "".
func notProcedure(n int, shape func(int) uint8, tool func(int) string) string {
	edits, actions := 0, 0
	first, oneTool := "", true
	for k := range n {
		switch shape(k) {
		case shapeAction:
			if actions == 0 {
				first = tool(k)
			}
			if tool(k) == "" || tool(k) != first {
				oneTool = false
			}
			actions++
		case shapeBareEdit:
			edits++
		}
	}
	switch {
	case actions >= 2 && oneTool:
		return candidate.CodeOneToolRepeated
	case actions > 0:
		return ""
	case edits > 0:
		return candidate.CodeEditsWithoutContent
	}
	return candidate.CodeObservationsOnly
}

// symsNotProcedure is notProcedure over a sequence of symbols.
func symsNotProcedure(syms []int32, sh shapes) string {
	return notProcedure(len(syms), func(k int) uint8 { return sh.shape[syms[k]] }, func(k int) string { return sh.tool[syms[k]] })
}

// rejectNonProcedure rejects c when its steps are not a procedure.
func rejectNonProcedure(c *candidate.Candidate) {
	sigs := c.SequenceSignature
	code := notProcedure(len(sigs), func(k int) uint8 { return signatureShape(sigs[k]) }, func(k int) string { return toolName(sigs[k]) })
	var msg string
	switch code {
	case "":
		return
	case candidate.CodeObservationsOnly:
		msg = fmt.Sprintf("every one of its %d steps is an observation: reads change nothing, so there is no procedure to run", len(c.Steps))
	case candidate.CodeEditsWithoutContent:
		msg = fmt.Sprintf("its %d steps are file edits that recorded only their path, and observations: the workflow would not know what to write", len(c.Steps))
	default:
		for _, sig := range sigs {
			if t := toolName(sig); t != "" {
				msg = fmt.Sprintf("every step that does something calls %s: one tool used again and again, not a procedure", t)
				break
			}
		}
	}
	c.RejectionReasons = append(c.RejectionReasons, candidate.Problem{Code: code, Message: msg})
	c.Confidence = 0
}

// noteFailures says, for every step whose action failed in some examples
// without a later attempt succeeding (Step.Failures), that it did: the
// step stays as the runs did it, a failure is no reason to reject the
// procedure, but a reviewer should know. A step that failed in every
// example is most likely a call the workflow should not make as it is.
func noteFailures(c *candidate.Candidate) {
	for j := range c.Steps {
		s := &c.Steps[j]
		if s.Failures == 0 {
			continue
		}
		var note string
		if s.Failures >= c.Support {
			note = fmt.Sprintf("step %d %s failed in every example (%d of %d) and was never retried; it is kept as a failed step: check that the workflow should run it", s.Index, s.Name, s.Failures, c.Support)
		} else {
			note = fmt.Sprintf("step %d %s failed in %d of %d examples and was not retried; it is kept, as the other examples ran it", s.Index, s.Name, s.Failures, c.Support)
		}
		s.ReviewNotes = append(s.ReviewNotes, note)
		c.Warnings = append(c.Warnings, candidate.Problem{Code: candidate.CodeFailedStep, Message: note, Step: s.Index})
	}
}

// countFailures sets each step's Failures from the flags the first pass
// kept of every example's matched actions.
func countFailures(c *candidate.Candidate, all []match, flags [][]uint8) {
	for j := range c.Steps {
		c.Steps[j].Failures = 0
	}
	for _, m := range all {
		for j, p := range m.pos {
			if flags[m.seq][p]&flagFailed != 0 {
				c.Steps[j].Failures++
			}
		}
	}
}
