package mine

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// stepChecks derives the machine-checkable preconditions of a step from
// its examples (candidate.Check), adds their prose to the step's
// preconditions, and counts the examples that needed the fallback. Only
// what every example shows becomes a check: a state the traces do not
// establish would fail runs the traces say are fine.
func stepChecks(c *candidate.Candidate, s *candidate.Step, v stepView, views []stepView) {
	s.Fallbacks = fallbacks(v)
	if s.Fallbacks > 0 {
		note := fmt.Sprintf("step %d %s needed the fallback in %d of %d examples; the world differs from the traces it was mined from, re-crystallize or review its preconditions",
			s.Index, s.Name, s.Fallbacks, len(v.actions))
		s.ReviewNotes = append(s.ReviewNotes, note)
		c.Warnings = append(c.Warnings, candidate.Problem{Code: candidate.CodeFallbackNeeded, Message: note, Step: s.Index})
	}
	if s.Segment != candidate.Deterministic || s.Kind == trace.KindHumanApproval || s.Kind == trace.KindModelCall {
		return
	}
	var out []candidate.Check
	for _, cp := range s.Capabilities {
		out = append(out, candidate.Check{Kind: candidate.CheckCapability, Capability: cp, Tool: s.Name})
	}
	var inputs []string
	for _, a := range s.Arguments {
		if a.Kind == candidate.ArgParameter {
			inputs = append(inputs, a.Key)
		}
	}
	if len(inputs) > 0 {
		out = append(out, candidate.Check{Kind: candidate.CheckInputsBound, Inputs: inputs})
	}
	if p := candidate.ArgvProgram(s.Argv); p != "" && !strings.ContainsRune(p, '/') {
		out = append(out, candidate.Check{Kind: candidate.CheckProgramOnPath, Program: p, Tool: s.Name})
	}
	if key := branchArgument(s); key != "" {
		out = append(out, candidate.Check{Kind: candidate.CheckBranchAbsent, From: key})
	}
	if hasArgument(s, "path") && readsExisting(v) {
		out = append(out, candidate.Check{Kind: candidate.CheckFileExists, From: "path"})
	}
	out = append(out, shapeChecks(s, views)...)
	for _, ch := range out {
		if ch.Kind != candidate.CheckCapability { // preconditions() says those already
			s.Preconditions = append(s.Preconditions, ch.String())
		}
	}
	s.Checks = out
}

// fallbacks counts the examples whose action for the step carries
// fallback metadata: a run that failed there and went on through its
// fallback, or whose fallback agent performed the step.
func fallbacks(v stepView) int {
	n := 0
	for _, a := range v.actions {
		if _, ok := a.Metadata[candidate.MetaFallback]; ok {
			n++
		}
	}
	return n
}

// branchArgument returns the key of the argument naming the branch a
// step creates: git checkout -b and git switch -c, mined from shell
// commands. The traces show the command succeeded, so the branch did
// not exist yet.
func branchArgument(s *candidate.Step) string {
	var keys []string
	switch s.Name {
	case "git checkout":
		keys = []string{"b", "branch"}
	case "git switch":
		keys = []string{"c", "create"}
	default:
		return ""
	}
	for _, k := range keys {
		if hasArgument(s, k) {
			return k
		}
	}
	return ""
}

func hasArgument(s *candidate.Step, key string) bool {
	return slices.ContainsFunc(s.Arguments, func(a candidate.Argument) bool { return a.Key == key })
}

// editTools are agent tools that fail on a file that does not exist.
var editTools = []string{"Edit", "MultiEdit", "NotebookEdit", "edit_file"}

// readsExisting reports whether every example of the step read or edited
// a file that therefore existed: the built-in fs.read or fs.edit (a
// replacement needs the text it replaces), or an agent's edit tool whose
// change was kept as a file.edit. A write may create the file, so it
// shows nothing, even when an edit tool made it (Claude Code's Edit of
// an empty old_string is an fs.write).
func readsExisting(v stepView) bool {
	for _, a := range v.actions {
		tool, _ := a.Metadata["agent_tool"].(string)
		edited := a.Name == "file.edit" && slices.Contains(editTools, tool)
		if a.Name != "fs.read" && a.Name != "fs.edit" && !edited {
			return false
		}
	}
	return len(v.actions) > 0
}

// shapeChecks returns, for each earlier step a step binds to, a check
// that its result still has the members the step reads from it (the
// first key of each binding's path), with the JSON type every example
// recorded. A result without them would pass the step a wrong value or
// none; members the step does not read may change freely.
func shapeChecks(s *candidate.Step, views []stepView) []candidate.Check {
	read := map[int][]string{}
	var from []int
	for _, a := range s.Arguments {
		b := a.Binding
		if a.Kind != candidate.ArgBinding || b == nil || b.FromField != "output" {
			continue
		}
		key := topKey(b.FromPath)
		if key == "" {
			continue
		}
		if _, ok := read[b.FromStep]; !ok {
			from = append(from, b.FromStep)
		}
		if !slices.Contains(read[b.FromStep], key) {
			read[b.FromStep] = append(read[b.FromStep], key)
		}
	}
	sort.Ints(from)
	var out []candidate.Check
	for _, i := range from {
		if i < 1 || i > len(views) {
			continue
		}
		shape := map[string]string{}
		for _, key := range read[i] {
			typ := ""
			for _, a := range views[i-1].actions {
				obj, _ := a.Output.(map[string]any)
				v, ok := obj[key]
				t := candidate.JSONType(v)
				if !ok || (typ != "" && t != typ) {
					typ = ""
					break
				}
				typ = t
			}
			if typ != "" {
				shape[key] = typ
			}
		}
		if len(shape) > 0 {
			out = append(out, candidate.Check{Kind: candidate.CheckOutputShape, Step: i, Shape: shape})
		}
	}
	return out
}

// topKey returns the first member name of a JSON path such as "$.branch"
// or "$.items[0].id" ("branch", "items"), "" for "$" or an index.
func topKey(path string) string {
	rest, ok := strings.CutPrefix(path, "$.")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ".["); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
