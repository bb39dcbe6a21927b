package persona

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/codegen"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// line renders one history record. bundle and result are JSON texts;
// day counts days from 2026-01-01 (day 0), calls the worker's model calls.
type line struct {
	persona, worker, status, errs string
	bundle, result, action        string
	day                           int
	calls                         int
}

func (l line) String() string {
	p := l
	if p.persona == "" {
		p.persona = "merge_captain"
	}
	if p.worker == "" {
		p.worker = "conflict_repair"
	}
	if p.status == "" {
		p.status = "success"
	}
	if p.errs == "" {
		p.errs = "[]"
	}
	if p.bundle == "" {
		p.bundle = `{"kind":"merge_conflict","repo":"acme/api","conflict_paths":["Cargo.lock"],"required_verification":["cargo test"]}`
	}
	if p.result == "" {
		p.result = `{"diagnosis":"lockfile","files_changed":["Cargo.lock"],"tests_run":["cargo test"],"commits_created":1}`
	}
	if p.action == "" {
		p.action = "merge_pull_request"
	}
	if p.calls == 0 {
		p.calls = 10
	}
	ts := dayStamp(p.day)
	return fmt.Sprintf(`{"persona":%q,"worker":%q,"status":%q,"validation_errors":%s,"bundle":%s,"result":%s,"downstream_action":%q,"agent_loop":{"model_calls":%d,"input_tokens":1000,"output_tokens":100,"cost_usd":0.25,"wall_ms":60000},"finished_at":%q}`,
		p.persona, p.worker, p.status, p.errs, p.bundle, p.result, p.action, p.calls, ts)
}

// dayStamp is midnight UTC of day d counted from 2026-01-01 (day 0).
func dayStamp(d int) string {
	month, day := 1, 1+d
	days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for day > days[month-1] {
		day -= days[month-1]
		month++
	}
	return fmt.Sprintf("2026-%02d-%02dT00:00:00Z", month, day)
}

func decode(t *testing.T, lines ...line) []*Record {
	t.Helper()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	recs, err := Decode(strings.NewReader(b.String()), "history.jsonl")
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return recs
}

// recurring is four clean, agreeing records over 120 days.
func recurring() []line {
	return []line{{day: 0}, {day: 40}, {day: 80}, {day: 120}}
}

func codes(ps []candidate.Problem) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Code)
	}
	return out
}

