package harness

// The assertion engine lives in internal/assert, which "crystallize eval"
// shares with the harness; these names keep the harness's API (and the
// seed's case format it reads) in one place for its callers.

import "github.com/crystallize-dev/crystallize/internal/assert"

// Assertion types.
const (
	TypeExitCode       = assert.TypeExitCode
	TypeContains       = assert.TypeContains
	TypeNotContains    = assert.TypeNotContains
	TypeJSONSchema     = assert.TypeJSONSchema
	TypeASTMatch       = assert.TypeASTMatch
	TypeRecallAtK      = assert.TypeRecallAtK
	TypeMRR            = assert.TypeMRR
	TypeNDCG           = assert.TypeNDCG
	TypeContextRecall  = assert.TypeContextRecall
	TypeToolCallF1     = assert.TypeToolCallF1
	TypeTrajectoryGoal = assert.TypeTrajectoryGoal
	TypeLLMRubric      = assert.TypeLLMRubric
	TypeFactuality     = assert.TypeFactuality
	TypeSelectBest     = assert.TypeSelectBest
)

// Blocking is the seed's defaults table (assert.Blocking).
var Blocking = assert.Blocking

// modelJudged are the types decided by a judge model.
var modelJudged = assert.ModelJudged

type (
	Assertion    = assert.Assertion
	ToolCall     = assert.ToolCall
	Evidence     = assert.Evidence
	Result       = assert.Result
	Describer    = assert.Describer
	Judge        = assert.Judge
	JudgeRequest = assert.JudgeRequest
	Verdict      = assert.Verdict
	Engine       = assert.Engine
	CaseInput    = assert.CaseInput
)

// PromptWrapperVersion names the prompt the judge's rubric is wrapped
// in; changing the wrapper changes the judge configuration hash, which
// invalidates every calibration made with the old one.
const PromptWrapperVersion = assert.PromptWrapperVersion

// BlocksByDefault reports whether an assertion blocks under the
// defaults table, given whether its judge is promoted.
func BlocksByDefault(a Assertion, promoted bool) bool { return assert.BlocksByDefault(a, promoted) }

// RecallAtK, ReciprocalRank, NDCG, ContextRecall and ToolCallF1 are the
// engine's metrics.
var (
	ContextRecall  = assert.ContextRecall
	RecallAtK      = assert.RecallAtK
	ReciprocalRank = assert.ReciprocalRank
	NDCG           = assert.NDCG
	ToolCallF1     = assert.ToolCallF1
)

func judgePrompt(r JudgeRequest) string { return assert.JudgePrompt(r) }
