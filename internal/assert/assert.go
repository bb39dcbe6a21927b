// Package assert is the assertion engine that crystallize's evaluators
// share: "crystallize harness run" checks the cases of a repository's
// eval suites with it, and "crystallize eval BUNDLE" the cases of a
// bundle's eval pack. It owns the case format's input and assertion
// types, the defaults table of what blocks, the metrics and the judge
// interface; the runners own where the evidence comes from (a command,
// a recorded output, a trace) and where results are kept.
package assert

// One function, Check, decides every assertion type against the
// evidence of a case. Deterministic types
// come first in the table and block by default; retrieval and agent
// metrics block only when their threshold is marked calibrated; model
// judgment blocks only when the judge has been calibrated and promoted
// for the suite. An assertion the engine cannot decide (an unknown type,
// a missing judge, an unsupported language) fails: an evaluator must
// never report a check it did not run as passed.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Assertion types.
const (
	TypeExitCode       = "exit_code"
	TypeContains       = "contains"
	TypeNotContains    = "not_contains"
	TypeJSONSchema     = "json_schema"
	TypeASTMatch       = "ast_match"
	TypeRecallAtK      = "recall_at_k"
	TypeMRR            = "mrr"
	TypeNDCG           = "ndcg"
	TypeContextRecall  = "context_recall"
	TypeToolCallF1     = "tool_call_f1"
	TypeTrajectoryGoal = "trajectory_goal_success"
	TypeLLMRubric      = "llm_rubric"
	TypeFactuality     = "factuality"
	TypeSelectBest     = "select_best"
)

// Blocking is the seed's defaults table: "yes" blocks, "calibrated"
// blocks once the threshold or judge is calibrated, "no" never blocks by
// default. Types not in the table are unknown.
var Blocking = map[string]string{
	TypeExitCode: "yes", TypeContains: "yes", TypeNotContains: "yes", TypeJSONSchema: "yes", TypeASTMatch: "yes",
	TypeRecallAtK: "calibrated", TypeMRR: "calibrated", TypeNDCG: "calibrated", TypeToolCallF1: "calibrated", TypeContextRecall: "calibrated",
	TypeTrajectoryGoal: "no", TypeLLMRubric: "no", TypeFactuality: "no", TypeSelectBest: "no",
}

// ModelJudged are the types decided by a judge model.
var ModelJudged = map[string]bool{TypeLLMRubric: true, TypeFactuality: true, TypeSelectBest: true}

// Assertion is one check of a case.
type Assertion struct {
	Type string `json:"type"`
	// Value is the text of contains/not_contains.
	Value string `json:"value,omitempty"`
	// Code is the exit code exit_code expects (default 0).
	Code *int `json:"code,omitempty"`
	// Schema is the JSON Schema json_schema validates the output with.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Pattern is ast_match's Go expression pattern; "_" matches any
	// subtree. Language defaults to "go".
	Pattern  string `json:"pattern,omitempty"`
	Language string `json:"language,omitempty"`
	// K cuts the ranking for recall_at_k and ndcg (0: all of it).
	K int `json:"k,omitempty"`
	// Threshold is the score a metric must reach (default 1).
	Threshold *float64 `json:"threshold,omitempty"`
	// Calibrated marks a metric's threshold as calibrated, which makes
	// a metric blocking.
	Calibrated bool `json:"calibrated,omitempty"`
	// Expected are the tool names trajectory_goal_success needs, in
	// order.
	Expected []string `json:"expected,omitempty"`
	// Rubric is the instruction of a model-judged assertion.
	Rubric string `json:"rubric,omitempty"`
	// Advisory makes any assertion non-blocking.
	Advisory bool `json:"advisory,omitempty"`
}

// ToolCall is one step of a trajectory.
type ToolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Error     bool           `json:"error,omitempty"`
}

// Evidence is what a case produced: the output text, the exit code of
// its command, a ranking and a trajectory.
type Evidence struct {
	Output    string
	ExitCode  *int
	Retrieved []string
	// Contexts are the texts of the retrieved documents, for
	// context_recall.
	Contexts   []string
	Trajectory []ToolCall
	Input      CaseInput
}

// Result is one assertion as checked.
type Result struct {
	Type     string  `json:"type"`
	Passed   bool    `json:"passed"`
	Blocking bool    `json:"blocking"`
	Score    float64 `json:"score"`
	Message  string  `json:"message"`
	// Judge names the judge and the hash of the prompt it was shown, for
	// model-judged types, so a verdict can be traced to what produced it.
	Judge string `json:"judge,omitempty"`
}