func TestEvaluateDecisions(t *testing.T) {
	otherBundle := `{"kind":"merge_conflict","repo":"acme/api","conflict_paths":["Cargo.lock"],"required_verification":["cargo test"],"extra":true}`
	otherResult := `{"diagnosis":"lockfile","files_changed":["Cargo.lock"],"tests_run":["cargo test"],"commits_created":"one"}`
	tests := []struct {
		name     string
		lines    []line
		opts     Options
		decision Decision
		reasons  []string
		paths    []string
		warnings []string
	}{
		{"proposed", recurring(), Options{}, Proposed, []string{}, nil, []string{}},
		{"no records of the persona", []line{{persona: "other"}}, Options{}, Gated, []string{CodeNoRecords}, nil, []string{}},
		{"empty history", nil, Options{}, Gated, []string{CodeNoRecords}, nil, []string{}},
		{"too few examples", []line{{day: 0}, {day: 100}}, Options{}, Gated, []string{CodeTooFewExamples}, nil, []string{}},
		{"insufficient history", []line{{day: 0}, {day: 10}, {day: 20}}, Options{}, Gated, []string{CodeInsufficientHistory}, nil, []string{}},
		{"both gates", []line{{day: 0}}, Options{}, Gated, []string{CodeTooFewExamples, CodeInsufficientHistory}, nil, []string{}},
		{"hosted history given overrides timestamps", []line{{day: 0}, {day: 1}, {day: 2}}, Options{HostedHistoryDays: ptr(91)}, Proposed, []string{}, nil, []string{}},
		{"hosted history given can gate", recurring(), Options{HostedHistoryDays: ptr(89)}, Gated, []string{CodeInsufficientHistory}, nil, []string{}},
		{"no history minimum", []line{{day: 0}, {day: 0}, {day: 0}}, Options{MinHostedHistoryDays: -1}, Proposed, []string{}, nil, []string{}},
		{"min examples raised", recurring(), Options{MinExamples: 5}, Gated, []string{CodeTooFewExamples}, nil, []string{}},
		{
			"unclean records are left out and noted",
			append(recurring(), line{status: "failed", action: "escalate", day: 130}, line{errs: `["tests failed"]`, day: 131}),
			Options{}, Proposed, []string{}, nil, []string{CodeUncleanRecords},
		},
		{
			"only unclean records",
			[]line{{status: "failed", day: 0}, {status: "error", day: 100}, {errs: `["x"]`, day: 200}},
			Options{}, Gated, []string{CodeTooFewExamples, CodeInsufficientHistory}, nil, []string{CodeUncleanRecords},
		},
		// One record that went another way forms a group of its own; it
		// does not veto the recurring group.
		{"worker mismatch", append(recurring(), line{worker: "lint_fix", day: 5}), Options{}, Proposed, []string{}, nil, []string{CodeOtherGroups}},
		{"input shape mismatch", append(recurring(), line{bundle: otherBundle, day: 5}), Options{}, Proposed, []string{}, nil, []string{CodeOtherGroups}},
		{"output shape mismatch", append(recurring(), line{result: otherResult, day: 5}), Options{}, Proposed, []string{}, nil, []string{CodeOtherGroups}},
		{"downstream mismatch", append(recurring(), line{action: "close", day: 5}), Options{}, Proposed, []string{}, nil, []string{CodeOtherGroups}},
		{
			// No group is large enough: the strongest group's gates.
			"groups all too small",
			[]line{{day: 0}, {action: "request_review", day: 1}},
			Options{}, Gated, []string{CodeTooFewExamples, CodeInsufficientHistory}, nil, []string{CodeOtherGroups},
		},
		{
			"success vocabulary, any case",
			[]line{{status: "completed", day: 0}, {status: "Succeeded", day: 30}, {status: "PASSED", day: 60}, {status: "done", day: 90}, {status: "OK", day: 100}, {status: "Success", day: 120}},
			Options{}, Proposed, []string{}, nil, []string{},
		},
		{
			"unknown status is named",
			append(recurring(), line{status: "finished_ok", day: 130}),
			Options{}, Proposed, []string{}, nil, []string{CodeUnknownStatus},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Persona = "merge_captain"
			res, err := Evaluate(decode(t, tt.lines...), opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision != tt.decision {
				t.Errorf("Decision = %s, want %s (reasons %v)", res.Decision, tt.decision, res.Reasons)
			}
			if diff := cmp.Diff(tt.reasons, codes(res.Reasons)); diff != "" {
				t.Errorf("reason codes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, codes(res.Warnings)); diff != "" {
				t.Errorf("warning codes (-want +got):\n%s", diff)
			}
			for i, p := range tt.paths {
				if res.Reasons[i].Path != p {
					t.Errorf("Reasons[%d].Path = %q, want %q", i, res.Reasons[i].Path, p)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestEvaluateGroups checks the grouping: a history of four merges and one
// close over 120 days, all completed, proposes the merges and lists the
// close with why it was not chosen; two eligible groups propose the
// larger and list the other as a weaker candidate.
func TestEvaluateGroups(t *testing.T) {
	type grp struct {
		Action   string
		Examples int
		Status   string
		Reasons  []string
		Lines    []int
	}
	summarize := func(res *Result) []grp {
		var out []grp
		for _, g := range res.Groups {
			out = append(out, grp{g.DownstreamAction, g.Examples, g.Status, codes(g.Reasons), g.Lines})
		}
		return out
	}
	tests := []struct {
		name     string
		lines    []line
		decision Decision
		action   string
		groups   []grp
	}{
		{
			"one close among four merges",
			[]line{{status: "completed", day: 0}, {status: "completed", day: 40}, {status: "completed", action: "close", day: 60}, {status: "completed", day: 80}, {status: "completed", day: 120}},
			Proposed, "merge_pull_request",
			[]grp{
				{"merge_pull_request", 4, GroupProposed, []string{}, []int{1, 2, 4, 5}},
				{"close", 1, GroupGated, []string{CodeTooFewExamples, CodeInsufficientHistory, CodeDownstreamMismatch}, []int{3}},
			},
		},
		{
			"two eligible groups",
			[]line{{action: "close", day: 0}, {day: 1}, {action: "close", day: 50}, {day: 40}, {action: "close", day: 100}, {day: 80}, {day: 120}},
			Proposed, "merge_pull_request",
			[]grp{
				{"merge_pull_request", 4, GroupProposed, []string{}, []int{2, 4, 6, 7}},
				{"close", 3, GroupCandidate, []string{CodeWeakerGroup, CodeDownstreamMismatch}, []int{1, 3, 5}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Evaluate(decode(t, tt.lines...), Options{Persona: "merge_captain"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision != tt.decision || res.DownstreamAction != tt.action {
				t.Errorf("Decision, DownstreamAction = %s, %q; want %s, %q (reasons %v)", res.Decision, res.DownstreamAction, tt.decision, tt.action, res.Reasons)
			}
			if diff := cmp.Diff(tt.groups, summarize(res)); diff != "" {
				t.Errorf("groups (-want +got):\n%s", diff)
			}
		})
	}
	// Crystallize builds the proposal from the chosen group alone.
	res, err := Crystallize(context.Background(), decode(t, tests[0].lines...), Options{Persona: "merge_captain"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != Proposed || res.Proposal == nil || len(res.Proposal.Traces) != 4 {
		t.Fatalf("Crystallize = %s with %v; want proposed from 4 records", res.Decision, res.Reasons)
	}
}

// TestUnknownStatusMessage checks that the warning names the status.
func TestUnknownStatusMessage(t *testing.T) {
	res, err := Evaluate(decode(t, append(recurring(), line{status: "finished_ok", day: 130})...), Options{Persona: "merge_captain"})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Warnings[0]
	if w.Code != CodeUnknownStatus || !strings.Contains(w.Message, `"finished_ok"`) || !strings.Contains(w.Message, "line") || w.Path != "$.status" {
		t.Errorf("warning = %+v, want unknown_status naming \"finished_ok\" and its line", w)
	}
}

func TestEvaluateHistoryDays(t *testing.T) {
	res, err := Evaluate(decode(t, line{day: 120}, line{day: 0}, line{day: 45}), Options{Persona: "merge_captain"})
	if err != nil {
		t.Fatal(err)
	}
	if res.HistoryDays != 120 || res.HistorySource != HistoryFromTimestamps || res.Examples != 3 || res.Worker != "conflict_repair" {
		t.Errorf("Evaluate = history %d (%s) examples %d worker %q, want 120 (timestamps) 3 conflict_repair", res.HistoryDays, res.HistorySource, res.Examples, res.Worker)
	}
}

func TestEvaluateOptions(t *testing.T) {
	for _, opts := range []Options{{}, {Persona: "p", MinExamples: 1}, {Persona: "p", HostedHistoryDays: ptr(-1)}} {
		if _, err := Evaluate(nil, opts); err == nil {
			t.Errorf("Evaluate(%+v) = nil error, want one", opts)
		}
	}
	if _, err := Evaluate(nil, Options{}); !errors.Is(err, ErrNoPersona) {
		t.Errorf("Evaluate without persona = %v, want ErrNoPersona", err)
	}
}

func TestShape(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":"x"}`, `{"b":"y","a":2.5}`, true},
		{`{"a":[1,2,3]}`, `{"a":[7]}`, true},
		{`{"a":[{"x":1}]}`, `{"a":[{"x":2},{"x":3}]}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":[]}`, `{"a":[1]}`, false},
		{`{"a":[1]}`, `{"a":[1,"x"]}`, false},
		{`{"a":{"b":{"c":true}}}`, `{"a":{"b":{"c":false}}}`, true},
		{`{"a":{"b":{"c":true}}}`, `{"a":{"b":{"c":true,"d":1}}}`, false},
		{`{"a,b":1}`, `{"a":1,"b":1}`, false},
	}
	for _, tt := range tests {
		a, _ := trace.ParseJSON([]byte(tt.a), "a", 0)
		b, _ := trace.ParseJSON([]byte(tt.b), "b", 0)
		if got := Shape(a) == Shape(b); got != tt.same {
			t.Errorf("Shape(%s) == Shape(%s) = %v, want %v (%s vs %s)", tt.a, tt.b, got, tt.same, Describe(a), Describe(b))
		}
		if s := Shape(a); !strings.HasPrefix(s, "sha256:") || len(s) != len("sha256:")+64 {
			t.Errorf("Shape(%s) = %q, want sha256:<64 hex>", tt.a, s)
		}
	}
	v, _ := trace.ParseJSON([]byte(`{"b":[1,"x",{"k":null}],"a":true}`), "v", 0)
	if got, want := Describe(v), `{"a":boolean,"b":[number|string|{"k":null}]}`; got != want {
		t.Errorf("Describe = %s, want %s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	good := line{}.String()
	input := strings.Join([]string{
		good,
		`{"persona":"p","worker":"w","status":"ok","finished_at":"2026-01-01T00:00:00Z"}`,
		``,
		`{oops}`,
		`{"persona":"","worker":3,"status":"ok","bundle":[],"agent_loop":{"model_calls":-1},"finished_at":"yesterday"}`,
		`[1]`,
		good,
	}, "\r\n")
	_, err := Decode(strings.NewReader(input), "h.jsonl")
	var list trace.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Decode = %v, want a trace.ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	want := []string{
		"h.jsonl:2: $.bundle: missing required field",
		"h.jsonl:4:2: invalid JSON: invalid character 'o' looking for beginning of object key string",
		"h.jsonl:5: $.persona: empty persona",
		"h.jsonl:5: $.worker: expected string, got number",
		"h.jsonl:5: $.bundle: expected object, got array",
		"h.jsonl:5: $.agent_loop.model_calls: expected non-negative integer, got -1",
		`h.jsonl:5: $.finished_at: expected an RFC 3339 timestamp, got "yesterday"`,
		"h.jsonl:6: $: expected object, got array",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode errors (-want +got):\n%s", diff)
	}
}

func TestDecodeRecord(t *testing.T) {
	recs := decode(t, line{status: "ok", calls: 7})
	r := recs[0]
	if r.Persona != "merge_captain" || r.Worker != "conflict_repair" || !r.Clean() || r.Line != 1 ||
		r.AgentLoop != (AgentLoop{ModelCalls: 7, InputTokens: 1000, OutputTokens: 100, CostUSD: 0.25, WallMS: 60000}) ||
		r.DownstreamAction != "merge_pull_request" || !strings.HasPrefix(r.SourceHash, "sha256:") {
		t.Errorf("Decode = %+v", r)
	}
}

func crystallize(t *testing.T, lines []line, opts Options) *Result {
	t.Helper()
	opts.Persona = "merge_captain"
	res, err := Crystallize(context.Background(), decode(t, lines...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCrystallizeProposal(t *testing.T) {
	lines := recurring()
	lines[1].bundle = `{"kind":"merge_conflict","repo":"acme/web","conflict_paths":["a.lock","b.lock"],"required_verification":["cargo test"]}`
	lines[1].result = `{"diagnosis":"lockfile","files_changed":["a.lock","b.lock"],"tests_run":["cargo test"],"commits_created":1}`
	lines[2].calls = 30
	res := crystallize(t, lines, Options{GeneratedAt: "2026-06-01T00:00:00Z"})
	if res.Decision != Proposed || res.Proposal == nil {
		t.Fatalf("Decision = %s %v, want proposed", res.Decision, res.Reasons)
	}
	p := res.Proposal
	c := p.Candidate
	if c.Name != "merge_captain_conflict_repair_step" || p.FuncName != c.Name {
		t.Errorf("candidate name %q, func %q", c.Name, p.FuncName)
	}
	var steps []string
	for _, s := range c.Steps {
		steps = append(steps, s.Name+"/"+string(s.Segment))
	}
	if diff := cmp.Diff([]string{"read_repair_bundle/deterministic", "conflict_repair/deterministic", "downstream_action/deterministic"}, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	// Savings are the agent loops of the matched records: 10+10+30+10.
	s := c.Savings
	if s.ModelCallsAvoided != 60 || s.Runs != 4 || s.PerRun.ModelCallsAvoided != 15 || s.InputTokensAvoided != 4000 || s.EstimatedCostUSDAvoided != 1 {
		t.Errorf("Savings = %+v", s)
	}
	// The shadow comparison ran over every matched record.
	if sh := c.Shadow; sh == nil || !sh.Pass || sh.ComparedTraces != 4 {
		t.Fatalf("Shadow = %+v, want 4 compared, pass", sh)
	}
	// The patch checks and reads varying members from the bundle.
	if err := codegen.Check(PatchFile, p.Workflow, p.FuncName); err != nil {
		t.Fatalf("patch does not check: %v\n%s", err, p.Workflow)
	}
	if _, err := (&syntax.FileOptions{}).Parse(PatchFile, p.Workflow, 0); err != nil {
		t.Fatalf("patch does not parse: %v", err)
	}
	for _, want := range []string{
		"def merge_captain_conflict_repair_step(ctx, bundle):",
		`"files_changed": bundle["conflict_paths"],`,
		`"tests_run": ["cargo test"],`,
		`"commits_created": 1,`,
		"never applied automatically",
		c.ID,
	} {
		if !strings.Contains(string(p.Workflow), want) {
			t.Errorf("patch lacks %q:\n%s", want, p.Workflow)
		}
	}
	// Same input, same bytes.
	again := crystallize(t, lines, Options{GeneratedAt: "2026-06-01T00:00:00Z"})
	if string(again.Proposal.Workflow) != string(p.Workflow) || again.Proposal.Candidate.ID != c.ID {
		t.Error("Crystallize is not deterministic")
	}
}

// TestPatchRuns executes the patch on every matched record's bundle and
// checks that it returns the record's result: the literal step is what the
// worker did.
func TestPatchRuns(t *testing.T) {
	lines := recurring()
	lines[2].bundle = `{"kind":"merge_conflict","repo":"acme/x","conflict_paths":["x.lock"],"required_verification":["make check"]}`
	lines[2].result = `{"diagnosis":"lockfile","files_changed":["x.lock"],"tests_run":["make check"],"commits_created":1}`
	res := crystallize(t, lines, Options{})
	p := res.Proposal
	if p == nil {
		t.Fatalf("Decision = %s %v", res.Decision, res.Reasons)
	}
	globals, err := starlark.ExecFileOptions(&syntax.FileOptions{}, &starlark.Thread{}, PatchFile, p.Workflow, nil)
	if err != nil {
		t.Fatal(err)
	}
	fn := globals[p.FuncName]
	for _, r := range res.matched {
		bundle, err := starlarkValue(r.Bundle)
		if err != nil {
			t.Fatal(err)
		}
		got, err := starlark.Call(&starlark.Thread{}, fn, starlark.Tuple{starlark.None, bundle}, nil)
		if err != nil {
			t.Fatalf("line %d: %v", r.Line, err)
		}
		want, _ := starlarkValue(r.Result)
		if eq, err := starlark.Equal(got, want); err != nil || !eq {
			t.Errorf("line %d: patch returned %s, want %s", r.Line, got, want)
		}
	}
}

// starlarkValue converts a generic JSON value through the patch literal
// renderer, so the test also checks that literals denote their values.
func starlarkValue(v any) (starlark.Value, error) {
	src, err := literal(v, 0, 0)
	if err != nil {
		return nil, err
	}
	return starlark.EvalOptions(&syntax.FileOptions{}, &starlark.Thread{}, "v", src, nil)
}

func TestPatchVaryingMember(t *testing.T) {
	lines := recurring()
	lines[3].result = `{"diagnosis":"lockfile, again","files_changed":["Cargo.lock"],"tests_run":["cargo test"],"commits_created":1}`
	res := crystallize(t, lines, Options{})
	if res.Decision != Proposed {
		t.Fatalf("Decision = %s %v", res.Decision, res.Reasons)
	}
	if diff := cmp.Diff([]string{CodeVaryingResult}, codes(res.Warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	src := string(res.Proposal.Workflow)
	if !strings.Contains(src, "# review_required: diagnosis varies") || !strings.Contains(src, `"diagnosis": ctx.model("merge_captain_conflict_repair_step.diagnosis"`) {
		t.Errorf("patch does not ask a model for the varying member:\n%s", src)
	}
	if !strings.Contains(fmt.Sprint(codes(res.Proposal.Candidate.Warnings)), CodeVaryingResult) {
		t.Errorf("candidate warnings %v lack %s", codes(res.Proposal.Candidate.Warnings), CodeVaryingResult)
	}
}

func TestPatchHostileNames(t *testing.T) {
	lines := []line{
		{persona: "merge captain\n", worker: `def x():`, day: 0, result: `{"a\"\n)":"\u202e\u0000","for":1.5e300,"big":123456789012345678901234567890}`},
		{persona: "merge captain\n", worker: `def x():`, day: 100, result: `{"a\"\n)":"\u202e\u0000","for":1.5e300,"big":123456789012345678901234567890}`},
	}
	res, err := Crystallize(context.Background(), decode(t, lines...), Options{Persona: "merge captain\n", MinExamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Proposal == nil {
		t.Fatalf("Decision = %s %v", res.Decision, res.Reasons)
	}
	if err := codegen.Check(PatchFile, res.Proposal.Workflow, res.Proposal.FuncName); err != nil {
		t.Errorf("patch does not check: %v\n%s", err, res.Proposal.Workflow)
	}
}

// TestShadowMismatchFails shows that the shadow comparison is computed:
// a record whose result shape or downstream action differs from the
// candidate's fails it.
func TestShadowMismatchFails(t *testing.T) {
	res := crystallize(t, recurring(), Options{})
	c := res.Proposal.Candidate
	tests := []struct {
		name string
		l    line
		code string
		step int
	}{
		{"result shape", line{result: `{"diagnosis":"lockfile","files_changed":["Cargo.lock"],"tests_run":["cargo test"]}`, day: 200}, candidate.CodeOutputDiffers, 2},
		{"input shape", line{bundle: `{"kind":"merge_conflict"}`, day: 200}, candidate.CodeOutputDiffers, 1},
		{"downstream action", line{action: "request_review", day: 200}, candidate.CodeOutputDiffers, 3},
		{"worker", line{worker: "other", day: 200}, candidate.CodeSignatureMismatch, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := decode(t, tt.l)[0]
			sh := replay.Shadow(c, res.Proposal.Traces, []*trace.Trace{Trace(rec)})
			if sh.ComparedTraces != 5 || len(sh.Failures) != 1 || sh.Traces[4].Status != candidate.StatusFail {
				t.Fatalf("Shadow = %+v, want the four sources to pass and the held-out record to fail", sh)
			}
			st := sh.Traces[4]
			if st.FirstDivergentStep != tt.step || !slices.Contains(codes(st.Details), tt.code) {
				t.Errorf("first divergent step %d details %v, want step %d code %s", st.FirstDivergentStep, st.Details, tt.step, tt.code)
			}
		})
	}
	same := decode(t, line{day: 300})[0]
	if sh := replay.Shadow(c, res.Proposal.Traces, []*trace.Trace{Trace(same)}); !sh.Pass {
		t.Errorf("Shadow of an agreeing record = %+v, want pass", sh)
	}
}

func TestTraceIsAValidTrace(t *testing.T) {
	rec := decode(t, line{})[0]
	tr := Trace(rec)
	raw, err := candidate.EncodeJSON(tr)
	if err != nil {
		t.Fatal(err)
	}
	back, err := trace.Decode(raw, "t.json", 0)
	if err != nil {
		t.Fatalf("trace.Decode of Trace: %v", err)
	}
	if back.ID != "merge_captain.conflict_repair.L1" || back.SourceHash != rec.SourceHash || len(back.Actions) != 3 {
		t.Errorf("round trip = id %s hash %s actions %d", back.ID, back.SourceHash, len(back.Actions))
	}
	if got := codegen.FixturePath(back.ID); got != "fixtures/merge_captain.conflict_repair.L1.json" {
		t.Errorf("FixturePath = %s", got)
	}
}

func TestPatchNoResult(t *testing.T) {
	lines := recurring()
	for i := range lines {
		lines[i].result = "null"
	}
	res := crystallize(t, lines, Options{})
	if res.Proposal == nil {
		t.Fatalf("Decision = %s %v", res.Decision, res.Reasons)
	}
	if src := string(res.Proposal.Workflow); !strings.Contains(src, "    return None\n") {
		t.Errorf("patch of records without a result does not return None:\n%s", src)
	}
}

// TestWriteBundle writes a proposal as a review bundle that validates,
// with the result's minimum of examples as the promotion's, and refuses
// a result without one.
func TestWriteBundle(t *testing.T) {
	res := crystallize(t, recurring(), Options{GeneratedAt: "2026-06-01T00:00:00Z"})
	if res.Proposal == nil {
		t.Fatalf("Decision = %s %v, want proposed", res.Decision, res.Reasons)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	m, err := res.WriteBundle(context.Background(), dir, bundle.Options{GeneratedAt: "2026-06-01T00:00:00Z", GeneratorVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if m.CandidateID != res.Proposal.Candidate.ID {
		t.Errorf("manifest candidate %s, want %s", m.CandidateID, res.Proposal.Candidate.ID)
	}
	if v := bundle.Validate(dir); !v.OK {
		t.Errorf("the bundle does not validate: %+v", v.Problems)
	}
	// The summary of a proposal names its candidate, step, replay and
	// bundle; that of a gated result, none of them.
	s := res.Summary(dir, m)
	c := res.Proposal.Candidate
	if s.Result != res || *s.CandidateID != c.ID || *s.Step != res.Proposal.FuncName || s.Savings.Runs != c.Savings.Runs {
		t.Errorf("Summary = %+v, want the proposal's candidate %s", s, c.ID)
	}
	if sh := s.Shadow; sh == nil || !sh.Pass || sh.Compared != c.Shadow.ComparedTraces || sh.Passed != sh.Compared {
		t.Errorf("Summary.Shadow = %+v, want every compared record passing", sh)
	}
	if b := s.Bundle; b == nil || b.Path != filepath.ToSlash(dir) || b.Kind != m.Kind || b.PromotionStatus != m.Promotion.Criteria.Status {
		t.Errorf("Summary.Bundle = %+v, want the manifest's", b)
	}
	gated := crystallize(t, recurring()[:2], Options{MinExamples: 3})
	if s := gated.Summary("", nil); s.CandidateID != nil || s.Step != nil || s.Savings != nil || s.Shadow != nil || s.Bundle != nil {
		t.Errorf("Summary of a %s result = %+v, want no proposal and no bundle", gated.Decision, s)
	}
	if _, err := gated.WriteBundle(context.Background(), filepath.Join(t.TempDir(), "none"), bundle.Options{}); err == nil || gated.Proposal != nil {
		t.Errorf("WriteBundle of a %s result = %v; want an error", gated.Decision, err)
	}
}
