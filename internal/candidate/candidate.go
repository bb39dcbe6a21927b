package candidate

import "github.com/crystallize-dev/crystallize/internal/trace"

// ReportVersion is the version of the report.json format.
const ReportVersion = 1

// Segment says whether a step can run without a model.
type Segment string

// Segments of a candidate step.
const (
	Deterministic Segment = "deterministic"
	Fuzzy         Segment = "fuzzy"
)

// Problem is a machine-readable finding: a rejection reason, a warning, an
// exclusion. Code is a stable identifier that tests and tools match on;
// Message is for people. Step is the 1-based candidate step it concerns, or
// zero. Path locates the finding in a trace or candidate when it has one.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Step    int    `json:"step,omitempty"`
	Path    string `json:"path,omitempty"`
	TraceID string `json:"trace_id,omitempty"`
}

// Problem codes emitted by mining.
const (
	CodeDivergentSideEffects      = "divergent_side_effects"
	CodeFuzzySegment              = "fuzzy_segment"
	CodeUnresolvedPolicyViolation = "unresolved_policy_violation"
	CodeNondeterministicEffect    = "nondeterministic_side_effect"
	CodeReceiptDisagreement       = "receipt_disagreement"
	CodeReceiptsMissing           = "receipts_missing"
	CodeOutputDisagreement        = "output_disagreement"
	CodeScanLimit                 = "scan_limit"
	// CodeExampleSample warns that a candidate was built from a sample
	// of its examples and the others were checked against it.
	CodeExampleSample = "example_sample"
	// CodeSampleDisagreement rejects a candidate one of whose examples
	// outside the sample disagrees with what the sample decided.
	CodeSampleDisagreement = "sample_disagreement"
	CodeNoCandidate        = "no_candidate"
	CodeSecretLiteral      = "secret_literal"
	// CodeDerivationRejected is a derived parameter whose expression a
	// held-out trace contradicted: it is a parameter again.
	CodeDerivationRejected = "derivation_rejected"
	// CodeObservationsOnly rejects a repeated sequence whose every step
	// is an observation: reading changes nothing, so there is no
	// procedure to run.
	CodeObservationsOnly = "observations_only"
	// CodeEditsWithoutContent rejects a repeated sequence of file edits
	// (and observations) that recorded only the path they changed: a
	// workflow would not know what to write.
	CodeEditsWithoutContent = "edits_without_content"
	// CodeOneToolRepeated rejects a repeated sequence whose steps all run
	// one tool (psql, then psql again with other flags): an agent using a
	// tool in a burst, not a procedure.
	CodeOneToolRepeated = "one_tool_repeated"
	// CodeFailedStep warns that a step's action failed in some or all of
	// the examples and no later attempt succeeded (Step.Failures); the
	// step is kept as the runs did it.
	CodeFailedStep = "failed_step"
)