// Describer is implemented by judges that can name themselves (provider
// and model) for the record.
type Describer interface {
	Describe() string
}

// Judge decides model-judged assertions.
type Judge interface {
	Judge(ctx context.Context, req JudgeRequest) (Verdict, error)
}

// JudgeRequest is what a judge sees.
type JudgeRequest struct {
	Type       string   `json:"type"`
	Rubric     string   `json:"rubric"`
	Input      string   `json:"input"`
	Output     string   `json:"output"`
	Reference  string   `json:"reference,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
}

// Verdict is a judge's answer. Best is select_best's chosen index.
type Verdict struct {
	Pass   bool    `json:"pass"`
	Score  float64 `json:"score"`
	Reason string  `json:"reason"`
	Best   int     `json:"best"`
}

// Engine checks assertions. The zero value checks every deterministic
// type and fails model-judged ones for want of a judge.
type Engine struct {
	// Judge decides model-judged types; nil means none is configured.
	Judge Judge
	// Promoted says the judge is calibrated and promoted for the suite
	// being run, which lets llm_rubric and factuality block.
	Promoted bool
}

// BlocksByDefault reports whether an assertion blocks under the
// defaults table, given whether its judge is promoted.
func BlocksByDefault(a Assertion, promoted bool) bool {
	if a.Advisory {
		return false
	}
	switch Blocking[a.Type] {
	case "yes":
		return true
	case "calibrated":
		return a.Calibrated
	}
	return ModelJudged[a.Type] && a.Type != TypeSelectBest && promoted
}

// Check decides one assertion.
func (e *Engine) Check(ctx context.Context, a Assertion, ev Evidence) Result {
	r := Result{Type: a.Type, Blocking: BlocksByDefault(a, e.Promoted)}
	if _, ok := Blocking[a.Type]; !ok {
		r.Blocking = !a.Advisory
		r.Message = fmt.Sprintf("unknown assertion type %q", a.Type)
		return r
	}
	threshold := 1.0
	if a.Threshold != nil {
		threshold = *a.Threshold
	}
	metric := func(score float64, what string) {
		r.Score = score
		r.Passed = score >= threshold-1e-9
		r.Message = fmt.Sprintf("%s = %.4g, threshold %.4g", what, score, threshold)
	}
	switch a.Type {
	case TypeExitCode:
		want := 0
		if a.Code != nil {
			want = *a.Code
		}
		switch {
		case ev.ExitCode == nil:
			r.Message = "no exit code: the case runs no command"
		case *ev.ExitCode == want:
			r.Passed, r.Score, r.Message = true, 1, fmt.Sprintf("exit code %d", want)
		default:
			r.Message = fmt.Sprintf("exit code %d, want %d", *ev.ExitCode, want)
		}
	case TypeContains, TypeNotContains:
		if a.Value == "" {
			r.Message = "empty value"
			break
		}
		has := strings.Contains(ev.Output, a.Value)
		r.Passed = has == (a.Type == TypeContains)
		switch {
		case r.Passed && has:
			r.Message = fmt.Sprintf("output contains %q", a.Value)
		case r.Passed:
			r.Message = fmt.Sprintf("output does not contain %q", a.Value)
		case has:
			r.Message = fmt.Sprintf("output contains %q", a.Value)
		default:
			r.Message = fmt.Sprintf("output does not contain %q", a.Value)
		}
	case TypeJSONSchema:
		r.Passed, r.Message = checkSchema(a.Schema, ev.Output)
	case TypeASTMatch:
		r.Passed, r.Message = astMatch(a, ev.Output)
	case TypeRecallAtK:
		if len(ev.Input.ExpectedDocuments) == 0 {
			r.Message = "no expected_documents"
			break
		}
		metric(RecallAtK(ev.Input.ExpectedDocuments, ev.Retrieved, a.K), fmt.Sprintf("recall@%d", kOr(a.K, len(ev.Retrieved))))
	case TypeMRR:
		if len(ev.Input.ExpectedDocuments) == 0 {
			r.Message = "no expected_documents"
			break
		}
		metric(ReciprocalRank(ev.Input.ExpectedDocuments, ev.Retrieved), "reciprocal rank")
	case TypeNDCG:
		rel := ev.Input.Relevance
		if len(rel) == 0 {
			rel = map[string]float64{}
			for _, d := range ev.Input.ExpectedDocuments {
				rel[d] = 1
			}
		}
		if len(rel) == 0 {
			r.Message = "no expected_documents or relevance"
			break
		}
		metric(NDCG(rel, ev.Retrieved, a.K), fmt.Sprintf("ndcg@%d", kOr(a.K, len(ev.Retrieved))))
	case TypeContextRecall:
		claims := ev.Input.ReferenceClaims
		if len(claims) == 0 {
			claims = sentences(ev.Input.Reference)
		}
		switch {
		case len(claims) == 0:
			r.Message = "no reference_claims or reference"
		case len(ev.Contexts) == 0:
			r.Message = "no retrieved contexts: the ranking carries no text"
		default:
			score, missed := ContextRecall(claims, ev.Contexts)
			metric(score, fmt.Sprintf("context recall (%d of %d claims in the retrieved contexts)", len(claims)-len(missed), len(claims)))
			if len(missed) > 0 {
				r.Message += fmt.Sprintf("; first unsupported: %q", missed[0])
			}
		}
	case TypeToolCallF1:
		if len(ev.Input.ExpectedToolCalls) == 0 {
			r.Message = "no expected_tool_calls"
			break
		}
		p, rc, f1 := ToolCallF1(ev.Input.ExpectedToolCalls, ev.Trajectory)
		metric(f1, fmt.Sprintf("tool-call F1 (precision %.4g, recall %.4g)", p, rc))
	case TypeTrajectoryGoal:
		r.Passed, r.Message = goalReached(a.Expected, ev.Trajectory)
		if r.Passed {
			r.Score = 1
		}
	case TypeLLMRubric, TypeFactuality, TypeSelectBest:
		e.judge(ctx, a, ev, &r)
	}
	if r.Passed && r.Score == 0 && Blocking[a.Type] == "yes" {
		r.Score = 1
	}
	return r
}

func kOr(k, n int) int {
	if k > 0 {
		return k
	}
	return n
}

func (e *Engine) judge(ctx context.Context, a Assertion, ev Evidence, r *Result) {
	if e.Judge == nil {
		r.Message = "no judge configured: model-judged assertion not run"
		return
	}
	if a.Type != TypeSelectBest && a.Rubric == "" {
		r.Message = "empty rubric"
		return
	}
	req := JudgeRequest{Type: a.Type, Rubric: a.Rubric, Input: ev.Input.Prompt, Output: ev.Output, Reference: ev.Input.Reference, Candidates: ev.Input.Candidates}
	if req.Input == "" {
		req.Input = ev.Input.Query
	}
	if a.Type == TypeFactuality && req.Reference == "" {
		r.Message = "factuality needs input.reference"
		return
	}
	if a.Type == TypeSelectBest && len(req.Candidates) < 2 {
		r.Message = "select_best needs at least two input.candidates"
		return
	}
	sum := sha256.Sum256([]byte(JudgePrompt(req)))
	r.Judge = "judge prompt sha256:" + hex.EncodeToString(sum[:])[:16]
	if d, ok := e.Judge.(Describer); ok {
		r.Judge = d.Describe() + " " + r.Judge
	}
	v, err := e.Judge.Judge(ctx, req)
	if err != nil {
		r.Message = "judge: " + err.Error()
		return
	}
	r.Score = v.Score
	if a.Type == TypeSelectBest {
		want := ev.Input.BestCandidate
		r.Passed = want == nil || v.Best == *want
		r.Message = fmt.Sprintf("judge chose candidate %d: %s", v.Best, v.Reason)
		if want != nil && !r.Passed {
			r.Message = fmt.Sprintf("judge chose candidate %d, expected %d: %s", v.Best, *want, v.Reason)
		}
		return
	}
	r.Passed = v.Pass
	r.Message = "judge: " + v.Reason
}

// checkSchema validates output, parsed as JSON, against schema.
func checkSchema(schema json.RawMessage, output string) (bool, string) {
	if len(schema) == 0 {
		return false, "no schema"
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return false, "schema: " + err.Error()
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("assertion.json", doc); err != nil {
		return false, "schema: " + err.Error()
	}
	sch, err := c.Compile("assertion.json")
	if err != nil {
		return false, "schema: " + err.Error()
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(output))
	if err != nil {
		return false, "output is not JSON: " + err.Error()
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		msg := err.Error()
		if errors.As(err, &ve) {
			msg = strings.ReplaceAll(ve.Error(), "\n", "; ")
		}
		return false, "output does not match the schema: " + msg
	}
	return true, "output matches the schema"
}

// astMatch looks for the pattern expression anywhere in the output
// parsed as Go: a file when it has a package clause, else statements of
// a function body. Positions, comments and scopes are ignored, and the
// identifier "_" in the pattern matches any expression.
func astMatch(a Assertion, output string) (bool, string) {
	if a.Language != "" && a.Language != "go" {
		return false, fmt.Sprintf("ast_match: language %q is unsupported (only go)", a.Language)
	}
	pat, err := parser.ParseExpr(a.Pattern)
	if err != nil {
		return false, "pattern: " + err.Error()
	}
	fset := token.NewFileSet()
	var root ast.Node
	if f, err := parser.ParseFile(fset, "output.go", output, 0); err == nil {
		root = f
	} else if f, err2 := parser.ParseFile(fset, "output.go", "package p\nfunc _() {\n"+output+"\n}\n", 0); err2 == nil {
		root = f
	} else {
		return false, "output is not Go: " + err.Error()
	}
	found := false
	ast.Inspect(root, func(n ast.Node) bool {
		if found || n == nil {
			return false
		}
		if matchNode(reflect.ValueOf(pat), reflect.ValueOf(n)) {
			found = true
		}
		return !found
	})
	if !found {
		return false, fmt.Sprintf("no node matches %s", a.Pattern)
	}
	return true, fmt.Sprintf("found %s", a.Pattern)
}

var (
	posType   = reflect.TypeOf(token.NoPos)
	cgType    = reflect.TypeOf((*ast.CommentGroup)(nil))
	identType = reflect.TypeOf((*ast.Ident)(nil))
)

// resolverField reports whether t is one of the parser's old identifier
// resolution types (*ast.Object, *ast.Scope): they link nodes, they are
// not part of the code's shape, and following them would compare
// declarations the pattern does not contain. They are named rather than
// referenced because the types themselves are deprecated.
func resolverField(t reflect.Type) bool {
	if t.Kind() != reflect.Pointer || t.Elem().PkgPath() != "go/ast" {
		return false
	}
	name := t.Elem().Name()
	return name == "Object" || name == "Scope"
}

// matchNode compares a pattern AST with a candidate structurally.
func matchNode(p, n reflect.Value) bool {
	if p.Type() == identType && !p.IsNil() && p.Interface().(*ast.Ident).Name == "_" {
		if _, ok := n.Interface().(ast.Expr); ok && n.IsValid() && !(n.Kind() == reflect.Pointer && n.IsNil()) {
			return true
		}
	}
	if p.Kind() == reflect.Interface {
		if p.IsNil() || n.IsNil() {
			return p.IsNil() && n.IsNil()
		}
		p, n = p.Elem(), n.Elem()
		if p.Type() == identType && p.Interface().(*ast.Ident).Name == "_" {
			return true
		}
	}
	if p.Type() != n.Type() {
		return false
	}
	switch p.Kind() {
	case reflect.Pointer:
		if p.IsNil() || n.IsNil() {
			return p.IsNil() && n.IsNil()
		}
		return matchNode(p.Elem(), n.Elem())
	case reflect.Struct:
		for i := 0; i < p.NumField(); i++ {
			ft := p.Type().Field(i).Type
			if ft == posType || ft == cgType || resolverField(ft) {
				continue
			}
			if !matchNode(p.Field(i), n.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if p.Len() != n.Len() {
			return false
		}
		for i := 0; i < p.Len(); i++ {
			if !matchNode(p.Index(i), n.Index(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(p.Interface(), n.Interface())
}

// claimCoverage is the share of a claim's content words one retrieved
// context must hold for the claim to count as supported by it.
const claimCoverage = 0.8

// ContextRecall is the share of the reference claims that the retrieved
// contexts support, and the claims they do not. It is the deterministic,
// lexical reading of the metric: a claim is supported when one context
// holds at least claimCoverage of its content words (lowercased words of
// three or more letters and digits, short function words aside), so a
// claim split across two passages, or paraphrased beyond its words, is
// not counted; a judge can refine that, the metric does not guess.
func ContextRecall(claims, contexts []string) (float64, []string) {
	if len(claims) == 0 {
		return 0, nil
	}
	bags := make([]map[string]bool, len(contexts))
	for i, c := range contexts {
		bags[i] = map[string]bool{}
		for _, w := range contentWords(c) {
			bags[i][w] = true
		}
	}
	var missed []string
	for _, claim := range claims {
		words := contentWords(claim)
		supported := false
		for _, bag := range bags {
			if len(words) == 0 {
				break
			}
			n := 0
			for _, w := range words {
				if bag[w] {
					n++
				}
			}
			if float64(n) >= claimCoverage*float64(len(words))-1e-9 {
				supported = true
				break
			}
		}
		if !supported {
			missed = append(missed, claim)
		}
	}
	return float64(len(claims)-len(missed)) / float64(len(claims)), missed
}

// stopWords are the function words a claim's support does not hinge on.
var stopWords = map[string]bool{"the": true, "and": true, "for": true, "are": true, "was": true, "were": true, "with": true,
	"that": true, "this": true, "from": true, "has": true, "have": true, "its": true, "not": true, "but": true, "all": true,
	"any": true, "can": true, "into": true, "than": true, "then": true, "there": true, "which": true, "who": true, "will": true}

// contentWords are the distinct content words of s, in order.
func contentWords(s string) []string {
	var list []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		if len([]rune(w)) >= 3 && !stopWords[w] && !seen[w] {
			seen[w] = true
			list = append(list, w)
		}
	}
	return list
}

// sentences splits a reference answer into its claims, one a sentence.
func sentences(s string) []string {
	var list []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '.' || r == '!' || r == '?' || r == '\n' }) {
		if p := strings.TrimSpace(part); p != "" {
			list = append(list, p)
		}
	}
	return list
}

// RecallAtK is the share of expected documents among the first k
// retrieved (all of them when k is 0).
func RecallAtK(expected, retrieved []string, k int) float64 {
	if len(expected) == 0 {
		return 0
	}
	if k > 0 && k < len(retrieved) {
		retrieved = retrieved[:k]
	}
	hit := 0
	for _, d := range dedupe(expected) {
		if slices.Contains(retrieved, d) {
			hit++
		}
	}
	return float64(hit) / float64(len(dedupe(expected)))
}

// ReciprocalRank is 1/rank of the first relevant document, 0 when none
// is retrieved; the mean over a suite's cases is its MRR.
func ReciprocalRank(expected, retrieved []string) float64 {
	for i, d := range retrieved {
		if slices.Contains(expected, d) {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCG is the normalized discounted cumulative gain of the first k
// retrieved documents: Σ rel_i / log2(i+1) over ranks i from 1, divided
// by the same sum over the ideal order of the graded relevances.
func NDCG(relevance map[string]float64, retrieved []string, k int) float64 {
	if k <= 0 {
		k = len(retrieved)
	}
	dcg := 0.0
	seen := map[string]bool{}
	for i, d := range retrieved {
		if i >= k {
			break
		}
		if !seen[d] {
			dcg += relevance[d] / math.Log2(float64(i+2))
		}
		seen[d] = true
	}
	var ideal []float64
	for _, r := range relevance {
		ideal = append(ideal, r)
	}
	slices.Sort(ideal)
	slices.Reverse(ideal)
	idcg := 0.0
	for i, r := range ideal {
		if i >= k {
			break
		}
		idcg += r / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// ToolCallF1 matches expected calls with actual ones (by name, and by
// the expected arguments when an expected call gives them; each actual
// call matches at most once) and returns precision, recall and F1.
func ToolCallF1(expected, actual []ToolCall) (precision, recall, f1 float64) {
	used := make([]bool, len(actual))
	matched := 0
	for _, e := range expected {
		for i, a := range actual {
			if used[i] || a.Name != e.Name || !argsInclude(a.Arguments, e.Arguments) {
				continue
			}
			used[i] = true
			matched++
			break
		}
	}
	if len(actual) > 0 {
		precision = float64(matched) / float64(len(actual))
	}
	if len(expected) > 0 {
		recall = float64(matched) / float64(len(expected))
	}
	if precision+recall > 0 {
		f1 = 2 * precision * recall / (precision + recall)
	}
	return precision, recall, f1
}

func argsInclude(have, want map[string]any) bool {
	for k, v := range want {
		if !reflect.DeepEqual(have[k], v) {
			return false
		}
	}
	return true
}

// goalReached is true when the expected tools occur in the trajectory
// in order and its last step did not fail.
func goalReached(expected []string, traj []ToolCall) (bool, string) {
	if len(traj) == 0 {
		return false, "empty trajectory"
	}
	if len(expected) == 0 {
		return false, "no expected tools"
	}
	i := 0
	for _, c := range traj {
		if i < len(expected) && c.Name == expected[i] {
			i++
		}
	}
	if i < len(expected) {
		return false, fmt.Sprintf("goal not reached: %q never follows the earlier expected tools", expected[i])
	}
	if last := traj[len(traj)-1]; last.Error {
		return false, fmt.Sprintf("goal not reached: the last step %q failed", last.Name)
	}
	return true, fmt.Sprintf("goal reached: %s", strings.Join(expected, " → "))
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
