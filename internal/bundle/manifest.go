package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Schema markers of candidate.json. Importers refuse another schema and a
// higher schema_version; fields added without bumping SchemaVersion are
// additive (this package adds workflow.sha256, fixtures[].sha256,
// fixtures[].role, source_traces[].role and redaction.replacements).
const (
	Schema        = "harn.crystallization.candidate.bundle"
	SchemaVersion = 1
)

// Names of the files of a bundle.
const (
	ManifestFile = "candidate.json"
	WorkflowFile = "workflow.star"
	ReportFile   = "report.json"
	EvalPackFile = "harn.eval.toml"
	FixturesDir  = "fixtures"
	SkillDir     = "skill"
	SkillFile    = "SKILL.md"
	GateFile     = "gate.json"
)

// Kinds of bundle.
const (
	KindCandidate = "candidate"
	KindPlanOnly  = "plan_only"
	KindRejected  = "rejected"
)

// Risk levels.
const (
	RiskLow    = "low"
	RiskMedium = "medium"
	RiskHigh   = "high"
)

// Promotion statuses.
const (
	StatusBlocked       = "blocked"
	StatusNeedsApproval = "needs_approval"
	StatusReady         = "ready"
)

// Approval decisions recorded in approval_history.
const (
	DecisionApproved = "approved"
	DecisionRejected = "rejected"
)

// Codes of promotion criteria reasons; see the package comment.
const (
	ReasonNoCandidate          = "no_candidate"
	ReasonCandidateRejected    = "candidate_rejected"
	ReasonShadowMissing        = "shadow_missing"
	ReasonShadowFailed         = "shadow_failed"
	ReasonHeldoutRequired      = "heldout_required"
	ReasonHeldoutFailed        = "heldout_failed"
	ReasonReceiptDrift         = "receipt_drift"
	ReasonInsufficientExamples = "insufficient_examples"
	ReasonLowConfidence        = "low_confidence"
	ReasonApprovalRequired     = "approval_required"
	ReasonApprovalRejected     = "approval_rejected"
)

// RolloutPolicy and RollbackTarget are the fixed rollout fields of a
// promotion.
const (
	RolloutPolicy  = "shadow_then_canary"
	RollbackTarget = "keep source traces and previous package version"
)

// Manifest is candidate.json. Field names follow the published manifest format; nullable fields
// are pointers so that they encode as null when unset.
type Manifest struct {
	Schema             string                  `json:"schema"`
	SchemaVersion      int                     `json:"schema_version"`
	GeneratedAt        string                  `json:"generated_at"`
	Generator          Generator               `json:"generator"`
	Kind               string                  `json:"kind"`
	CandidateID        string                  `json:"candidate_id"`
	ExternalKey        string                  `json:"external_key"`
	Title              string                  `json:"title"`
	Team               *string                 `json:"team"`
	Repo               *string                 `json:"repo"`
	RiskLevel          string                  `json:"risk_level"`
	Workflow           WorkflowRef             `json:"workflow"`
	SourceTraceHashes  []string                `json:"source_trace_hashes"`
	SourceTraces       []SourceTrace           `json:"source_traces"`
	DeterministicSteps []StepRef               `json:"deterministic_steps"`
	FuzzySteps         []StepRef               `json:"fuzzy_steps"`
	SideEffects        []trace.SideEffect      `json:"side_effects"`
	Capabilities       []string                `json:"capabilities"`
	RequiredSecrets    []string                `json:"required_secrets"`
	Savings            *candidate.Savings      `json:"savings"`
	Shadow             *candidate.ShadowReport `json:"shadow"`
	EvalPack           EvalPackRef             `json:"eval_pack"`
	Skill              *SkillRef               `json:"skill"`
	Fixtures           []Fixture               `json:"fixtures"`
	Promotion          Promotion               `json:"promotion"`
	Redaction          Redaction               `json:"redaction"`
	Confidence         float64                 `json:"confidence"`
	RejectionReasons   []candidate.Problem     `json:"rejection_reasons"`
	Warnings           []candidate.Problem     `json:"warnings"`
	// SynthesizedSteps (additive) is the evidence for each model call
	// that ReplaceWorkflow replaced by verified code, oldest first.
	SynthesizedSteps []candidate.SynthesizedStep `json:"synthesized_steps,omitempty"`
}

// Generator names the tool that wrote the bundle.
type Generator struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
}

