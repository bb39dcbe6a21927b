package candidate

import "errors"

// Report is report.json: what a mining run read, what it left out and why,
// and every candidate it found, ranked.
type Report struct {
	Version             int           `json:"version"`
	GeneratedAt         string        `json:"generated_at"`
	SourceTraceCount    int           `json:"source_trace_count"`
	ExcludedTraceCount  int           `json:"excluded_trace_count"`
	ExcludedTraces      []Exclusion   `json:"excluded_traces"`
	SkippedFiles        []SkippedFile `json:"skipped_files"`
	SelectedCandidateID *string       `json:"selected_candidate_id"`
	Candidates          []Candidate   `json:"candidates"`
	RejectedCandidates  []Candidate   `json:"rejected_candidates"`
	Warnings            []Problem     `json:"warnings"`
	// SkillCandidates are the SKILL.md projections of the safe candidates
	// whose replay gate passed; RejectedSkillCandidates those of every
	// other candidate, safe or not, with the gate's reasons. Publishing a
	// report fills both (empty, not null, when nothing is in one), so a
	// reviewer reading report.json alone sees every candidate's skill,
	// not only the selected one's; both are null in a report that was
	// never published.
	SkillCandidates         []SkillCandidate `json:"skill_candidates"`
	RejectedSkillCandidates []SkillCandidate `json:"rejected_skill_candidates"`
	InputFormat             InputFormat      `json:"input_format"`
	Mining                  MiningSummary    `json:"mining"`
	WorkflowPath            string           `json:"workflow_path,omitempty"`
	ShadowSources           []string         `json:"shadow_sources,omitempty"`
	// Holdout lists the eligible traces of the mined corpus itself that
	// were held out of mining and shadow-replayed as held-out evidence
	// (mine --holdout), and why; nil when none were.
	Holdout *Holdout `json:"holdout,omitempty"`
	// SegmentSummary and RecoverySummary are written by importers of one
	// reviewed run (crystallize ingest); mining leaves them out.
	SegmentSummary  *SegmentSummary  `json:"segment_summary,omitempty"`
	RecoverySummary *RecoverySummary `json:"recovery_summary,omitempty"`
}

// SkillCandidate is one candidate's skill: the SKILL.md the replay gate
// decided on, what would make an agent pick it (Activation), and the
// gate's receipt.
type SkillCandidate struct {
	SkillID             string `json:"skill_id"`
	Name                string `json:"name"`
	WorkflowCandidateID string `json:"workflow_candidate_id"`
	// Decision is the gate's: "accepted" or "rejected".
	Decision         string    `json:"decision"`
	RejectionReasons []Problem `json:"rejection_reasons"`
	// SkillMD is the SKILL.md text, rendered for every safe candidate
	// whatever the gate decided, so that a rejected skill can be reviewed
	// too; empty for a rejected candidate, which has no skill to read.
	SkillMD string `json:"skill_md,omitempty"`
	// Activation is the SKILL.md frontmatter an agent matches a task
	// against; nil when SkillMD is empty.
	Activation *SkillActivation `json:"activation,omitempty"`
	// Gate is the replay-gate receipt (skill.Gate), as the bundle writes
	// it to gate.json.
	Gate any `json:"gate"`
}

// SkillActivation is what decides when an agent uses a skill: its name,
// description, short title, when to use it, the tools it may call and the
// paths it touches (empty when none were inferred).
type SkillActivation struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Short        string   `json:"short"`
	WhenToUse    string   `json:"when_to_use"`
	AllowedTools []string `json:"allowed_tools"`
	Paths        []string `json:"paths"`
}

// Holdout is the part of a corpus held out of mining: the most recent
// eligible traces, compared with every candidate as --shadow-from traces
// are.
type Holdout struct {
	// Mode is the --holdout value that chose the traces: "auto", or the
	// count or fraction given.
	Mode string `json:"mode"`
	// Reason says in words which traces were held out and why.
	Reason string `json:"reason"`
	// Order is how "most recent" was decided: "started_at" (the traces'
	// start times) or "file_order" (no trace had a start time: the last
	// ones in corpus order).
	Order string `json:"order"`
	// Traces are the held-out traces, in corpus order.
	Traces []HeldoutTrace `json:"traces"`
}