// Candidate is one repeated procedure found in the traces, in the form
// that code generation, shadow replay and review consume.
type Candidate struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Description is what the procedure is for, in the words of a person:
	// the goal (first prompt) its agent-recorded examples share, else
	// the first example's, in full. Empty for traces whose goal is a
	// label, which names the candidate instead.
	Description       string            `json:"description,omitempty"`
	Confidence        float64           `json:"confidence"`
	ConfidenceFactors ConfidenceFactors `json:"confidence_factors"`
	Score             int               `json:"score"`
	Support           int               `json:"support"`
	ClusterKey        ClusterKey        `json:"cluster_key"`
	SequenceSignature []string          `json:"sequence_signature"`
	Parameters        []Parameter       `json:"parameters"`
	// DerivedParameters are values the workflow computes from its
	// Parameters at its start instead of asking the caller for them;
	// empty when no parameter is derived.
	DerivedParameters []DerivedParameter `json:"derived_parameters,omitempty"`
	// ArgumentsCompared says that shadow replay holds a trace to the
	// arguments of every deterministic step, not only to its signature:
	// a constant must be the action's value, a derived parameter what its
	// expression computes from the trace's own parameter values, and a
	// parameter taken at several steps the same value at each. A
	// candidate that is one recorded run (mine.Single) sets it: nothing
	// showed that any value but its declared parameters may vary, so a
	// run that passed another is not the procedure the reviewer read.
	ArgumentsCompared bool               `json:"arguments_compared,omitempty"`
	Constants         []Constant         `json:"constants"`
	Bindings          []Binding          `json:"bindings"`
	Steps             []Step             `json:"steps"`
	Examples          []Example          `json:"examples"`
	Capabilities      []string           `json:"capabilities"`
	RequiredSecrets   []string           `json:"required_secrets"`
	ApprovalPoints    []ApprovalPoint    `json:"approval_points"`
	SideEffects       []trace.SideEffect `json:"side_effects"`
	ExpectedOutputs   []ExpectedOutput   `json:"expected_outputs"`
	ExpectedReceipts  []any              `json:"expected_receipts"`
	Savings           Savings            `json:"savings"`
	Warnings          []Problem          `json:"warnings"`
	RejectionReasons  []Problem          `json:"rejection_reasons"`
	// SynthesizedSteps are the fuzzy steps whose model call a verified,
	// synthesized function replaced in a later version of the workflow,
	// with the evidence; empty for a workflow as mined.
	SynthesizedSteps []SynthesizedStep `json:"synthesized_steps,omitempty"`
	// Shadow is the comparison with the source examples and the held-out
	// traces; nil until shadow replay has run.
	Shadow *ShadowReport `json:"shadow,omitempty"`
	// Promotion is whether the candidate may be promoted and why not;
	// nil until the report is published (bundle.Promote).
	Promotion *Promotion `json:"promotion,omitempty"`
}

// Safe reports whether the candidate has no rejection reasons.
func (c *Candidate) Safe() bool { return len(c.RejectionReasons) == 0 }

// FuzzySteps counts the steps that are fuzzy segments: those that still
// need a model or a person when the workflow runs.
func (c *Candidate) FuzzySteps() int {
	n := 0
	for _, s := range c.Steps {
		if s.Segment == Fuzzy {
			n++
		}
	}
	return n
}

// ParameterNames lists the names of the candidate's parameters in order;
// never nil.
func (c *Candidate) ParameterNames() []string {
	names := make([]string, len(c.Parameters))
	for i, p := range c.Parameters {
		names[i] = p.Name
	}
	return names
}

// ConfidenceFactors are the inputs of the confidence formula, kept in the
// report so a reviewer can recompute it.
type ConfidenceFactors struct {
	// Support is examples / eligible traces.
	Support float64 `json:"support"`
	// Determinism is deterministic steps / steps.
	Determinism float64 `json:"determinism"`
	// OutputConsensus is the share of steps with recorded outputs whose
	// outputs have the same shape (members and types) in every example; 1
	// when no step recorded an output.
	OutputConsensus float64 `json:"output_consensus"`
	// ShadowPassRate is the share of shadow-compared traces that passed,
	// once shadow replay has run; confidence is multiplied by it.
	ShadowPassRate *float64 `json:"shadow_pass_rate,omitempty"`
}

// ClusterKey groups candidates that are the same procedure: the goal, the
// tool sequence, the artifact types touched and the success criteria.
type ClusterKey struct {
	Goal                 string   `json:"goal,omitempty"`
	ToolSequence         []string `json:"tool_sequence"`
	TouchedArtifactTypes []string `json:"touched_artifact_types"`
	SuccessCriteria      []string `json:"success_criteria"`
}

