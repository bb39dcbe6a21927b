package runner

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestEncodeCanonical: encodeCanonical writes what candidate.EncodeJSON
// writes, for values chosen to reach every escape, and for random ones.
func TestEncodeCanonical(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A any    `json:"a,omitempty"`
	}
	cases := []any{
		nil, true, 0, -1.5, 1e21, json.Number("1.50"), "", "plain", []any{}, map[string]any{},
		"<a href=\"x\">&amp;</a>", "tab\tnew\nline\rcr\bbs\fff\x00\x1f\x7f", "\u2028\u2029", "bad \xff\xfe utf8", "é ☃ 😀",
		`back\slash \u0041 "quoted"`,
		map[string]any{"b": 1, "a": []any{map[string]any{}, []any{}, "x"}, "<k>": "&", "\u2028": nil, "é": "e", "\xff": 1},
		[]any{[]any{[]any{}}, map[string]any{"z": map[string]any{"y": []any{1, 2}}}},
		inner{Z: "z", A: map[string]any{"c": 3, "b": inner{Z: "<>"}}},
		[]any(nil), map[string]any(nil), map[string]any{"l": []any(nil), "m": map[string]any(nil), "s": []string{"x"}},
		&trace.Action{ID: "a1", Kind: trace.KindToolCall, Name: "x", Parameters: map[string]any{"p": "<&>"}, Output: []any{1, "two"}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		cases = append(cases, randomValue(r, 4))
	}
	for i, v := range cases {
		want, werr := candidate.EncodeJSON(v)
		got, gerr := encodeCanonical(v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("case %d: errors differ: %v, %v", i, werr, gerr)
		}
		if string(got) != string(want) {
			t.Errorf("case %d: %#v\n got %q\nwant %q", i, v, got, want)
		}
		direct, derr := appendCanonical(nil, v, 0)
		if (werr != nil) != (derr != nil) {
			t.Fatalf("case %d: errors differ: %v, %v", i, werr, derr)
		}
		if werr == nil && string(direct)+"\n" != string(want) {
			t.Errorf("case %d: appendCanonical %#v\n got %q\nwant %q", i, v, direct, want)
		}
	}
}

// TestIndentJSONRejects: malformed input is an error, never a panic.
func TestIndentJSONRejects(t *testing.T) {
	for _, src := range []string{``, `{`, `[1,`, `{"a"}`, `{"a":1,}`, `"abc`, `{"a":1 "b":2}`, `[1 2]`, `{1:2}`, `]`, `1 2`} {
		if out, err := indentJSON(nil, []byte(src), 0); err == nil {
			t.Errorf("indentJSON(%q) = %q, want an error", src, out)
		}
	}
}

func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(8); {
	case depth == 0 || n < 3:
		switch r.IntN(5) {
		case 0:
			return randomString(r)
		case 1:
			return r.Float64() * 1e6
		case 2:
			return r.IntN(2) == 0
		case 3:
			return nil
		}
		return json.Number(fmt.Sprint(r.IntN(1000) - 500))
	case n < 5:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	default:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomValue(r, depth-1)
		}
		return m
	}
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab<>&\"\\\n\t\x01\x7f é☃\u2028\xff/"
	var b strings.Builder
	for range r.IntN(8) {
		i := r.IntN(len(alphabet))
		b.WriteByte(alphabet[i])
	}
	return b.String()
}

