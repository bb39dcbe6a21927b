package mine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/price"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// act builds an action from kind, name and parameters given as JSON.
func act(id string, kind trace.Kind, name, params string) trace.Action {
	a := trace.Action{ID: id, Kind: kind, Name: name}
	if params != "" {
		a.Parameters = decodeMap(params)
	}
	return a
}

func decodeMap(s string) map[string]any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		panic(err)
	}
	return m
}

func decodeAny(s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	return v
}

func mk(id string, actions ...trace.Action) *trace.Trace {
	t := &trace.Trace{Version: 1, ID: id, Source: id + ".json", SourceHash: "sha256:" + id, Actions: actions}
	return t
}

func mustMine(t *testing.T, traces []*trace.Trace, opts Options) *candidate.Report {
	t.Helper()
	r, err := Mine(context.Background(), traces, opts)
	if err != nil {
		t.Fatalf("Mine: %v", err)
	}
	return r
}

func noise(id string) trace.Action { return act(id, trace.KindToolCall, "noise."+id, "") }

func TestMineParametersConstantsBindings(t *testing.T) {
	var traces []*trace.Trace
	for i, v := range []string{"1.2.0", "1.3.0", "2.0.0"} {
		id := fmt.Sprintf("t%d", i)
		branch := act(id+"-b", trace.KindToolCall, "git.create_branch", `{"repo":"/srv/app","name":"bump-`+v+`"}`)
		branch.Output = decodeAny(`{"branch":"bump-` + v + `","sha":"abc` + v + `"}`)
		get := act(id+"-g", trace.KindToolCall, "go.get", `{"module":"example.com/lib","version":"`+v+`"}`)
		pr := act(id+"-p", trace.KindToolCall, "github.open_pr", `{"branch":"bump-`+v+`","title":"bump lib","version":"`+v+`"}`)
		traces = append(traces, mk(id, noise(id+"-n"+v), branch, get, pr))
	}
	r := mustMine(t, traces, Options{})
	sel := r.Selected()
	if sel == nil {
		t.Fatalf("no candidate: %+v", r.Warnings)
	}
	if len(sel.Steps) != 3 || sel.Support != 3 {
		t.Fatalf("selected %d steps in %d traces, want 3 in 3", len(sel.Steps), sel.Support)
	}
	var names []string
	for _, p := range sel.Parameters {
		names = append(names, p.Name+"="+strings.Join(p.SourcePaths, "|"))
	}
	want := []string{
		"version=steps[2].parameters.version|steps[3].parameters.version",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	// The branch name is "bump-" and the version in every example, so
	// the caller does not pass it.
	var derived []string
	for _, d := range sel.DerivedParameters {
		derived = append(derived, d.Name+"="+strings.Join(d.SourcePaths, "|")+" := "+d.Expression)
	}
	wantDerived := []string{`name=steps[1].parameters.name := "bump-" + version`}
	if diff := cmp.Diff(wantDerived, derived); diff != "" {
		t.Errorf("derived parameters (-want +got):\n%s", diff)
	}
	wantConst := []candidate.Constant{
		{Step: 1, Path: "parameters.repo", Value: "/srv/app"},
		{Step: 2, Path: "parameters.module", Value: "example.com/lib"},
		{Step: 3, Path: "parameters.title", Value: "bump lib"},
	}
	if diff := cmp.Diff(wantConst, sel.Constants); diff != "" {
		t.Errorf("constants (-want +got):\n%s", diff)
	}
	wantBind := []candidate.Binding{{Step: 3, Path: "parameters.branch", FromStep: 1, FromField: "output", FromPath: "$.branch"}}
	if diff := cmp.Diff(wantBind, sel.Bindings); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
	if !sel.Steps[0].ResultUsed || sel.Steps[1].ResultUsed {
		t.Errorf("ResultUsed = %v, %v; want step 1 only", sel.Steps[0].ResultUsed, sel.Steps[1].ResultUsed)
	}
	if got := sel.Steps[2].Arguments[0]; got.Kind != candidate.ArgBinding || got.Binding == nil || got.Binding.FromStep != 1 {
		t.Errorf("step 3 branch argument = %+v, want a binding to step 1", got)
	}
}

func TestMineSameKeyDifferentValuesGetDistinctNames(t *testing.T) {
	var traces []*trace.Trace
	for i := range 3 {
		id := fmt.Sprintf("t%d", i)
		traces = append(traces, mk(id,
			act(id+"-1", trace.KindToolCall, "a", fmt.Sprintf(`{"name":"first-%d"}`, i)),
			// Unrelated to the first name, so neither is derived.
			act(id+"-2", trace.KindToolCall, "b", fmt.Sprintf(`{"name":"second-%d"}`, i*i+5)),
			act(id+"-3", trace.KindToolCall, "c", fmt.Sprintf(`{"repo-path":"/r/%s"}`, "xyz"[i:i+1])),
		))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	var names []string
	for _, p := range sel.Parameters {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"name", "name_step2", "repo_path"}, names); diff != "" {
		t.Errorf("parameter names (-want +got):\n%s", diff)
	}
}

func TestMineDivergentSideEffects(t *testing.T) {
	var traces []*trace.Trace
	for i, target := range []string{"release-branch", "main", "release-branch"} {
		id := fmt.Sprintf("t%d", i)
		a := act(id+"-1", trace.KindToolCall, "git.checkout", fmt.Sprintf(`{"v":"%d"}`, i))
		a.SideEffects = []trace.SideEffect{{Kind: "git_ref", Target: target}}
		traces = append(traces, mk(id, a, act(id+"-2", trace.KindToolCall, "b", "")))
	}
	r := mustMine(t, traces, Options{})
	if r.SelectedCandidateID != nil || len(r.RejectedCandidates) != 1 {
		t.Fatalf("selected %v, rejected %d; want none selected and one rejected", r.SelectedCandidateID, len(r.RejectedCandidates))
	}
	rej := r.RejectedCandidates[0]
	if len(rej.RejectionReasons) != 1 || rej.RejectionReasons[0].Code != candidate.CodeDivergentSideEffects || rej.RejectionReasons[0].Step != 1 {
		t.Errorf("rejection reasons = %+v", rej.RejectionReasons)
	}
	if rej.Confidence != 0 {
		t.Errorf("rejected confidence = %v, want 0", rej.Confidence)
	}
	if r.Warnings[len(r.Warnings)-1].Code != candidate.CodeNoCandidate {
		t.Errorf("warnings = %+v, want a no_candidate warning", r.Warnings)
	}
}

func TestMineParameterizedSideEffectTarget(t *testing.T) {
	var traces []*trace.Trace
	for i := range 3 {
		id := fmt.Sprintf("t%d", i)
		file := fmt.Sprintf("notes/v%d.md", i)
		a := act(id+"-1", trace.KindFileMutation, "write_notes", `{"path":"`+file+`"}`)
		a.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: file, Capability: "fs.write"}}
		traces = append(traces, mk(id, a, act(id+"-2", trace.KindToolCall, "b", "")))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	if sel == nil {
		t.Fatal("parameterized target rejected")
	}
	if got := sel.Steps[0].SideEffects[0].Target; got != "{path}" {
		t.Errorf("target = %q, want {path}", got)
	}
	if diff := cmp.Diff([]string{"file"}, sel.ClusterKey.TouchedArtifactTypes); diff != "" {
		t.Errorf("artifact types of a parameterized target (-want +got):\n%s", diff)
	}
}

