package candidate

// This file holds the result types of shadow comparison (package replay):
// what a candidate's dry comparison against its source and held-out traces
// found. They live here, next to the IR, because the report, bundles and
// the CLI carry them without depending on the replay package.

// ReplayTraceSchema is the schema version of a replay-oracle comparison,
// the interchange name the original project gives it.
const ReplayTraceSchema = "harn.orchestration.replay_trace.v1"

// Roles of a shadow-compared trace.
const (
	// RoleSource is a trace the candidate was mined from (one of its
	// Examples).
	RoleSource = "source"
	// RoleHeldout is a trace kept out of mining to test the candidate.
	RoleHeldout = "heldout"
)

// Statuses of a shadow-compared trace.
const (
	StatusPass = "pass"
	StatusFail = "fail"
	// StatusUnmatched is a held-out trace that does not contain the
	// procedure. It is listed, never dropped, but not compared.
	StatusUnmatched = "unmatched"
)

// Kinds of alignment moves, in the vocabulary of process-mining alignments.
const (
	// MoveSync is a candidate step and a trace action with the same
	// signature.
	MoveSync = "sync"
	// MoveLog is a trace action the candidate does not have.
	MoveLog = "log"
	// MoveModel is a candidate step the trace does not have.
	MoveModel = "model"
)

// ExpectMatch is the only replay expectation shadow comparison uses: the
// second run must match the first.
const ExpectMatch = "match"

// Problem codes emitted by shadow comparison and the replay oracle.
const (
	// CodeSignatureMismatch is a non-synchronous alignment move: a step
	// missing from the trace or an extra action inside the procedure.
	CodeSignatureMismatch = "signature_mismatch"
	// CodeSideEffectsDiffer is a step whose trace action requested other
	// side effects than the candidate declares.
	CodeSideEffectsDiffer = "side_effects_differ"
	// CodeApprovalDiffers is a step whose approval boundary (required or
	// not) differs between candidate and trace.
	CodeApprovalDiffers = "approval_differs"
	// CodeOutputDiffers is a step with an expected output that the trace
	// action did not produce.
	CodeOutputDiffers = "output_differs"
	// CodeArgumentDiffers is a step of a candidate that compares
	// arguments (Candidate.ArgumentsCompared) whose trace action passed
	// another value than the candidate would.
	CodeArgumentDiffers = "argument_differs"
	// CodeReceiptDrift is a replay-oracle divergence between the trace's
	// replay run and the candidate's expected receipts.
	CodeReceiptDrift = "receipt_drift"
	// CodeUnmatched is a trace that does not contain the procedure.
	CodeUnmatched = "unmatched"
	// CodeUnexpectedFailure is a failed action, which no later attempt
	// retried, aligned with a step that succeeded in every example.
	CodeUnexpectedFailure = "unexpected_failure"
	// CodeExampleMissing is a candidate example whose trace (by id and
	// source hash) was not among the source traces given to Shadow.
	CodeExampleMissing = "example_missing"
	// CodeShadowFailed is a report failure: a compared trace that failed.
	CodeShadowFailed = "shadow_failed"
	// CodeHeldoutUnmatched is a report failure: a held-out trace that does
	// not contain the procedure.
	CodeHeldoutUnmatched = "heldout_unmatched"
	// CodeAllowlistUnused is an allowlist rule that matched nothing in
	// either run: usually a typo that would otherwise go unnoticed.
	CodeAllowlistUnused = "allowlist_unused"
	// CodeAllowlistInvalid is an allowlist rule with a malformed path or
	// without a reason; it is not applied.
	CodeAllowlistInvalid = "allowlist_invalid"
)

// ShadowReport is the outcome of comparing one candidate, without running
// anything, against its source examples and the held-out traces.
type ShadowReport struct {
	// Pass is true when at least one trace was compared and every compared
	// trace passed. Unmatched held-out traces are not compared, so they do
	// not make Pass false; they are listed in Failures all the same.
	Pass bool `json:"pass"`
	// ComparedTraces counts the traces with status pass or fail.
	ComparedTraces int `json:"compared_traces"`
	// Failures has one entry per failed or unmatched trace, in Traces
	// order, with code CodeShadowFailed or CodeHeldoutUnmatched.
	Failures []Problem `json:"failures"`
	// Traces lists the source examples in the candidate's Examples order,
	// then the held-out traces in the order given. Of a candidate with
	// more examples than shadow replay lists (replay.DefaultListPassing,
	// 1,000), it lists every source example that failed and, of those that
	// passed, only the ones at an evenly spaced selection of the examples;
	// the other passing ones are counted in PassedNotListed.
	Traces []ShadowTrace `json:"traces"`
	// PassedNotListed counts the source examples that were compared and
	// passed but are not listed in Traces. They count in ComparedTraces
	// and in Pass like the listed ones.
	PassedNotListed int `json:"passed_not_listed,omitempty"`
}

