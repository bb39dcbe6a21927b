package trace

import "encoding/json"

// SchemaVersion is the crystallization trace format version this package
// reads and writes. A trace without a version field is taken as version 1.
const SchemaVersion = 1

// MetaPrompts is the trace metadata member that lists what the user typed
// during an agent session, in order: [{"timestamp": …, "text": …}]. A
// session often does several things, and its first prompt (the goal) says
// nothing of a procedure done at its end: the prompt typed last before the
// procedure's first step is the request it answered.
const MetaPrompts = "prompts"

// Kind is the type of an action. The named constants are the kinds the
// pipeline treats specially; any other string is kept as it was written.
type Kind string

// Action kinds with a meaning to mining, code generation and the runtime.
const (
	KindToolCall        Kind = "tool_call"
	KindModelCall       Kind = "model_call"
	KindHumanApproval   Kind = "human_approval"
	KindFileMutation    Kind = "file_mutation"
	KindExternalAPICall Kind = "external_api_call"
	KindReceiptWrite    Kind = "receipt_write"
	KindStage           Kind = "stage"
	// KindObservation is a read-only action (reading a file, a search, a
	// listing, a status query, a todo-list update): mining neither
	// requires one in a procedure nor lets one break a match.
	KindObservation Kind = "observation"
)

// Trace is one recorded run of an agent: an ordered list of actions plus the
// provenance and replay data that came with it.
//
// JSON values whose structure the pipeline does not interpret (parameters,
// inputs, outputs, metadata, replay runs) are kept as the generic values
// encoding/json produces with UseNumber: map[string]any, []any, string,
// json.Number, bool and nil. Fields the format does not name are kept in
// Extra so that a trace survives a decode/encode round trip.
type Trace struct {
	Version         int             `json:"version"`
	ID              string          `json:"id"`
	Source          string          `json:"source,omitempty"`
	SourceHash      string          `json:"source_hash,omitempty"`
	WorkflowID      string          `json:"workflow_id,omitempty"`
	StartedAt       string          `json:"started_at,omitempty"`
	FinishedAt      string          `json:"finished_at,omitempty"`
	Flow            *Flow           `json:"flow,omitempty"`
	Actions         []Action        `json:"actions"`
	ReplayRun       map[string]any  `json:"replay_run,omitempty"`
	ReplayAllowlist []AllowlistRule `json:"replay_allowlist,omitempty"`
	Usage           *Usage          `json:"usage,omitempty"`
	Metadata        map[string]any  `json:"metadata,omitempty"`
	Extra           map[string]any  `json:"-"`

	// Origin says where the trace was read from. It is not part of the
	// JSON form.
	Origin Origin `json:"-"`
}

// Origin locates a trace in its input: the file path (relative to the
// directory it was loaded from, slash-separated) and, for JSON Lines files,
// the 1-based line number.
type Origin struct {
	Path string
	Line int
}

// String returns "path" or "path:line".
func (o Origin) String() string {
	if o.Line > 0 {
		return o.Path + ":" + itoa(o.Line)
	}
	return o.Path
}

// Flow holds optional provenance references into the system that recorded
// the run.
type Flow struct {
	TraceID       string         `json:"trace_id,omitempty"`
	AgentRunID    string         `json:"agent_run_id,omitempty"`
	TranscriptRef string         `json:"transcript_ref,omitempty"`
	AtomIDs       []string       `json:"atom_ids,omitempty"`
	SliceIDs      []string       `json:"slice_ids,omitempty"`
	Extra         map[string]any `json:"-"`
}

// Action is one step of a trace.
type Action struct {
	ID              string         `json:"id"`
	Kind            Kind           `json:"kind"`
	Name            string         `json:"name"`
	Timestamp       string         `json:"timestamp,omitempty"`
	Parameters      map[string]any `json:"parameters,omitempty"`
	Inputs          any            `json:"inputs,omitempty"`
	Output          any            `json:"output,omitempty"`
	ObservedOutput  any            `json:"observed_output,omitempty"`
	Capabilities    []string       `json:"capabilities,omitempty"`
	SideEffects     []SideEffect   `json:"side_effects,omitempty"`
	RequiredSecrets []string       `json:"required_secrets,omitempty"`
	Approval        *Approval      `json:"approval,omitempty"`
	Cost            *Cost          `json:"cost,omitempty"`
	DurationMS      *int64         `json:"duration_ms,omitempty"`
	Deterministic   *bool          `json:"deterministic,omitempty"`
	Fuzzy           *bool          `json:"fuzzy,omitempty"`
	Metadata        map[string]any `json:"metadata,omitempty"`
	Extra           map[string]any `json:"-"`
}

// SideEffect is a change an action makes outside the agent: a file write, a
// git ref, a published package, a receipt.
type SideEffect struct {
	Kind       string         `json:"kind"`
	Target     string         `json:"target"`
	Capability string         `json:"capability,omitempty"`
	Mutation   string         `json:"mutation,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Extra      map[string]any `json:"-"`
}

// Approval marks a human approval boundary on an action.
type Approval struct {
	Prompt   string         `json:"prompt,omitempty"`
	Approver string         `json:"approver,omitempty"`
	Required bool           `json:"required"`
	Boundary string         `json:"boundary,omitempty"`
	Extra    map[string]any `json:"-"`
}

// Cost is what an action spent on models and wall-clock time.
type Cost struct {
	Model        string `json:"model,omitempty"`
	ModelCalls   int64  `json:"model_calls"`
	InputTokens  int64  `json:"input_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	// CacheReadTokens and CacheWriteTokens are the part of InputTokens
	// read from and written to the provider's prompt cache, which are
	// priced apart from the rest (a cache read costs a tenth of an input
	// token at most providers). Agents' logs give them (Claude Code's
	// cache_read_input_tokens and cache_creation_input_tokens); zero when
	// unknown.
	CacheReadTokens  int64          `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64          `json:"cache_write_tokens,omitempty"`
	TotalCostUSD     float64        `json:"total_cost_usd"`
	WallMS           int64          `json:"wall_ms"`
	Extra            map[string]any `json:"-"`
}

// Usage is the total model usage of a trace.
type Usage struct {
	ModelCalls   int64          `json:"model_calls"`
	InputTokens  int64          `json:"input_tokens"`
	OutputTokens int64          `json:"output_tokens"`
	TotalCostUSD float64        `json:"total_cost_usd"`
	WallMS       int64          `json:"wall_ms"`
	Extra        map[string]any `json:"-"`
}

// AllowlistRule names a JSON-pointer path (with "*" matching every array
// element or object member) whose value may differ between two executions
// of the same run, and why.
type AllowlistRule struct {
	Path        string         `json:"path"`
	Reason      string         `json:"reason"`
	Replacement any            `json:"replacement,omitempty"`
	Extra       map[string]any `json:"-"`
}

var _ = json.Number("")

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
