package runtime

import (
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"path"
	"slices"
	"strings"
)

// binding is a resolved tool name: what executes it and what it needs.
type binding struct {
	// pattern is the config key that bound the name ("" for in-process
	// and default built-ins).
	pattern string
	tool    *runconfig.ToolBinding // nil for in-process tools
	inproc  *Tool
	builtin string
	// caps is capabilities' answer once asked (capsKnown): a run
	// resolves each name once and asks at every call. Records share it
	// and never change it.
	caps      []string
	capsKnown bool
}

// capabilities returns what a call through b needs, sorted.
func (b *binding) capabilities() []string {
	if !b.capsKnown {
		b.caps, b.capsKnown = b.neededCapabilities(), true
	}
	return b.caps
}

func (b *binding) neededCapabilities() []string {
	var caps []string
	switch {
	case b.inproc != nil:
		caps = append(caps, b.inproc.Capabilities...)
		for _, se := range b.inproc.SideEffects {
			caps = append(caps, se.Capability)
		}
	case b.tool != nil:
		caps = append(caps, b.tool.Capability)
		caps = append(caps, b.tool.Capabilities...)
		for _, se := range b.tool.SideEffects {
			caps = append(caps, se.Capability)
		}
	}
	switch {
	case b.builtin == runconfig.ToolFSRead:
		caps = append(caps, "fs.read")
	case runconfig.WritesFiles(b.builtin):
		caps = append(caps, "fs.write")
	}
	caps = slices.DeleteFunc(caps, func(s string) bool { return s == "" })
	slices.Sort(caps)
	return slices.Compact(caps)
}

// kind is the action kind b's calls are recorded with.
func (b *binding) kind() trace.Kind {
	switch {
	case b.tool != nil && b.tool.Kind != "":
		return trace.Kind(b.tool.Kind)
	case b.tool != nil && b.tool.HTTP != nil:
		return trace.KindExternalAPICall
	case runconfig.WritesFiles(b.builtin):
		// As agents' file edits are normalized, so that a run's trace
		// lines up with the traces it was mined from.
		return trace.KindFileMutation
	}
	return trace.KindToolCall
}

// sideEffects returns the side effects b declares.
func (b *binding) sideEffects() []trace.SideEffect {
	var out []trace.SideEffect
	switch {
	case b.inproc != nil:
		out = append(out, b.inproc.SideEffects...)
	case b.tool != nil:
		for _, se := range b.tool.SideEffects {
			out = append(out, trace.SideEffect{Kind: se.Kind, Target: se.Target, Capability: se.Capability, Mutation: se.Mutation})
		}
	}
	return out
}

// resolve finds the binding of a tool name; see the package comment for
// the order.
func resolve(c *runconfig.Config, tools map[string]Tool, name string) (*binding, bool) {
	if t, ok := tools[name]; ok {
		return &binding{inproc: &t}, true
	}
	if c != nil {
		if b, ok := c.Tools[name]; ok {
			return &binding{pattern: name, tool: &b, builtin: b.Builtin}, true
		}
		best := ""
		for pat := range c.Tools {
			if !strings.ContainsAny(pat, "*?[") {
				continue
			}
			if ok, _ := path.Match(pat, name); ok && (len(pat) > len(best) || len(pat) == len(best) && pat < best) {
				best = pat
			}
		}
		if best != "" {
			b := c.Tools[best]
			return &binding{pattern: best, tool: &b, builtin: b.Builtin}, true
		}
	}
	if slices.Contains(runconfig.Builtins, name) {
		return &binding{builtin: name}, true
	}
	return nil, false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