// TestMineSavingsPriced checks that the tokens of a log that carries no
// dollars are priced by their model, a dated name matched to its family
// and cache reads and writes at their own rates; that a cost the trace
// gives wins; and that tokens of a model the table does not know are
// listed as unpriced rather than counted as free.
func TestMineSavingsPriced(t *testing.T) {
	mineCosts := func(opts Options, costs ...trace.Cost) candidate.Savings {
		t.Helper()
		var traces []*trace.Trace
		for i := range 2 {
			id := fmt.Sprintf("t%d", i)
			var acts []trace.Action
			for j, c := range costs {
				a := act(fmt.Sprintf("%s-%d", id, j), trace.KindToolCall, fmt.Sprintf("step%d", j), "")
				a.Cost = &c
				acts = append(acts, a)
			}
			traces = append(traces, mk(id, acts...))
		}
		sel := mustMine(t, traces, opts).Selected()
		if sel == nil {
			t.Fatal("no candidate")
		}
		return sel.Savings
	}
	sonnet := trace.Cost{Model: "claude-sonnet-4-5-20250929", ModelCalls: 1, InputTokens: 22000, CacheReadTokens: 20000, CacheWriteTokens: 1000, OutputTokens: 60}
	// Per run: 1,000 input tokens at $3, 20,000 cache reads at $0.30,
	// 1,000 cache writes at $3.75 and 60 output tokens at $15 a million.
	perRun := (1000*3 + 20000*0.30 + 1000*3.75 + 60*15) / 1e6
	given := trace.Cost{Model: "claude-sonnet-4-5-20250929", ModelCalls: 1, InputTokens: 500, OutputTokens: 5, TotalCostUSD: 0.5}
	s := mineCosts(Options{}, sonnet, given)
	if got, want := s.PerRun.EstimatedCostUSDAvoided, round6(perRun+0.5); got != want || s.UnpricedModels != nil {
		t.Errorf("savings per run = $%v, unpriced %q; want $%v, none", got, s.UnpricedModels, want)
	}

	unknown := trace.Cost{Model: "claude-sonnet-4-7", ModelCalls: 1, InputTokens: 1000, OutputTokens: 10}
	nameless := trace.Cost{ModelCalls: 1, InputTokens: 1000, OutputTokens: 10}
	s = mineCosts(Options{}, sonnet, unknown, nameless)
	if got, want := s.PerRun.EstimatedCostUSDAvoided, round6(perRun); got != want {
		t.Errorf("savings per run with unknown models = $%v, want $%v (the known model only)", got, want)
	}
	if diff := cmp.Diff([]string{"", "claude-sonnet-4-7"}, s.UnpricedModels); diff != "" {
		t.Errorf("unpriced models (-want +got):\n%s", diff)
	}

	// A project's price table prices what the built-in one does not.
	opts := Options{Prices: price.Default().With(map[string]price.Price{"claude-sonnet-4-7": {Input: 2, Output: 10}})}
	s = mineCosts(opts, unknown, unknown)
	if got, want := s.PerRun.EstimatedCostUSDAvoided, round6(2*(1000*2+10*10)/1e6); got != want || s.UnpricedModels != nil {
		t.Errorf("savings per run with an override = $%v, unpriced %q; want $%v, none", got, s.UnpricedModels, want)
	}
}

