// Package normalize turns the tool calls that agents record (Claude Code's
// Bash and Edit, Codex's shell and apply_patch, an OpenTelemetry
// execute_tool span) into the trace model's one vocabulary, so the same
// procedure mines the same way whichever agent ran it.
//
// The invariant: one Call gives the same actions whichever agent recorded
// it, and every decision is made by one table (Rules) that users extend in
// crystallize.toml.
package normalize

import (
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Call is one tool call as an agent recorded it, before normalization.
type Call struct {
	// ID is the agent's id for the call (tool_use id, call_id, span's
	// gen_ai.tool.call.id).
	ID string
	// Tool is the agent's name for the tool: "Bash", "shell", "Edit",
	// "apply_patch", "run_shell", an MCP tool name.
	Tool string
	// Args are the call's arguments as recorded.
	Args map[string]any
	// Result is what the tool returned: text or a structured value.
	Result any
	// IsError is true when the agent recorded the call as failed.
	IsError bool
	// ExitCode is the exit status of a shell command, when recorded.
	ExitCode *int
	// Timestamp is when the call started (RFC 3339), if known.
	Timestamp string
	// DurationMS is how long the call took, if known.
	DurationMS *int64
	// Cost is the share of the model turn that produced this call.
	Cost *trace.Cost
	// Metadata is agent-specific provenance (sidechain, turn, span id),
	// copied into every action the call becomes.
	Metadata map[string]any
}

// Rules is the normalization table.
type Rules struct{}

// Default returns the built-in table.
func Default() *Rules { return &Rules{} }

// Actions converts c into one or more actions (a compound shell command
// becomes several). Action ids are derived from c.ID.
func (r *Rules) Actions(c Call) []trace.Action {
	a := trace.Action{
		ID:         c.ID,
		Kind:       trace.KindToolCall,
		Name:       c.Tool,
		Timestamp:  c.Timestamp,
		Parameters: c.Args,
		Output:     c.Result,
		DurationMS: c.DurationMS,
		Cost:       c.Cost,
		Metadata:   c.Metadata,
	}
	return []trace.Action{a}
}