// HeldoutTrace is one trace of a Holdout.
type HeldoutTrace struct {
	TraceID string `json:"trace_id"`
	// StartedAt is the trace's start time, as recorded; empty when it
	// has none.
	StartedAt string `json:"started_at,omitempty"`
}

// SegmentSummary is the split of an ingested run into what can run as code
// and what needs a person, in plain words for a reviewer.
type SegmentSummary struct {
	DeterministicCount  int      `json:"deterministic_count"`
	AgenticCount        int      `json:"agentic_count"`
	SafeToAutomate      []string `json:"safe_to_automate"`
	RequiresHumanReview []string `json:"requires_human_review"`
	PlainLanguage       string   `json:"plain_language"`
}

// RecoverySummary records how an ingested run met its failures: how many
// commands failed (a failure recorded twice counts once), how many
// recovery-advice runs a model made, whether a failure was fed into one,
// which steps failed, and how recovery is represented in the workflow.
type RecoverySummary struct {
	ShellFailuresSeen    int      `json:"shell_failures_seen"`
	RecoveryAdviceRuns   int      `json:"recovery_advice_runs"`
	FailuresFedIntoAgent bool     `json:"failures_fed_into_agent"`
	FailedSteps          []string `json:"failed_steps"`
	Representation       string   `json:"representation"`
}

// ErrNoCandidate is the outcome of a report that selected no candidate:
// nothing found was safe to propose. The report, and a workflow that
// says so, are still written.
var ErrNoCandidate = errors.New("no safe crystallization candidate")

// Err returns ErrNoCandidate when r selected no candidate, else nil: a
// run whose report selects nothing has failed, whatever else it wrote.
func (r *Report) Err() error {
	if r.Selected() == nil {
		return ErrNoCandidate
	}
	return nil
}

// Selected returns the selected candidate, or nil.
func (r *Report) Selected() *Candidate {
	if r.SelectedCandidateID == nil {
		return nil
	}
	for i := range r.Candidates {
		if r.Candidates[i].ID == *r.SelectedCandidateID {
			return &r.Candidates[i]
		}
	}
	return nil
}

// Find returns the candidate with the given id, selected or rejected, or
// nil.
func (r *Report) Find(id string) *Candidate {
	for i := range r.Candidates {
		if r.Candidates[i].ID == id {
			return &r.Candidates[i]
		}
	}
	for i := range r.RejectedCandidates {
		if r.RejectedCandidates[i].ID == id {
			return &r.RejectedCandidates[i]
		}
	}
	return nil
}

