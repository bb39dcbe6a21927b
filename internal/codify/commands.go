package codify

import (
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Shell commands.
//
// A session log records a tool call as "`tool args`", which for an agent
// working in a terminal is a shell command: `git commit -m "x"`. It is
// read the way an agent's Bash call is (normalize.Rules.Actions): the
// action is named by its command head ("git commit"), its flags and
// operands are named parameters (message, paths, branch…), metadata argv
// is the argv template and the step needs exec:git. The workflow then
// runs the command with ctx.exec, as a workflow mined from agent sessions
// does, and needs no binding. Reading "git" as a tool with positional
// arguments arg1, arg2 would write ctx.tool("git", arg1 = "commit", …),
// which declares no capability and does not run without a binding that
// nobody wrote.
//
// Three kinds of call keep the tool they name: a step crystallize run
// wrote (its phase names the tool, the command line is only how it ran),
// a tool the project's configuration binds (the binding is the user's
// word for what the name runs), and a name that is no program: a dotted
// tool name such as fs.write or repo.commit, or an MCP tool
// (mcp__server__tool).

// normalizeCommands replaces every action of t that records a shell
// command with the actions rules make of it, keeping what the session
// said of the call: its phase metadata, an approval boundary and a
// recovery mark on the first action, its result and declared side
// effects on the last.
func normalizeCommands(t *trace.Trace, rules *normalize.Rules, cfg *runconfig.Config) {
	var out []trace.Action
	for _, a := range t.Actions {
		cmd, ok := shellCommand(a, cfg)
		if !ok {
			out = append(out, a)
			continue
		}
		md := make(map[string]any, len(a.Metadata))
		for k, v := range a.Metadata {
			md[k] = v
		}
		acts := rules.Actions(normalize.Call{
			ID:       a.ID,
			Tool:     "shell",
			Args:     map[string]any{"command": cmd},
			Result:   a.Output,
			Metadata: md,
		})
		acts[0].Approval = a.Approval
		acts[0].Fuzzy = a.Fuzzy
		last := &acts[len(acts)-1]
		last.SideEffects = append(last.SideEffects, a.SideEffects...)
		out = append(out, acts...)
	}
	t.Actions = out
}

// shellCommand returns the command line a session's tool call ran, and
// whether it is one to read as a shell command (see the comment at the
// top of this file).
func shellCommand(a trace.Action, cfg *runconfig.Config) (string, bool) {
	if a.Kind != trace.KindToolCall || a.Metadata["command"] != nil {
		return "", false
	}
	if cfg != nil {
		if _, bound := cfg.Tools[a.Name]; bound {
			return "", false
		}
	}
	if strings.Contains(a.Name, "__") || dottedName(a.Name) {
		return "", false
	}
	args, _ := a.Metadata["args"].(string)
	if args == "" {
		return a.Name, true
	}
	return a.Name + " " + args, true
}

// dottedName reports whether name is a tool name made of identifiers
// joined by dots (fs.write, repo.commit), not a program's.
func dottedName(name string) bool {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" || p[0] >= '0' && p[0] <= '9' {
			return false
		}
	}
	return true
}

// dropObservations removes the observations of the one session a
// workflow is made of (every other action is a step of it): the greps
// and reads the agent looked around with are not what the procedure
// does, and mining several sessions skips them the same way. An
// observation the session made an approval boundary or a recovery stays,
// since the step it marks would otherwise lose the mark; and so do all of
// them when the session did nothing else.
func dropObservations(t *trace.Trace) {
	kept := slices.DeleteFunc(slices.Clone(t.Actions), func(a trace.Action) bool {
		return a.Kind == trace.KindObservation && a.Approval == nil && a.Fuzzy == nil
	})
	if len(kept) > 0 {
		t.Actions = kept
	}
}