func TestMineFuzzySegmentAndSavings(t *testing.T) {
	var traces []*trace.Trace
	for i := range 2 {
		id := fmt.Sprintf("t%d", i)
		a := act(id+"-1", trace.KindToolCall, "fetch", fmt.Sprintf(`{"id":"%d"}`, i))
		a.Cost = &trace.Cost{ModelCalls: 1, InputTokens: 100, OutputTokens: 10, TotalCostUSD: 0.002, WallMS: 900}
		toolMS := int64(150)
		a.DurationMS = &toolMS
		m := act(id+"-2", trace.KindModelCall, "classify", "")
		m.Cost = &trace.Cost{ModelCalls: 1, InputTokens: 1000, OutputTokens: 50, TotalCostUSD: 0.01, WallMS: 2000}
		traces = append(traces, mk(id, a, m))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	if sel.Steps[1].Segment != candidate.Fuzzy || sel.Steps[0].Segment != candidate.Deterministic {
		t.Fatalf("segments = %s, %s", sel.Steps[0].Segment, sel.Steps[1].Segment)
	}
	want := candidate.Savings{
		ModelCallsAvoided: 2, InputTokensAvoided: 200, OutputTokensAvoided: 20,
		EstimatedCostUSDAvoided: 0.004, WallMSAvoided: 1800, RemainingModelCalls: 2, Runs: 2,
		// The workflow still makes the classify calls ($0.01 each) and
		// spends the fetch tool's 150 ms and classify's 2000 ms per run.
		CPURuntimeCostUSD: 0.02, RuntimeMS: 4300,
		PerRun: candidate.PerRun{ModelCallsAvoided: 1, InputTokensAvoided: 100, OutputTokensAvoided: 10,
			EstimatedCostUSDAvoided: 0.002, WallMSAvoided: 900, RemainingModelCalls: 1,
			CPURuntimeCostUSD: 0.01, RuntimeMS: 2150},
	}
	if diff := cmp.Diff(want, sel.Savings); diff != "" {
		t.Errorf("savings (-want +got):\n%s", diff)
	}
	if len(sel.Warnings) != 1 || sel.Warnings[0].Code != candidate.CodeFuzzySegment || sel.Warnings[0].Step != 2 {
		t.Errorf("warnings = %+v", sel.Warnings)
	}
	// support 1, determinism 0.5, no outputs recorded → consensus 1.
	if sel.Confidence != 0.75 {
		t.Errorf("confidence = %v, want 0.2*1 + 0.5*0.5 + 0.3*1 = 0.75", sel.Confidence)
	}
}

// TestMineRuntimeCostUnpriced: a fuzzy step whose model has no price and
// whose log gave no dollars adds nothing to cpu_runtime_cost_usd, and its
// model is listed as unpriced rather than read as free.
func TestMineRuntimeCostUnpriced(t *testing.T) {
	var traces []*trace.Trace
	for i := range 2 {
		id := fmt.Sprintf("t%d", i)
		a := act(id+"-1", trace.KindToolCall, "fetch", fmt.Sprintf(`{"id":"%d"}`, i))
		m := act(id+"-2", trace.KindModelCall, "classify", "")
		m.Cost = &trace.Cost{Model: "house-model-9", ModelCalls: 1, InputTokens: 1000, OutputTokens: 50, WallMS: 700}
		traces = append(traces, mk(id, a, m))
	}
	s := mustMine(t, traces, Options{}).Selected().Savings
	if s.CPURuntimeCostUSD != 0 || s.RuntimeMS != 1400 {
		t.Errorf("cpu_runtime_cost_usd = %v, runtime_ms = %v; want 0 and 1400", s.CPURuntimeCostUSD, s.RuntimeMS)
	}
	if diff := cmp.Diff([]string{"house-model-9"}, s.UnpricedModels); diff != "" {
		t.Errorf("unpriced models (-want +got):\n%s", diff)
	}
}

func TestMineExclusions(t *testing.T) {
	pair := func(id string) []trace.Action {
		return []trace.Action{act(id+"-1", trace.KindToolCall, "a", ""), act(id+"-2", trace.KindToolCall, "b", "")}
	}
	policy := mk("policy", pair("policy")...)
	policy.Metadata = map[string]any{"unresolved_policy_violation": true}
	fz := true
	nondet := mk("nondet", pair("nondet")...)
	nondet.Actions[1].Fuzzy = &fz
	nondet.Actions[1].SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "x"}}
	r := mustMine(t, []*trace.Trace{mk("ok1", pair("ok1")...), policy, nondet, mk("ok2", pair("ok2")...)}, Options{})
	got := []string{}
	for _, ex := range r.ExcludedTraces {
		got = append(got, ex.TraceID+":"+ex.Code+":"+ex.ActionID)
	}
	want := []string{"policy:unresolved_policy_violation:", "nondet:nondeterministic_side_effect:nondet-2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exclusions (-want +got):\n%s", diff)
	}
	if r.SourceTraceCount != 2 || r.ExcludedTraceCount != 2 || r.SelectedCandidateID == nil {
		t.Errorf("source %d excluded %d selected %v", r.SourceTraceCount, r.ExcludedTraceCount, r.SelectedCandidateID)
	}
}