// ShadowTrace is the comparison of the candidate with one trace.
type ShadowTrace struct {
	TraceID    string `json:"trace_id"`
	SourceHash string `json:"source_hash"`
	// Role is RoleSource or RoleHeldout.
	Role string `json:"role"`
	// Status is StatusPass, StatusFail or StatusUnmatched.
	Status string `json:"status"`
	// Fitness is 1 - (log moves + model moves) / (candidate steps + trace
	// actions in the aligned region), in [0, 1]; 1 is a perfect match.
	Fitness float64 `json:"fitness"`
	// FirstDivergentStep is the 1-based candidate step of the first
	// non-synchronous move or detail, or 0 when there is none.
	FirstDivergentStep int `json:"first_divergent_step"`
	// Alignment is the best alignment of the candidate's steps with the
	// trace's actions, in order.
	Alignment []Move `json:"alignment"`
	// Interleaved counts the actions inside the aligned region that a
	// candidate mined with gaps tolerates between its steps and leaves out
	// of Alignment and Fitness: observations, failed attempts, the edits
	// of a retry, and actions without side effects.
	Interleaved int `json:"interleaved,omitempty"`
	// Details lists every difference found: alignment mismatches in
	// alignment order or, for a perfect alignment, step comparisons in step
	// order; receipt drift comes last.
	Details []Problem `json:"details"`
	// ComparedReceipts is the number of effect-receipt positions the
	// replay oracle compared: the larger of the trace's and the
	// candidate's receipt counts, 0 when the oracle did not run.
	ComparedReceipts int `json:"compared_receipts"`
	// ReplayOracle is the replay comparison, when the trace carries a
	// replay run or the candidate expects receipts.
	ReplayOracle *OracleReport `json:"replay_oracle,omitempty"`
}

// Move is one move of an alignment between candidate steps and trace
// actions.
type Move struct {
	// Kind is MoveSync, MoveLog or MoveModel.
	Kind string `json:"kind"`
	// Step is the 1-based candidate step, 0 for a log move.
	Step int `json:"step"`
	// ActionIndex is the 0-based index of the action in the trace, -1 for
	// a model move.
	ActionIndex int `json:"action_index"`
	// ActionID is the trace action's id, empty for a model move.
	ActionID string `json:"action_id"`
	// Signature is the step's signature for sync and model moves and the
	// action's for log moves.
	Signature string `json:"signature"`
}

// OracleReport is the result of a replay-oracle comparison of two runs
// (harn.orchestration.replay_trace.v1): whether the second run matches the
// first once the allowlisted per-execution fields are masked.
type OracleReport struct {
	// SchemaVersion is ReplayTraceSchema.
	SchemaVersion string `json:"schema_version"`
	Name          string `json:"name"`
	// Expectation is ExpectMatch.
	Expectation string `json:"expectation"`
	Passed      bool   `json:"passed"`
	// Divergence is the first difference in document order, or nil.
	Divergence *Divergence `json:"divergence"`
	// Warnings are allowlist rules that are malformed or matched nothing,
	// in rule order.
	Warnings []Problem `json:"warnings"`
	// FirstRunCounts and SecondRunCounts give the number of elements of
	// every top-level array member of each run.
	FirstRunCounts  map[string]int `json:"first_run_counts"`
	SecondRunCounts map[string]int `json:"second_run_counts"`
}

// Divergence is the first place two replay runs differ.
type Divergence struct {
	// Path is a JSON pointer, such as "/effect_receipts/0/sha256"; "" is
	// the whole run.
	Path string `json:"path"`
	// Left and Right are the values in the first and second run; nil for
	// the side that lacks the member or element.
	Left    any    `json:"left"`
	Right   any    `json:"right"`
	Message string `json:"message"`
}
