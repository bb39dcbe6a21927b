package runtime

import "slices"

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
func builtinCapabilities(w *Workflow, cfg *Config, tools map[string]Tool) []string {
	var caps []string
	for _, name := range w.Tools {
		b, ok := resolve(cfg, tools, name)
		if !ok || b.builtin == "" || b.pattern != "" {
			continue
		}
		for _, c := range b.capabilities() {
			if !slices.Contains(caps, c) {
				caps = append(caps, c)
			}
		}
	}
	slices.Sort(caps)
	return caps
}