// WorkflowRef locates the workflow file. SHA256 (additive) is the lowercase
// hex SHA-256 of the file as written.
type WorkflowRef struct {
	Path           string `json:"path"`
	Name           string `json:"name"`
	PackageName    string `json:"package_name"`
	PackageVersion string `json:"package_version"`
	SHA256         string `json:"sha256"`
}

// SourceTrace is the provenance of one trace in the bundle. SourceURL is
// relative (where the trace was read from, relative to the directory it
// was loaded from), never an absolute local path.
type SourceTrace struct {
	TraceID         string  `json:"trace_id"`
	SourceHash      string  `json:"source_hash"`
	SourceURL       *string `json:"source_url"`
	SourceReceiptID *string `json:"source_receipt_id"`
	FixturePath     string  `json:"fixture_path"`
	Role            string  `json:"role"`
}

// StepRef summarizes one candidate step.
type StepRef struct {
	Index        int        `json:"index"`
	Kind         trace.Kind `json:"kind"`
	Name         string     `json:"name"`
	Capabilities []string   `json:"capabilities"`
	ReviewNotes  []string   `json:"review_notes,omitempty"`
}

// EvalPackRef locates the eval pack; Path is nil when none was written.
type EvalPackRef struct {
	Path *string `json:"path"`
	Link *string `json:"link"`
}

// SkillRef locates the accepted skill.
type SkillRef struct {
	Path                string `json:"path"`
	GateReceiptPath     string `json:"gate_receipt_path"`
	Name                string `json:"name"`
	SkillCandidateID    string `json:"skill_candidate_id"`
	WorkflowCandidateID string `json:"workflow_candidate_id"`
}

// Fixture is one redacted trace file. SHA256 (additive) is the lowercase
// hex SHA-256 of the file as written; SourceHash is the hash of the
// original, unredacted trace, which candidate examples refer to.
type Fixture struct {
	Path       string `json:"path"`
	TraceID    string `json:"trace_id"`
	SourceHash string `json:"source_hash"`
	SHA256     string `json:"sha256"`
	Redacted   bool   `json:"redacted"`
	Role       string `json:"role"`
}

// Promotion is the promotion metadata, criteria and history.
type Promotion struct {
	Owner                     *string            `json:"owner"`
	Approver                  *string            `json:"approver"`
	Author                    *string            `json:"author"`
	RolloutPolicy             string             `json:"rollout_policy"`
	RollbackTarget            string             `json:"rollback_target"`
	CreatedAt                 string             `json:"created_at"`
	WorkflowVersion           string             `json:"workflow_version"`
	PackageName               string             `json:"package_name"`
	SampleCount               int                `json:"sample_count"`
	Confidence                float64            `json:"confidence"`
	ShadowSuccessCount        int                `json:"shadow_success_count"`
	ShadowFailureCount        int                `json:"shadow_failure_count"`
	DivergenceHistory         []DivergenceRecord `json:"divergence_history"`
	ApprovalHistory           []ApprovalRecord   `json:"approval_history"`
	Criteria                  Criteria           `json:"criteria"`
	EstimatedTimeTokenSavings Estimate           `json:"estimated_time_token_savings"`
}

// DivergenceRecord is a replay-oracle divergence found on one trace.
type DivergenceRecord = candidate.DivergenceRecord

// ApprovalRecord is one recorded human decision. WorkflowSHA256 is the
// hex SHA-256 of the workflow file the decision was made on.
type ApprovalRecord = candidate.ApprovalRecord

// Criteria are the promotion criteria and the resulting status.
type Criteria = candidate.PromotionCriteria

// Reason says why a candidate is not ready, with a stable code.
type Reason = candidate.PromotionReason

// Estimate is the per-run saving of running the candidate as code.
type Estimate struct {
	WallMSPerRun       float64 `json:"wall_ms_per_run"`
	InputTokensPerRun  float64 `json:"input_tokens_per_run"`
	OutputTokensPerRun float64 `json:"output_tokens_per_run"`
	ModelCallsPerRun   float64 `json:"model_calls_per_run"`
	CostUSDPerRun      float64 `json:"cost_usd_per_run"`
}

// Redaction records what was done to the bundle's content.
type Redaction struct {
	Applied      bool     `json:"applied"`
	Rules        []string `json:"rules"`
	Summary      string   `json:"summary"`
	FixtureCount int      `json:"fixture_count"`
	Replacements int      `json:"replacements"`
}

// Bundle is a bundle directory with its manifest.
type Bundle struct {
	Dir      string
	Manifest *Manifest
}