// Exclusion is a trace that was read but not used for mining.
type Exclusion struct {
	TraceID    string `json:"trace_id"`
	Source     string `json:"source"`
	SourceHash string `json:"source_hash"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	ActionID   string `json:"action_id,omitempty"`
	// Role is "heldout" for a trace from --shadow-from; empty for a trace
	// offered for mining.
	Role string `json:"role,omitempty"`
}

// SkippedFile is an input that could not be read as a trace and was left
// out because the run asked to skip invalid input.
type SkippedFile struct {
	Path   string   `json:"path"`
	Line   int      `json:"line,omitempty"`
	Errors []string `json:"errors"`
}

// InputFormat describes the trace format the report was mined from.
type InputFormat struct {
	Name            string   `json:"name"`
	Version         int      `json:"version"`
	RequiredFields  []string `json:"required_fields"`
	PreservedFields []string `json:"preserved_fields"`
}

// MiningSummary records the settings and size of a mining run, so a
// reviewer can tell what the ranking was drawn from.
type MiningSummary struct {
	MinExamples    int `json:"min_examples"`
	MaxCandidates  int `json:"max_candidates"`
	EligibleTraces int `json:"eligible_traces"`
	// EligibleSessions is the sessions the eligible traces belong to,
	// set only when some session has several traces (a subagent's, a
	// continuation's): min_examples and each candidate's support count
	// sessions.
	EligibleSessions   int `json:"eligible_sessions,omitempty"`
	Actions            int `json:"actions"`
	DistinctSignatures int `json:"distinct_signatures"`
	RepeatsFound       int `json:"repeats_found"`
	CandidatesBuilt    int `json:"candidates_built"`

	// The fields below are set by the gapped miner only; a report without
	// Miner was made by the contiguous (exact) miner.

	// Miner is "gapped"; MinerReason says why it was chosen.
	Miner       string `json:"miner,omitempty"`
	MinerReason string `json:"miner_reason,omitempty"`
	// MaxGap is the most actions allowed between consecutive steps.
	MaxGap int `json:"max_gap,omitempty"`
	// ObservationsSkipped counts the observation actions left out of the
	// sequences; RetriesCollapsed the failed attempts folded into a later
	// success.
	ObservationsSkipped int `json:"observations_skipped,omitempty"`
	RetriesCollapsed    int `json:"retries_collapsed,omitempty"`
	// PatternsSearched counts the patterns the search visited;
	// NoiseStepsDropped the steps the noise rule removed from patterns.
	PatternsSearched  int `json:"patterns_searched,omitempty"`
	NoiseStepsDropped int `json:"noise_steps_dropped,omitempty"`
}

// Encode renders the report as report.json: sorted keys, two-space
// indentation, no HTML escaping, a trailing newline. The same report always
// encodes to the same bytes.
func (r *Report) Encode() ([]byte, error) {
	return EncodeJSON(r)
}

// Promotion is a candidate's promotion state: whether it may be promoted,
// why not, and the evidence that decided it (seed 000's promotion
// criteria and history). Every candidate of a published report carries
// one, the rejected ones included, so a reviewer reading report.json
// sees the same verdict the bundle's manifest gives its candidate.
type Promotion struct {
	// Status is the criteria's status, repeated here for readers that
	// look no further: blocked, needs_approval or ready.
	Status            string             `json:"status"`
	Reasons           []PromotionReason  `json:"reasons"`
	SampleCount       int                `json:"sample_count"`
	DivergenceHistory []DivergenceRecord `json:"divergence_history"`
	ApprovalHistory   []ApprovalRecord   `json:"approval_history"`
	Criteria          PromotionCriteria  `json:"criteria"`
	PromotionMetadata
}

// PromotionMetadata is who proposes a candidate and what promoting it
// would publish and fall back to: the fields of a bundle manifest's
// promotion, recorded in report.json too so that the standalone report
// answers them without a bundle. A name nobody gave is null, never
// guessed.
type PromotionMetadata struct {
	// Author is who proposed the candidate (--author); Owner is who
	// answers for it once promoted, the author, since nobody else is
	// named.
	Author *string `json:"author"`
	Owner  *string `json:"owner"`
	// Approver is who is expected to approve (--approver). It is never
	// an approval: ApprovalHistory records those.
	Approver        *string `json:"approver"`
	PackageName     string  `json:"package_name"`
	WorkflowVersion string  `json:"workflow_version"`
	RollbackTarget  string  `json:"rollback_target"`
	CreatedAt       string  `json:"created_at"`
	// EvalPackLink is where the eval pack is published (--eval-pack-link),
	// null when not given.
	EvalPackLink *string `json:"eval_pack_link"`
}

// DivergenceRecord is a replay-oracle divergence found on one trace: the
// receipt path where the trace's replay run and the candidate's expected
// receipts differ, and both values.
type DivergenceRecord struct {
	TraceID string `json:"trace_id"`
	Path    string `json:"path"`
	Message string `json:"message"`
	Left    any    `json:"left"`
	Right   any    `json:"right"`
}

// ApprovalRecord is one recorded human decision. WorkflowSHA256 is the
// hex SHA-256 of the workflow file the decision was made on.
type ApprovalRecord struct {
	Actor          string `json:"actor"`
	Decision       string `json:"decision"`
	RecordedAt     string `json:"recorded_at"`
	Reason         string `json:"reason"`
	CandidateID    string `json:"candidate_id"`
	WorkflowSHA256 string `json:"workflow_sha256"`
}

// PromotionCriteria are the promotion criteria and the resulting status.
type PromotionCriteria struct {
	Status                string            `json:"status"`
	MinExamples           int               `json:"min_examples"`
	MinConfidence         float64           `json:"min_confidence"`
	RequiresShadowPass    bool              `json:"requires_shadow_pass"`
	RequiresHeldoutPass   bool              `json:"requires_heldout_pass"`
	RequiresHumanApproval bool              `json:"requires_human_approval"`
	Reasons               []PromotionReason `json:"reasons"`
}

// PromotionReason says why a candidate is not ready, with a stable code.
type PromotionReason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
