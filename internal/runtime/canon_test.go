package runtime

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
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
	o.Tools = map[string]Tool{"echo": {Func: echo}}
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
		got, err := encodeTrace(tc)
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