func TestMineRankingAndMultipleProcedures(t *testing.T) {
	// Procedure P (4 steps) in 3 traces, procedure Q (2 steps) in 4 traces:
	// scores 12 and 8, so P ranks first.
	p := func(id string) []trace.Action {
		return []trace.Action{
			act(id+"-p1", trace.KindToolCall, "p1", ""), act(id+"-p2", trace.KindToolCall, "p2", ""),
			act(id+"-p3", trace.KindToolCall, "p3", ""), act(id+"-p4", trace.KindToolCall, "p4", ""),
		}
	}
	q := func(id string) []trace.Action {
		return []trace.Action{act(id+"-q1", trace.KindToolCall, "q1", ""), act(id+"-q2", trace.KindToolCall, "q2", "")}
	}
	join := func(parts ...[]trace.Action) []trace.Action {
		var out []trace.Action
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	traces := []*trace.Trace{
		mk("t1", join(p("t1"), []trace.Action{noise("t1-x")}, q("t1"))...),
		mk("t2", join(q("t2"), []trace.Action{noise("t2-x")}, p("t2"))...),
		mk("t3", join(p("t3"), []trace.Action{noise("t3-y")})...),
		mk("t4", join([]trace.Action{noise("t4-z")}, q("t4"))...),
		mk("t5", join(q("t5"), []trace.Action{noise("t5-z")})...),
	}
	r := mustMine(t, traces, Options{WorkflowName: "do p"})
	var got []string
	for _, c := range r.Candidates {
		got = append(got, fmt.Sprintf("%s:%d×%d", c.Name, c.Support, len(c.Steps)))
	}
	want := []string{"do_p:3×4", "q1_to_q2:4×2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	r = mustMine(t, traces, Options{MaxCandidates: 1})
	if len(r.Candidates) != 1 {
		t.Errorf("MaxCandidates 1 gave %d candidates", len(r.Candidates))
	}
	r = mustMine(t, traces, Options{MinExamples: 4})
	if len(r.Candidates) != 1 || r.Candidates[0].Name != "q1_to_q2" {
		t.Errorf("MinExamples 4 gave %+v", r.Candidates)
	}
}

func TestMineReceiptConsensus(t *testing.T) {
	rules := []trace.AllowlistRule{{Path: "/effect_receipts/*/receipt_id", Reason: "per run"}}
	mkr := func(id, sha string) *trace.Trace {
		tr := mk(id, act(id+"-1", trace.KindToolCall, "a", ""), act(id+"-2", trace.KindToolCall, "b", ""))
		tr.ReplayAllowlist = rules
		tr.ReplayRun = decodeMap(`{"run_id":"run-` + id + `","effect_receipts":[{"receipt_id":"r-` + id + `","kind":"manifest","sha256":"` + sha + `"}]}`)
		return tr
	}
	sel := mustMine(t, []*trace.Trace{mkr("t1", "same"), mkr("t2", "same")}, Options{}).Selected()
	want := []any{map[string]any{"kind": "manifest", "receipt_id": AllowlistedValue, "sha256": "same"}}
	if diff := cmp.Diff(want, sel.ExpectedReceipts); diff != "" {
		t.Errorf("receipts (-want +got):\n%s", diff)
	}
	sel = mustMine(t, []*trace.Trace{mkr("t1", "one"), mkr("t2", "two")}, Options{}).Selected()
	if len(sel.ExpectedReceipts) != 0 {
		t.Errorf("disagreeing receipts gave %v", sel.ExpectedReceipts)
	}
	if len(sel.Warnings) != 1 || sel.Warnings[0].Code != candidate.CodeReceiptDisagreement || sel.Warnings[0].Path != "/effect_receipts/0/sha256" {
		t.Errorf("warnings = %+v", sel.Warnings)
	}
}

// TestMineReceiptConsensusNested checks that a receipt's arrays are
// merged element by element like its objects: a per-run value inside a
// list of files is masked where the allowlist covers it, and a value the
// examples disagree on there is a disagreement at its own path, not a
// consensus.
func TestMineReceiptConsensusNested(t *testing.T) {
	rules := []trace.AllowlistRule{{Path: "/effect_receipts/*/files/*/upload_id", Reason: "per run"}}
	mkr := func(id, sha string) *trace.Trace {
		tr := mk(id, act(id+"-1", trace.KindToolCall, "a", ""), act(id+"-2", trace.KindToolCall, "b", ""))
		tr.ReplayAllowlist = rules
		tr.ReplayRun = decodeMap(`{"effect_receipts":[{"kind":"upload","files":[{"path":"a.tar","sha256":"` + sha + `","upload_id":"u-` + id + `"}]}]}`)
		return tr
	}
	sel := mustMine(t, []*trace.Trace{mkr("t1", "same"), mkr("t2", "same")}, Options{}).Selected()
	want := []any{map[string]any{"kind": "upload", "files": []any{map[string]any{"path": "a.tar", "sha256": "same", "upload_id": AllowlistedValue}}}}
	if diff := cmp.Diff(want, sel.ExpectedReceipts); diff != "" {
		t.Errorf("receipts (-want +got):\n%s", diff)
	}
	sel = mustMine(t, []*trace.Trace{mkr("t1", "one"), mkr("t2", "two")}, Options{}).Selected()
	if len(sel.ExpectedReceipts) != 0 {
		t.Errorf("disagreeing receipts gave %v", sel.ExpectedReceipts)
	}
	if len(sel.Warnings) != 1 || sel.Warnings[0].Code != candidate.CodeReceiptDisagreement || sel.Warnings[0].Path != "/effect_receipts/0/files/0/sha256" {
		t.Errorf("warnings = %+v", sel.Warnings)
	}
}

func TestMineSecretKeyNeverLiteral(t *testing.T) {
	var traces []*trace.Trace
	for i := range 2 {
		id := fmt.Sprintf("t%d", i)
		traces = append(traces, mk(id,
			act(id+"-1", trace.KindToolCall, "publish", `{"api_token":"sk-live-abcdef0123456789","pkg":"x"}`),
			act(id+"-2", trace.KindToolCall, "b", "")))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	arg := sel.Steps[0].Arguments[0]
	if arg.Kind != candidate.ArgSecret || arg.Secret != "API_TOKEN" || arg.Value != nil {
		t.Errorf("api_token argument = %+v, want secret API_TOKEN", arg)
	}
	if diff := cmp.Diff([]string{"API_TOKEN"}, sel.RequiredSecrets); diff != "" {
		t.Errorf("required secrets (-want +got):\n%s", diff)
	}
	b, _ := json.Marshal(sel)
	if strings.Contains(string(b), "sk-live") {
		t.Error("the secret value appears in the candidate")
	}
}

func TestMineDivergentApproval(t *testing.T) {
	var traces []*trace.Trace
	for i := range 2 {
		id := fmt.Sprintf("t%d", i)
		a := act(id+"-1", trace.KindToolCall, "deploy", "")
		if i == 0 {
			a.Approval = &trace.Approval{Required: true, Boundary: "deploy_gate"}
		}
		traces = append(traces, mk(id, a, act(id+"-2", trace.KindToolCall, "b", "")))
	}
	r := mustMine(t, traces, Options{})
	if r.SelectedCandidateID != nil || r.RejectedCandidates[0].RejectionReasons[0].Code != "divergent_approval" {
		t.Errorf("report = %+v", r.RejectedCandidates)
	}
}

func TestMineOptions(t *testing.T) {
	_, err := Mine(context.Background(), nil, Options{MinExamples: 1})
	if !errors.Is(err, ErrMinExamples) {
		t.Errorf("MinExamples 1: err = %v, want ErrMinExamples", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Mine(ctx, []*trace.Trace{mk("a"), mk("b")}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	r := mustMine(t, []*trace.Trace{mk("a", noise("x"))}, Options{})
	if r.SelectedCandidateID != nil || r.Warnings[0].Code != candidate.CodeNoCandidate {
		t.Errorf("one trace: %+v", r)
	}
}

func TestCandidateIDMatchesDesignFormula(t *testing.T) {
	got := candidateID([]string{"a:b:", "c:d:x"}, []candidate.Example{{SourceHash: "sha256:1"}, {SourceHash: "sha256:2"}})
	// first 16 hex of sha256("a:b:\x00c:d:x\x00sha256:1\x00sha256:2\x00")
	if want := "candidate_24cc606f70275b98"; got != want {
		t.Errorf("candidateID = %s, want %s", got, want)
	}
}

func TestCanonicalDistinguishes(t *testing.T) {
	values := []string{
		`"1"`, `1`, `1.0`, `true`, `"t"`, `null`, `"z"`, `""`, `[]`, `{}`, `[""]`, `[[]]`,
		`{"a":"b"}`, `{"a":"bc"}`, `{"ab":"c"}`, `["a","b"]`, `["ab"]`, `{"a":1,"b":2}`, `[{"a":1},{"b":2}]`,
	}
	seen := map[string]string{}
	for _, v := range values {
		c := canonical(decodeAny(v))
		if prev, dup := seen[c]; dup {
			t.Errorf("canonical(%s) = canonical(%s) = %q", v, prev, c)
		}
		seen[c] = v
	}
	if canonical(decodeAny(`{"b":2,"a":1}`)) != canonical(decodeAny(`{"a":1,"b":2}`)) {
		t.Error("key order changes the canonical form")
	}
}

func TestMineSkipsIncidentalVariants(t *testing.T) {
	// P = a b c in 30 traces; in 2 of them it is followed by the same
	// unrelated step z. "a b c z" is a maximal repeat, but a variant of P.
	var traces []*trace.Trace
	for i := range 30 {
		id := fmt.Sprintf("t%02d", i)
		acts := []trace.Action{
			act(id+"-a", trace.KindToolCall, "a", ""), act(id+"-b", trace.KindToolCall, "b", ""),
			act(id+"-c", trace.KindToolCall, "c", ""),
		}
		if i < 2 {
			acts = append(acts, act(id+"-z", trace.KindToolCall, "z", ""))
		} else {
			acts = append(acts, noise(id+"-n"))
		}
		traces = append(traces, mk(id, acts...))
	}
	r := mustMine(t, traces, Options{})
	if len(r.Candidates) != 1 || len(r.Candidates[0].Steps) != 3 {
		var got []string
		for _, c := range r.Candidates {
			got = append(got, strings.Join(c.SequenceSignature, " "))
		}
		t.Errorf("candidates = %q, want only a b c", got)
	}
}

func TestMineSecretValueNeverLiteral(t *testing.T) {
	// The key says nothing, the value is a token: it still becomes a
	// secret, and neither the constant nor an example value is recorded.
	var traces []*trace.Trace
	for i := range 2 {
		id := fmt.Sprintf("t%d", i)
		traces = append(traces, mk(id,
			act(id+"-1", trace.KindToolCall, "notify", `{"header":"Bearer abcdefghijklmnopqrstuvwxyz012345","room":"#ops"}`),
			act(id+"-2", trace.KindToolCall, "b", "")))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	arg := sel.Steps[0].Arguments[0]
	if arg.Kind != candidate.ArgSecret || arg.Secret != "HEADER" {
		t.Errorf("header argument = %+v, want secret HEADER", arg)
	}
	if got := sel.Steps[0].Arguments[1]; got.Kind != candidate.ArgConstant || got.Value != "#ops" {
		t.Errorf("room argument = %+v, want the constant #ops", got)
	}
	b, _ := json.Marshal(sel)
	if strings.Contains(string(b), "abcdefghijklmnop") {
		t.Error("the token appears in the candidate")
	}
}

func TestMineReceiptsMissingInSomeExamples(t *testing.T) {
	with := mk("t1", act("t1-1", trace.KindToolCall, "a", ""), act("t1-2", trace.KindToolCall, "b", ""))
	with.ReplayRun = decodeMap(`{"run_id":"r1","effect_receipts":[{"kind":"manifest","sha256":"x"}]}`)
	without := mk("t2", act("t2-1", trace.KindToolCall, "a", ""), act("t2-2", trace.KindToolCall, "b", ""))
	sel := mustMine(t, []*trace.Trace{with, without}, Options{}).Selected()
	if len(sel.ExpectedReceipts) != 0 {
		t.Errorf("expected receipts = %v, want none when an example recorded none", sel.ExpectedReceipts)
	}
	if len(sel.Warnings) != 1 || sel.Warnings[0].Code != candidate.CodeReceiptsMissing {
		t.Errorf("warnings = %+v, want receipts_missing", sel.Warnings)
	}
}

// TestMineDivergentBoundary: examples that stop at different approval
// boundaries are not one procedure; the first example's boundary is not
// kept for all of them.
func TestMineDivergentBoundary(t *testing.T) {
	var traces []*trace.Trace
	for i, boundary := range []string{"publish", "deploy", "publish"} {
		id := fmt.Sprintf("t%d", i)
		a := act(id+"-1", trace.KindToolCall, "release", "")
		a.Approval = &trace.Approval{Required: true, Boundary: boundary}
		traces = append(traces, mk(id, a, act(id+"-2", trace.KindToolCall, "b", "")))
	}
	r := mustMine(t, traces, Options{})
	if r.SelectedCandidateID != nil || len(r.RejectedCandidates) == 0 {
		t.Fatalf("selected %v, rejected %d: want the candidate rejected", r.SelectedCandidateID, len(r.RejectedCandidates))
	}
	want := candidate.Problem{
		Code:    "divergent_approval",
		Message: `step 1 release: the examples stop at different approval boundaries "publish", "deploy"`,
		Step:    1,
		Path:    "steps[1].approval.boundary",
	}
	if diff := cmp.Diff(want, r.RejectedCandidates[0].RejectionReasons[0]); diff != "" {
		t.Errorf("rejection (-want +got):\n%s", diff)
	}
}

// TestMineModelInputs: a model call's inputs are arguments of its step as
// parameters are: a title step 1 returned is a binding, a value that
// varies is a parameter, and an input only some examples passed is no
// argument (a review note says so).
func TestMineModelInputs(t *testing.T) {
	var traces []*trace.Trace
	for i, title := range []string{"Crash on save", "Add dark mode", "Panic on empty config"} {
		id := fmt.Sprintf("t%d", i)
		get := act(id+"-1", trace.KindToolCall, "issues.get", fmt.Sprintf(`{"number": %d}`, i))
		get.Output = map[string]any{"title": title}
		classify := act(id+"-2", trace.KindModelCall, "classify_issue", "")
		inputs := map[string]any{"title": title, "tone": fmt.Sprintf("tone-%d", i)}
		if i == 0 {
			inputs["hint"] = "first run only"
		}
		classify.Inputs = inputs
		traces = append(traces, mk(id, get, classify))
	}
	sel := mustMine(t, traces, Options{}).Selected()
	if sel == nil {
		t.Fatal("no candidate selected")
	}
	step := sel.Steps[1]
	var got []string
	for _, a := range step.Arguments {
		s := a.Key + " " + string(a.Kind)
		if a.Binding != nil {
			s += fmt.Sprintf(" step %d %s", a.Binding.FromStep, a.Binding.FromPath)
		}
		got = append(got, s)
	}
	want := []string{"title binding step 1 $.title", "tone parameter"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("step 2 arguments (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(step.ReviewNotes, func(n string) bool { return strings.Contains(n, `inputs "hint" were passed in some examples only`) }) {
		t.Errorf("review notes %q do not name the dropped input", step.ReviewNotes)
	}
}

// TestMinePromptTemplate: an approval whose examples asked about their own
// values is templated from the step's arguments; one no template reads is
// a parameter; one every example asked the same stays literal.
func TestMinePromptTemplate(t *testing.T) {
	mine := func(prompt func(i int, v string) string) candidate.Step {
		t.Helper()
		var traces []*trace.Trace
		for i, v := range []string{"0.1.1", "0.1.2", "0.2.0"} {
			id := fmt.Sprintf("t%d", i)
			gate := act(id+"-2", trace.KindHumanApproval, "confirm_release", fmt.Sprintf(`{"version": %q}`, v))
			gate.Approval = &trace.Approval{Required: true, Boundary: "publish", Prompt: prompt(i, v)}
			traces = append(traces, mk(id, act(id+"-1", trace.KindToolCall, "cargo.set_version", fmt.Sprintf(`{"version": %q}`, v)), gate))
		}
		sel := mustMine(t, traces, Options{}).Selected()
		if sel == nil {
			t.Fatal("no candidate selected")
		}
		return sel.Steps[1]
	}
	got := mine(func(_ int, v string) string { return "Publish " + v + " to crates.io?" }).PromptTemplate
	want := []candidate.PromptPart{{Text: "Publish "}, {Step: 1, Key: "version"}, {Text: " to crates.io?"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("templated prompt (-want +got):\n%s", diff)
	}
	step := mine(func(i int, _ string) string { return []string{"Ship it?", "Go ahead?", "Release now?"}[i] })
	if diff := cmp.Diff([]candidate.PromptPart{{Parameter: "approval_prompt"}}, step.PromptTemplate); diff != "" {
		t.Errorf("varying prompt (-want +got):\n%s", diff)
	}
	if !slices.Contains(step.ParameterRefs, "approval_prompt") {
		t.Errorf("parameter refs %q lack approval_prompt", step.ParameterRefs)
	}
	if got := mine(func(int, string) string { return "Publish?" }).PromptTemplate; got != nil {
		t.Errorf("a prompt every example asked is templated: %+v", got)
	}
}

// TestMineTooFewTraces checks that a corpus with fewer eligible traces
// than a candidate needs examples stops before mining, with one warning
// that says so: no other reason for finding nothing is given, since none
// was looked for.
func TestMineTooFewTraces(t *testing.T) {
	steps := func(id string) []trace.Action {
		return []trace.Action{act(id+"-1", trace.KindToolCall, "a", ""), act(id+"-2", trace.KindToolCall, "b", "")}
	}
	r := mustMine(t, []*trace.Trace{mk("t1", steps("t1")...), mk("t2", steps("t2")...)}, Options{MinExamples: 3})
	want := []candidate.Problem{{Code: candidate.CodeNoCandidate, Message: "2 eligible traces, fewer than the 3 examples a candidate needs"}}
	if diff := cmp.Diff(want, r.Warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if len(r.Candidates) != 0 || len(r.RejectedCandidates) != 0 || r.Mining.RepeatsFound != 0 {
		t.Errorf("candidates %d, rejected %d, repeats %d; want nothing mined", len(r.Candidates), len(r.RejectedCandidates), r.Mining.RepeatsFound)
	}
}
