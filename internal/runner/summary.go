package runner

import (
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/verify"
)

// Summary is a run's result as the tool reports it to a program:
// `crystallize run --json` (and resume's) prints it, and an MCP tool call
// returns it as its structured content, so a script and an agent read one
// shape. Every key is always present, lists as [] rather than null, so
// that a reader can tell "none" from "not reported".
type Summary struct {
	RunID      string `json:"run_id"`
	Workflow   string `json:"workflow"`
	Status     string `json:"status"`
	Steps      int    `json:"steps"`
	ToolCalls  int    `json:"tool_calls"`
	ModelCalls int    `json:"model_calls"`
	Approvals  int    `json:"approvals"`
	// Receipts counts the run's effect receipts; trace.json holds them.
	Receipts   int       `json:"receipts"`
	Refusals   []Refusal `json:"refusals"`
	DurationMS int64     `json:"duration_ms"`
	TokensUsed int64     `json:"tokens_used"`
	CostUSD    float64   `json:"cost_usd"`
	// Pending is the approval or decision a suspended run waits for,
	// null otherwise.
	Pending *runstate.Pending `json:"pending"`
	// Dir is the run's record directory.
	Dir             string         `json:"dir"`
	DryRun          bool           `json:"dry_run"`
	AllowUnapproved bool           `json:"allow_unapproved"`
	Error           string         `json:"error"`
	Output          any            `json:"output"`
	Verification    *verify.Report `json:"verification"`
	Commands        []Command      `json:"commands"`
	DryRunCalls     []DryRunCall   `json:"dry_run_calls"`
	Fallbacks       []Fallback     `json:"fallbacks"`
}

// Summary returns r as a Summary.
func (r *Result) Summary() Summary {
	return Summary{
		RunID: r.RunID, Workflow: r.Workflow, Status: r.Status,
		Steps: r.Steps, ToolCalls: r.ToolCalls, ModelCalls: r.ModelCalls, Approvals: r.Approvals,
		Receipts: len(r.Receipts), Refusals: orEmpty(r.Refusals), DurationMS: r.Duration.Milliseconds(),
		TokensUsed: r.TokensUsed, CostUSD: r.CostUSD, Pending: r.Pending,
		Dir: r.Dir, DryRun: r.DryRun, AllowUnapproved: r.AllowUnapproved, Error: r.Error, Output: r.Output,
		Verification: r.Verification, Commands: orEmpty(r.Commands), DryRunCalls: orEmpty(r.DryRunCalls),
		Fallbacks: orEmpty(r.Fallbacks),
	}
}

// orEmpty is s, or an empty slice for nil: JSON [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Outcome is how the run ended, for the registry of live runs; nil for a
// run that failed before it had a result (r nil).
func (r *Result) Outcome() *runstate.Outcome {
	if r == nil {
		return nil
	}
	return &runstate.Outcome{Status: r.Status, Pending: r.Pending}
}
