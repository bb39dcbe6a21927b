package toolexec

import (
	"context"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"path"
	"slices"
	"strings"
)                     // binding is a resolved tool name: what executes it and what it needs.
type Binding struct { // pattern is the config key that bound the name ("" for in-process
	// and default built-ins).
	Pattern string
	Tool    *runconfig.ToolBinding // nil for in-process tools
	Inproc  *Tool
	Builtin string
	// caps is capabilities' answer once asked (capsKnown): a run
	// resolves each name once and asks at every call. Records share it
	// and never change it.
	caps      []string
	capsKnown bool
}

// Capabilities returns what a call through b needs, sorted.
func (b *Binding) Capabilities() []string {
	if !b.capsKnown {
		b.caps, b.capsKnown = b.neededCapabilities(), true
	}
	return b.caps
}

func (b *Binding) neededCapabilities() []string {
	var caps []string
	switch {
	case b.Inproc != nil:
		caps = append(caps, b.Inproc.Capabilities...)
		for _, se := range b.Inproc.SideEffects {
			caps = append(caps, se.Capability)
		}
	case b.Tool != nil:
		caps = append(caps, b.Tool.Capability)
		caps = append(caps, b.Tool.Capabilities...)
		for _, se := range b.Tool.SideEffects {
			caps = append(caps, se.Capability)
		}
	}
	switch {
	case b.Builtin == runconfig.ToolFSRead:
		caps = append(caps, "fs.read")
	case runconfig.WritesFiles(b.Builtin):
		caps = append(caps, "fs.write")
	}
	caps = slices.DeleteFunc(caps, func(s string) bool { return s == "" })
	slices.Sort(caps)
	return slices.Compact(caps)
}

// Kind is the action kind b's calls are recorded with.
func (b *Binding) Kind() trace.Kind {
	switch {
	case b.Tool != nil && b.Tool.Kind != "":
		return trace.Kind(b.Tool.Kind)
	case b.Tool != nil && b.Tool.HTTP != nil:
		return trace.KindExternalAPICall
	case runconfig.WritesFiles(b.Builtin):
		// As agents' file edits are normalized, so that a run's trace
		// lines up with the traces it was mined from.
		return trace.KindFileMutation
	}
	return trace.KindToolCall
}

// SideEffects returns the side effects b declares.
func (b *Binding) SideEffects() []trace.SideEffect {
	var out []trace.SideEffect
	switch {
	case b.Inproc != nil:
		out = append(out, b.Inproc.SideEffects...)
	case b.Tool != nil:
		for _, se := range b.Tool.SideEffects {
			out = append(out, trace.SideEffect{Kind: se.Kind, Target: se.Target, Capability: se.Capability, Mutation: se.Mutation})
		}
	}
	return out
}

// Resolve finds the binding of a tool name; see the package comment for
// the order.
func Resolve(c *runconfig.Config, tools map[string]Tool, name string) (*Binding, bool) {
	if t, ok := tools[name]; ok {
		return &Binding{Inproc: &t}, true
	}
	if c != nil {
		if b, ok := c.Tools[name]; ok {
			return &Binding{Pattern: name, Tool: &b, Builtin: b.Builtin}, true
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
			return &Binding{Pattern: best, Tool: &b, Builtin: b.Builtin}, true
		}
	}
	if slices.Contains(runconfig.Builtins, name) {
		return &Binding{Builtin: name}, true
	}
	return nil, false
}

// Tool is an in-process tool, given in the runner's Options.Tools: tests and
// benchmarks use them, and the cli may in future for tools it implements.
type Tool struct {
	Func         func(ctx context.Context, args map[string]any) (any, error)
	Capabilities []string
	SideEffects  []trace.SideEffect
}