// ErrSchema is returned (wrapped, with the file and field) by Read for a
// manifest whose schema is not Schema or whose schema_version this
// package does not read.
var ErrSchema = errors.New("unsupported bundle schema")

// schemaError is a refusal of the manifest's schema marker or version.
type schemaError struct {
	file, field, msg string
}

func (e *schemaError) Error() string { return e.file + ": " + e.field + ": " + e.msg }
func (e *schemaError) Unwrap() error { return ErrSchema }

// Read reads the manifest of the bundle in dir. It refuses, naming the
// file and field, a manifest that is not JSON, a schema other than Schema,
// and a schema_version that is missing, below 1 or above SchemaVersion.
// It checks nothing else; Validate checks the whole bundle.
func Read(dir string) (*Bundle, error) {
	cleanup(dir)
	file := filepath.Join(dir, ManifestFile)
	// A symlink could make the manifest another file, and a FIFO or
	// device would block or never end.
	if st, err := os.Lstat(file); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("reading bundle: %s is not a regular file", file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading bundle: %w", err)
	}
	m, err := decodeManifest(data, file)
	if err != nil {
		return nil, err
	}
	return &Bundle{Dir: dir, Manifest: m}, nil
}

// decodeManifest checks the schema markers of data, then decodes it.
// Numbers in generic fields are kept as json.Number, so a manifest that is
// read and written again keeps them as they were.
func decodeManifest(data []byte, file string) (*Manifest, error) {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %w", file, err)
	}
	// encoding/json keeps the last of two members with one name and
	// takes "Path" or "ſha256" for "path" or "sha256"; a reviewer reading
	// the one that looks right would approve what does not run.
	if errs := trace.CheckNames(data, file, 0, new(Manifest)); len(errs) > 0 {
		return nil, errs
	}
	var schema string
	if err := json.Unmarshal(head["schema"], &schema); err != nil || head["schema"] == nil {
		return nil, &schemaError{file, "$.schema", fmt.Sprintf("missing or not a string; want %q", Schema)}
	}
	if schema != Schema {
		return nil, &schemaError{file, "$.schema", fmt.Sprintf("schema %q; want %q", schema, Schema)}
	}
	var version json.Number
	if err := json.Unmarshal(head["schema_version"], &version); err != nil || head["schema_version"] == nil {
		return nil, &schemaError{file, "$.schema_version", "missing or not a number"}
	}
	v, err := version.Int64()
	switch {
	case err != nil || v < 1:
		return nil, &schemaError{file, "$.schema_version", fmt.Sprintf("schema_version %s is not a version (want 1 to %d)", version, SchemaVersion)}
	case v > SchemaVersion:
		return nil, &schemaError{file, "$.schema_version", fmt.Sprintf("schema_version %d is newer than this build reads (%d); upgrade crystallize", v, SchemaVersion)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	m := new(Manifest)
	if err := dec.Decode(m); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%s: $.%s: expected %s, got JSON %s", file, te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

// ReadReport reads the report.json of the bundle in dir. Its member names
// are checked as Read checks the manifest's (see trace.CheckNames): a
// "Parameters" after the "parameters" a reviewer read is refused, not
// decoded in their place. Numbers in generic fields are kept as
// json.Number, so that they compare and encode again as written.
//
// Every reader of a bundle's report goes through it or, in Validate,
// through decodeReport, so that they all read the same candidate.
func ReadReport(dir string) (*candidate.Report, error) {
	file := filepath.Join(dir, ReportFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading bundle: %w", err)
	}
	return decodeReport(data, file)
}

// decodeReport decodes data, the report.json named file. Bad member names
// are a trace.ErrorList.
func decodeReport(data []byte, file string) (*candidate.Report, error) {
	r := new(candidate.Report)
	if errs := trace.CheckNames(data, file, 0, r); len(errs) > 0 {
		return nil, errs
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(r); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return r, nil
}

// encodeManifest renders m as candidate.json.
func encodeManifest(m *Manifest) ([]byte, error) {
	b, err := candidate.EncodeJSON(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", ManifestFile, err)
	}
	return b, nil
}

// strPtr returns nil for "" and &s otherwise: an unset field is null.
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// isLogicalSecretID reports whether id is a logical secret id:
// UPPER_SNAKE_CASE, starting with a letter, at most 128 bytes.
func isLogicalSecretID(id string) bool {
	if id == "" || len(id) > 128 || id[0] < 'A' || id[0] > 'Z' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return !strings.Contains(id, "__") && !strings.HasSuffix(id, "_")
}