// TestEncodeTrace: a run's trace, its actions encoded one by one and
// spliced in, is candidate.EncodeJSON's encoding of the whole trace.
func TestEncodeTrace(t *testing.T) {
	w := workflow(t, "def wf(ctx):\n    for v in [\"<x>\", \"a\\nb\", {\"k\": [1, 2.5]}, None]:\n        ctx.tool(\"echo\", v = v, s = \"\\u2028&\")\n    ctx.log(\"done <ok>\")\n")
	o := opts(t, nil)
	o.Tools = map[string]toolexec.Tool{"echo": {Func: echo}}
	res, err := Run(t.Context(), w, nil, o)
	if err != nil {
		t.Fatal(err)
	}
	tr := readTrace(t, res)
	usage := &trace.Trace{ID: "usage", ReplayRun: map[string]any{"run_id": "u", "effect_receipts": []any{
		map[string]any{"step": 1, "duration_ms": int64(3), "side_effects": []any{}, "usage": map[string]any{"cost_usd": 1e-7, "input_tokens": int64(10), "model": "m<1>"}},
		map[string]any{"step": 2, "side_effects": []any{map[string]any{"kind": "file_write", "target": "a&b"}}, "usage": map[string]any{"cost_usd": 0.25}},
	}}}
	for _, tc := range []*trace.Trace{tr, {ID: "empty"}, usage} {
		want, err := candidate.EncodeJSON(tc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeTrace(tc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("trace %s:\n got %s\nwant %s", tc.ID, got, want)
		}
	}
	if len(tr.Actions) != 4 {
		t.Errorf("the trace has %d actions, want 4", len(tr.Actions))
	}
}

// TestAppendAction: appendAction writes what candidate.EncodeJSON writes
// for actions with every field set, none, typed nils and extra members.
func TestAppendAction(t *testing.T) {
	ms, yes, no := int64(12), true, false
	actions := []trace.Action{
		{},
		{ID: "a\xff", Kind: trace.KindModelCall, Name: "<n>", Inputs: map[string]any{"q": "&"}, Output: map[string]any(nil)},
		{
			ID: "a1", Kind: trace.KindToolCall, Name: "t", Timestamp: "2026-01-01T00:00:00Z",
			Parameters: map[string]any{}, Inputs: []any{1.5, json.Number("2")}, Output: "o\u2028", ObservedOutput: []any{},
			Capabilities: []string{}, SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "<a>", Metadata: map[string]any{"z": 1}}},
			RequiredSecrets: []string{"B", "A"}, Approval: &trace.Approval{Prompt: "ok?", Required: true},
			Cost: &trace.Cost{Model: "m", InputTokens: 3, TotalCostUSD: 1e-7}, DurationMS: &ms, Deterministic: &yes, Fuzzy: &no,
			Metadata: map[string]any{"argv": []any{"go", "<x>"}, "step": 1},
		},
		{ID: "x", Kind: trace.KindToolCall, Name: "e", Extra: map[string]any{"zz": 1, "id": "shadowed", "aa": []any{}}},
	}
	for i, a := range actions {
		want, err := candidate.EncodeJSON(&a)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendAction(nil, &a, 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != string(want) {
			t.Errorf("action %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestAppendActionFields: appendAction writes every field of
// trace.Action; a field added there must be added to it.
func TestAppendActionFields(t *testing.T) {
	const known = 18 // the 17 fields of the format and Extra
	if n := reflect.TypeFor[trace.Action]().NumField(); n != known {
		t.Errorf("trace.Action has %d fields, appendAction knows %d: write the new ones in appendAction", n, known)
	}
}

// The canonical form differs from encoding/json in one place: an invalid
// byte is written as U+FFFD itself, one for each byte, as decoding the
// JSON first would leave it.
func TestAppendJSONStringInvalidUTF8(t *testing.T) {
	got := string(appendJSONString(nil, "a\xffb\xe2\x80c\u2028\n"))
	want := "\"a\uFFFDb\uFFFD\uFFFDc\\u2028\\n\""
	if got != want {
		t.Errorf("appendJSONString = %q, want %q", got, want)
	}
}

// TestAppendReceipt: a receipt written from its fields is the canonical
// form of the generic value replay_run holds for it, for receipts with
// and without side effects, optional members, usage and hostile text;
// and a trace whose receipts are written from their fields is the trace
// that holds them as values.
func TestAppendReceipt(t *testing.T) {
	receipts := []Receipt{
		{ID: "r-01", Step: 1, Kind: "tool_call", Tool: "fs.read", Status: "ok", ArgumentsSHA256: "sha256:a", ResultSHA256: "sha256:b", DurationMS: 3},
		{ID: "r-02\u2028", Step: 12, Kind: "tool_call", Tool: "t<&>\"\\", Status: "error", ArgumentsSHA256: "", ResultSHA256: "\x00\xff",
			SideEffects: []trace.SideEffect{{Kind: "file_write", Target: "a.txt", Capability: "fs.write"}, {Kind: "http", Target: ""}, {Kind: "db", Target: "t", Mutation: "insert"}}, DurationMS: -1},
		{ID: "r-03", Step: 3, Kind: "model_call", Tool: "m", Status: "ok", SideEffects: []trace.SideEffect{}, Usage: &ModelUsage{Model: "x", InputTokens: 5, OutputTokens: 7, CostUSD: 1.5e-7}},
	}
	generic := make([]any, len(receipts))
	for i := range receipts {
		rc := &receipts[i]
		generic[i] = receiptValue(rc)
		want, err := appendCanonical(nil, receiptValue(rc), 3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendReceipt(nil, rc, 3)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("receipt %d:\n got %s\nwant %s", i, got, want)
		}
	}
	values := &trace.Trace{ID: "t", ReplayRun: map[string]any{"run_id": "t", "effect_receipts": generic}}
	fields := &trace.Trace{ID: "t", ReplayRun: map[string]any{"run_id": "t", "effect_receipts": []any{}}}
	want, err := candidate.EncodeJSON(values)
	if err != nil {
		t.Fatal(err)
	}
	got, err := encodeTrace(fields, receipts)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("trace with receipts from their fields:\n got %s\nwant %s", got, want)
	}
}

// TestClipRecordedShares: a value with nothing to clip is recorded as it
// is, and one with a long string is copied, the original left whole.
func TestClipRecordedShares(t *testing.T) {
	short := map[string]any{"a": "x", "b": []any{"y", map[string]any{"c": 1}}}
	if got := clipRecorded(short).(map[string]any); fmt.Sprintf("%p", got) != fmt.Sprintf("%p", short) {
		t.Error("a value with nothing to clip was copied")
	}
	long := strings.Repeat("z", maxRecordedString+10)
	v := map[string]any{"a": "x", "b": []any{"y", map[string]any{"c": long}}}
	got := clipRecorded(v).(map[string]any)
	if s := got["b"].([]any)[1].(map[string]any)["c"].(string); !strings.HasSuffix(s, "…[10 more bytes not recorded]") {
		t.Errorf("the long string was not clipped: %d bytes", len(s))
	}
	if v["b"].([]any)[1].(map[string]any)["c"] != long {
		t.Error("clipping changed the original value")
	}
}

// TestRecordID: a step's record ids pad the step to two digits.
func TestRecordID(t *testing.T) {
	for step, want := range map[int]string{0: "r-a00", 7: "r-a07", 10: "r-a10", 123: "r-a123"} {
		if got := recordID("r", "-a", step); got != want || got != fmt.Sprintf("%s-a%02d", "r", step) {
			t.Errorf("recordID(%d) = %q, want %q", step, got, want)
		}
	}
}
