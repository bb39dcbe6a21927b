package runner

import (
	"slices"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ExecGrants sums up what the commands of ExecCommands need: the
// capabilities of the commands no tool binding takes over (needed), those
// of them the config does not grant (missing), and those the workflow's
// header does not declare (undeclared), each sorted and without repeats.
// It is the check a real run makes before its first step, for a caller
// that reports it before running.
func ExecGrants(commands []ExecCommand) (needed, missing, undeclared []string) {
	needed, missing, undeclared = []string{}, []string{}, []string{}
	add := func(list []string, s string) []string {
		if slices.Contains(list, s) {
			return list
		}
		return append(list, s)
	}
	for _, c := range commands {
		switch {
		case c.Binding != "":
			continue
		case !c.Declared:
			undeclared = add(undeclared, c.Capability)
		case !c.Granted:
			missing = add(missing, c.Capability)
		}
		needed = add(needed, c.Capability)
	}
	slices.Sort(needed)
	slices.Sort(missing)
	slices.Sort(undeclared)
	return needed, missing, undeclared
}

// builtinCapabilities returns the capabilities the built-in tools w calls
// by a literal name need, sorted, when no binding or in-process tool
// takes the name: what the workflow needs beyond its commands to run
// with no configuration but grants.
func builtinCapabilities(w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool) []string {
	var caps []string
	for _, name := range w.Tools {
		b, ok := toolexec.Resolve(cfg, tools, name)
		if !ok || b.Builtin == "" || b.Pattern != "" {
			continue
		}
		for _, c := range b.Capabilities() {
			if !slices.Contains(caps, c) {
				caps = append(caps, c)
			}
		}
	}
	slices.Sort(caps)
	return caps
}

// boundToolCapabilities returns, for each tool w may call by a literal
// name (ctx.tool, an agent's tools list, a worker preset's tools) that a
// binding or an in-process tool takes, the capabilities a call needs, as
// the check before the call finds them: the binding's, else those of
// every candidate step of that name. Built-ins no binding takes are left
// to builtinCapabilities. A run checks them all before its first step,
// so that a refusal does not come after a human already approved a gate
// on the way to the call.
func boundToolCapabilities(w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool) (names []string, caps map[string][]string) {
	caps = map[string][]string{}
	var all []string
	all = append(all, w.Tools...)
	if cfg != nil {
		for _, worker := range w.Workers {
			all = append(all, cfg.Workers[worker].Tools...)
		}
	}
	for _, name := range all {
		if _, done := caps[name]; done {
			continue
		}
		b, ok := toolexec.Resolve(cfg, tools, name)
		if !ok || b.Builtin != "" && b.Pattern == "" {
			continue
		}
		need := slices.Clone(b.Capabilities())
		if len(need) == 0 && b.Builtin == "" && w.Candidate != nil {
			for _, s := range w.Candidate.Steps {
				if s.Name != name || s.Kind == trace.KindModelCall {
					continue
				}
				need = append(need, s.Capabilities...)
				for _, se := range s.SideEffects {
					need = append(need, se.Capability)
				}
			}
		}
		need = slices.DeleteFunc(need, func(c string) bool { return c == "" })
		slices.Sort(need)
		caps[name] = slices.Compact(need)
		names = append(names, name)
	}
	return names, caps
}