// Parameter is an input of the generated workflow: a field whose value
// varied across the examples.
type Parameter struct {
	// Name is the identifier used in the generated code.
	Name string `json:"name"`
	// Key is the field name the parameter was named after.
	Key string `json:"key"`
	// SourcePaths are the candidate paths that take this parameter, such as
	// "steps[1].parameters.version", in step order.
	SourcePaths []string `json:"source_paths"`
	// Examples are the distinct values seen, in example order, at most five.
	Examples []any `json:"examples"`
	// Type is the JSON type of the values: string, number, bool, object,
	// array, null or mixed.
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// DerivedParameter is a parameter whose value, in every example, an
// expression over the other parameters computed (package derive finds
// it). It keeps everything a Parameter records, so that a derivation
// that a held-out trace contradicts can be turned back into a
// parameter; step arguments name it like any parameter, and the
// generated workflow assigns it before the first step.
type DerivedParameter struct {
	Parameter
	// Expression is the Starlark expression, in the form derive.Parse
	// reads, such as "deps/" + module.split("/")[-1] + "-" + version.
	Expression string `json:"expression"`
	// Refs are the parameters the expression reads, sorted.
	Refs []string `json:"refs"`
	// SourceChecks and HeldoutChecks count the source examples and the
	// held-out traces the expression was evaluated on.
	SourceChecks  int `json:"source_checks"`
	HeldoutChecks int `json:"heldout_checks"`
	// Evidence is the expression evaluated on source examples and then
	// on held-out traces that contain the procedure, in that order: the
	// first few checks of each role and every mismatch.
	Evidence []DerivationEvidence `json:"evidence"`
}

// SynthesizedStep is the evidence for one step whose ctx.model call was
// replaced by a function a model wrote and the traces verified: who wrote
// it (model, prompt and response by hash), what it is (the function's
// name and sha256), what it was checked on, and which workflow version it
// turned into which.
type SynthesizedStep struct {
	Step           int    `json:"step"`
	Name           string `json:"name"`
	Function       string `json:"function"`
	FunctionSHA256 string `json:"function_sha256"`
	Model          string `json:"model"`
	ModelKey       string `json:"model_key"`
	PromptSHA256   string `json:"prompt_sha256"`
	ResponseSHA256 string `json:"response_sha256"`
	InputTokens    int64  `json:"input_tokens"`
	OutputTokens   int64  `json:"output_tokens"`
	// ExamplesChecked and HeldoutChecked count the recorded runs the
	// function reproduced, from the source and the held-out traces.
	ExamplesChecked int `json:"examples_checked"`
	HeldoutChecked  int `json:"heldout_checked"`
	// Properties are the metamorphic properties it satisfied.
	Properties []string `json:"properties"`
	// PreviousWorkflowSHA256 and WorkflowSHA256 are the workflow before
	// and after the replacement.
	PreviousWorkflowSHA256 string `json:"previous_workflow_sha256"`
	WorkflowSHA256         string `json:"workflow_sha256"`
}

// DerivationEvidence is one check of a derived parameter's expression.
type DerivationEvidence struct {
	TraceID string `json:"trace_id"`
	// Role is RoleSource or RoleHeldout.
	Role string `json:"role"`
	// Inputs are the values of the parameters the expression reads.
	Inputs map[string]string `json:"inputs"`
	// Want is the value the trace recorded, Got what the expression
	// computed; Match is whether they are equal.
	Want  string `json:"want"`
	Got   string `json:"got"`
	Match bool   `json:"match"`
}

// Constant is a field that had the same value in every example; the
// generated code writes it as a literal.
type Constant struct {
	Step  int    `json:"step"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// Binding records that a field of a later step always carried a value that
// an earlier step produced: the generated code reads it from that step's
// result instead of taking a parameter.
type Binding struct {
	Step     int    `json:"step"`
	Path     string `json:"path"`
	FromStep int    `json:"from_step"`
	// FromField is "output" or "observed_output".
	FromField string `json:"from_field"`
	// FromPath is a JSON path into the earlier step's result, such as
	// "$.branch" or "$.items[0].id"; "$" is the whole result.
	FromPath string `json:"from_path"`
}

// TargetExpression is the side-effect metadata key of a candidate step's
// side effect whose target a run computes from the workflow's parameters:
// its value is an expression in the form derive.Parse reads, and the
// effect's Target is that expression in braces, so a reader sees how the
// target is made. (A target that is one argument of its step is written
// "{key}" with metadata target_parameter instead.)
const TargetExpression = "target_expression"

// ArgKind says where a step argument's value comes from.
type ArgKind string

// Argument sources.
const (
	ArgConstant  ArgKind = "constant"
	ArgParameter ArgKind = "parameter"
	ArgBinding   ArgKind = "binding"
	ArgSecret    ArgKind = "secret"
)

// Argument is one keyword argument of a step's call, sorted by Key.
type Argument struct {
	Key  string  `json:"key"`
	Kind ArgKind `json:"kind"`
	// Value is the literal for a constant.
	Value any `json:"value,omitempty"`
	// Parameter is the workflow parameter name for a parameter argument.
	Parameter string `json:"parameter,omitempty"`
	// Binding is the source of a binding argument.
	Binding *Binding `json:"binding,omitempty"`
	// Secret is the logical secret id for a secret argument.
	Secret string `json:"secret,omitempty"`
}

// Step is one action of the candidate sequence.
type Step struct {
	Index           int                `json:"index"`
	Kind            trace.Kind         `json:"kind"`
	Name            string             `json:"name"`
	Segment         Segment            `json:"segment"`
	Arguments       []Argument         `json:"arguments"`
	ParameterRefs   []string           `json:"parameter_refs"`
	Preconditions   []string           `json:"preconditions"`
	SideEffects     []trace.SideEffect `json:"side_effects"`
	Capabilities    []string           `json:"capabilities"`
	RequiredSecrets []string           `json:"required_secrets"`
	Approval        *trace.Approval    `json:"approval,omitempty"`
	ExpectedOutput  any                `json:"expected_output,omitempty"`
	ReviewNotes     []string           `json:"review_notes"`
	// ResultUsed is true when a later step binds to this step's result.
	ResultUsed bool `json:"result_used,omitempty"`
	// Argv is the argv template of a step mined from a shell command, the
	// same in every example: its {key} placeholders name the step's
	// Arguments by Key (see ArgvPlaceholders), and the runtime runs it as
	// argv, never through a shell. Empty when the step is not a command
	// or its examples ran different templates.
	Argv []string `json:"argv,omitempty"`
	// Options are the alternatives a person chose between at a
	// human_approval step, in order, the same in every example (an
	// agent's question to its user, metadata options); the workflow asks
	// for a choice among them (ctx.request_decision) instead of an
	// approval. Empty for any other step.
	Options []string `json:"options,omitempty"`
	// PromptTemplate, when the examples asked their approver different
	// questions ("Publish 0.1.1 to crates.io?", "Publish 0.1.2 …"), is
	// how the workflow builds this run's question: literal text and the
	// values of earlier (or this) step's arguments, concatenated, so the
	// approver sees the values of the run being approved and not those of
	// the first example. Empty when every example asked the same.
	PromptTemplate []PromptPart `json:"prompt_template,omitempty"`
	// Retries is the number of failed attempts of this step, over all
	// examples, that mining folded into the attempt that succeeded.
	Retries int `json:"retries,omitempty"`
	// Failures is the number of examples whose action for this step
	// failed with no later attempt succeeding (see FoldRetries): the step
	// is kept as those runs did it. Shadow replay accepts a failed action
	// for a step of a gapped candidate only when it failed in an example.
	Failures int `json:"failures,omitempty"`
	// Checks are the preconditions the runtime evaluates before the
	// step, where the traces show them (see Check); Preconditions says
	// them, and what cannot be checked, in prose.
	Checks []Check `json:"checks,omitempty"`
	// Fallbacks counts the examples, runs of the workflow mined again,
	// in which this step needed the fallback (MetaFallback).
	Fallbacks int `json:"fallbacks,omitempty"`
}

// Example is one occurrence of the candidate sequence in a source trace.
type Example struct {
	TraceID    string   `json:"trace_id"`
	Source     string   `json:"source,omitempty"`
	SourceHash string   `json:"source_hash"`
	StartIndex int      `json:"start_index"`
	ActionIDs  []string `json:"action_ids"`
	// Positions are the indexes in the trace's actions of the actions the
	// steps matched, in step order, when other actions lie between them
	// (gapped mining); empty for a contiguous match, which starts at
	// StartIndex.
	Positions []int `json:"positions,omitempty"`
	// Retries, when any step was retried, is the number of failed attempts
	// folded into each step's matched action, in step order.
	Retries []int `json:"retries,omitempty"`
}

// PromptPart is one piece of an approval prompt template: literal Text,
// or the value of the argument Key of step Step (1-based, at most the
// approval's own step), or the workflow parameter Parameter. Exactly one
// of Text, Step with Key, and Parameter is set.
type PromptPart struct {
	Text      string `json:"text,omitempty"`
	Step      int    `json:"step,omitempty"`
	Key       string `json:"key,omitempty"`
	Parameter string `json:"parameter,omitempty"`
}

// ApprovalPoint is a human approval boundary inside the candidate.
type ApprovalPoint struct {
	Step     int    `json:"step"`
	Boundary string `json:"boundary"`
	Prompt   string `json:"prompt,omitempty"`
	Required bool   `json:"required"`
}

// ExpectedOutput is the output every example of a step agreed on.
type ExpectedOutput struct {
	Step   int `json:"step"`
	Output any `json:"output"`
}

// Savings estimates what running the candidate as code saves compared with
// the agent runs it was mined from. The top-level fields are totals over the
// examples; PerRun averages them over Runs.
type Savings struct {
	ModelCallsAvoided       int64   `json:"model_calls_avoided"`
	InputTokensAvoided      int64   `json:"input_tokens_avoided"`
	OutputTokensAvoided     int64   `json:"output_tokens_avoided"`
	EstimatedCostUSDAvoided float64 `json:"estimated_cost_usd_avoided"`
	WallMSAvoided           int64   `json:"wall_ms_avoided"`
	// CPURuntimeCostUSD is what the workflow still costs to run: the
	// dollars of the model calls of its fuzzy steps, as the traces
	// recorded them (or the price table prices their tokens). The CPU
	// time of the interpreter and the tools has no price in a trace and
	// is not priced; RuntimeMS is that time instead. 0 for a workflow
	// without a fuzzy step.
	CPURuntimeCostUSD float64 `json:"cpu_runtime_cost_usd"`
	// RuntimeMS is the time the workflow's steps took in the traces: the
	// recorded duration_ms of each step, or for a fuzzy step its model
	// wall time when longer. 0 when the traces record no durations.
	RuntimeMS           int64  `json:"runtime_ms"`
	RemainingModelCalls int64  `json:"remaining_model_calls"`
	Runs                int    `json:"runs"`
	PerRun              PerRun `json:"per_run"`
	// UnpricedModels are the models whose tokens (avoided, or still spent
	// by fuzzy steps) have no price: the log gave no cost and the price
	// table (price.Table) does not know them, so the dollars above leave
	// them out. "" stands for tokens of no named model. Sorted; absent
	// when every token was priced.
	UnpricedModels []string `json:"unpriced_models,omitempty"`
}

// PerRun is Savings averaged over the example runs.
type PerRun struct {
	ModelCallsAvoided       float64 `json:"model_calls_avoided"`
	InputTokensAvoided      float64 `json:"input_tokens_avoided"`
	OutputTokensAvoided     float64 `json:"output_tokens_avoided"`
	EstimatedCostUSDAvoided float64 `json:"estimated_cost_usd_avoided"`
	WallMSAvoided           float64 `json:"wall_ms_avoided"`
	RemainingModelCalls     float64 `json:"remaining_model_calls"`
	CPURuntimeCostUSD       float64 `json:"cpu_runtime_cost_usd"`
	RuntimeMS               float64 `json:"runtime_ms"`
}
