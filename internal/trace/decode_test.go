package trace

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		line int
		in   string
		want string
	}{
		{
			name: "syntax error position",
			file: "a.json",
			in:   "{\n  \"id\": \"x\",\n  \"actions\": [\n    {\"kind\": \"k\", \"name\": \"n\",}\n  ]\n}",
			want: `a.json:4:31: invalid JSON: invalid character '}' looking for beginning of object key string`,
		},
		{
			name: "syntax error in a JSON Lines record keeps the record's line",
			file: "runs/a.jsonl",
			line: 12,
			in:   `{"actions": [}`,
			want: `runs/a.jsonl:12:14: invalid JSON: invalid character '}' looking for beginning of value`,
		},
		{
			name: "truncated",
			file: "a.json",
			in:   "{\"actions\": [\n",
			want: `a.json:2:1: invalid JSON: unexpected end of input`,
		},
		{
			name: "empty",
			file: "a.json",
			in:   "",
			want: `a.json:1:1: invalid JSON: empty document`,
		},
		{
			name: "trailing data",
			file: "a.json",
			in:   `{"actions": []} {"actions": []}`,
			want: `a.json:1:17: invalid JSON: unexpected data after top-level value`,
		},
		{
			name: "not an object",
			file: "a.json",
			in:   `[{"kind": "tool_call"}]`,
			want: `a.json: $: expected object, got array`,
		},
		{
			name: "missing actions",
			file: "a.json",
			in:   `{"id": "t"}`,
			want: `a.json: $.actions: missing required field`,
		},
		{
			name: "actions not an array",
			file: "a.json",
			in:   `{"actions": {"kind": "tool_call"}}`,
			want: `a.json: $.actions: expected array, got object`,
		},
		{
			name: "action not an object",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "n"}, "step two"]}`,
			want: `a.json: $.actions[1]: expected object, got string`,
		},
		{
			name: "side effects not an array",
			file: "runs/a.json",
			in: `{"actions": [{"kind": "k", "name": "a"}, {"kind": "k", "name": "b"},
				{"kind": "k", "name": "c", "side_effects": "file_write"}]}`,
			want: `runs/a.json: $.actions[2].side_effects: expected array, got string`,
		},
		{
			name: "side effect kind missing",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "side_effects": [{"kind": "x"}, {"target": "t"}]}]}`,
			want: `a.json: $.actions[0].side_effects[1].kind: missing required field`,
		},
		{
			name: "side effect kind wrong type",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "side_effects": [{"kind": 4}]}]}`,
			want: `a.json: $.actions[0].side_effects[0].kind: expected string, got number`,
		},
		{
			name: "side effect not an object",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "side_effects": [null]}]}`,
			want: `a.json: $.actions[0].side_effects[0]: expected object, got null`,
		},
		{
			name: "empty kind",
			file: "a.json",
			in:   `{"actions": [{"kind": "", "name": "a"}]}`,
			want: `a.json: $.actions[0].kind: empty kind`,
		},
		{
			name: "null name",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": null}]}`,
			want: `a.json: $.actions[0].name: expected string, got null`,
		},
		{
			name: "capability not a string",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "capabilities": ["fs.read", true]}]}`,
			want: `a.json: $.actions[0].capabilities[1]: expected string, got boolean`,
		},
		{
			name: "parameters not an object",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "parameters": ["x"]}]}`,
			want: `a.json: $.actions[0].parameters: expected object, got array`,
		},
		{
			name: "approval required not a bool",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "approval": {"required": "yes"}}]}`,
			want: `a.json: $.actions[0].approval.required: expected boolean, got string`,
		},
		{
			name: "negative duration",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "duration_ms": -5}]}`,
			want: `a.json: $.actions[0].duration_ms: expected non-negative integer, got -5`,
		},
		{
			name: "fractional token count",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "cost": {"input_tokens": 1.5}}]}`,
			want: `a.json: $.actions[0].cost.input_tokens: expected integer, got 1.5`,
		},
		{
			name: "cost as string",
			file: "a.json",
			in:   `{"actions": [{"kind": "k", "name": "a", "cost": {"total_cost_usd": "0.10"}}]}`,
			want: `a.json: $.actions[0].cost.total_cost_usd: expected number, got string`,
		},
		{
			name: "number out of range",
			file: "a.json",
			in:   `{"actions": [], "usage": {"total_cost_usd": 1e999}}`,
			want: `a.json: $.usage.total_cost_usd: number 1e999 out of range`,
		},
		{
			name: "flow ids not strings",
			file: "a.json",
			in:   `{"actions": [], "flow": {"atom_ids": [1]}}`,
			want: `a.json: $.flow.atom_ids[0]: expected string, got number`,
		},
		{
			name: "allowlist path malformed",
			file: "a.json",
			in:   `{"actions": [], "replay_allowlist": [{"path": "run_id", "reason": "r"}]}`,
			want: `a.json: $.replay_allowlist[0].path: invalid pattern "run_id": must start with "/"`,
		},
		{
			name: "allowlist reason missing",
			file: "a.json",
			in:   `{"actions": [], "replay_allowlist": [{"path": "/run_id"}]}`,
			want: `a.json: $.replay_allowlist[0].reason: missing required field`,
		},
		{
			name: "duplicate action ids",
			file: "a.json",
			in:   `{"actions": [{"id": "s", "kind": "k", "name": "a"}, {"id": "t", "kind": "k", "name": "b"}, {"id": "s", "kind": "k", "name": "c"}]}`,
			want: `a.json: $.actions[2].id: duplicate action id "s" (first at $.actions[0])`,
		},
		{
			name: "explicit id collides with a default id",
			file: "a.json",
			in:   `{"actions": [{"id": "action_2", "kind": "k", "name": "a"}, {"kind": "k", "name": "b"}]}`,
			want: `a.json: $.actions[1].id: duplicate action id "action_2" (first at $.actions[0])`,
		},
		{
			name: "unsupported version is reported alone",
			file: "a.json",
			in:   `{"version": 2, "actions": "later"}`,
			want: `a.json: $.version: unsupported trace version 2`,
		},
		{
			name: "version not an integer",
			file: "a.json",
			in:   `{"version": "1", "actions": []}`,
			want: `a.json: $.version: expected integer, got string`,
		},
		{
			name: "JSON Lines record errors carry the line",
			file: "runs/b.jsonl",
			line: 3,
			in:   `{"id": "t", "actions": [{"kind": "k"}]}`,
			want: `runs/b.jsonl:3: $.actions[0].name: missing required field`,
		},
		{
			name: "every problem in one document",
			file: "a.json",
			in: `{"id": 7, "actions": [
				{"kind": "tool_call", "name": "a", "side_effects": [{"kind": "file_write", "target": 3}]},
				{"kind": "", "name": "b", "capabilities": ["fs.read", 4]},
				{"kind": "tool_call", "name": "c", "side_effects": "file_write", "deterministic": "yes"}
			], "metadata": []}`,
			want: strings.Join([]string{
				`a.json: $.id: expected string, got number`,
				`a.json: $.actions[0].side_effects[0].target: expected string, got number`,
				`a.json: $.actions[1].kind: empty kind`,
				`a.json: $.actions[1].capabilities[1]: expected string, got number`,
				`a.json: $.actions[2].side_effects: expected array, got string`,
				`a.json: $.actions[2].deterministic: expected boolean, got string`,
				`a.json: $.metadata: expected object, got array`,
			}, "\n"),
		},
		{
			name: "usage field wrong type",
			file: "a.json",
			in:   `{"actions": [], "usage": {"wall_ms": true}}`,
			want: `a.json: $.usage.wall_ms: expected integer, got boolean`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := Decode([]byte(tt.in), tt.file, tt.line)
			if err == nil {
				t.Fatalf("Decode(%s) = %+v, want error %q", tt.in, tr, tt.want)
			}
			if tr != nil {
				t.Errorf("Decode(%s) returned a trace with error %v", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Decode(%s) error:\n%s\nwant:\n%s", tt.in, got, tt.want)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Errorf("Decode error %T is not a non-empty ErrorList", err)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != tt.file {
				t.Errorf("errors.As(err, *Error) = %v, want an entry in file %q", e, tt.file)
			}
		})
	}
}

func TestDecodeDefaults(t *testing.T) {
	tr, err := Decode([]byte(`{"actions": [{"kind": "tool_call", "name": "a"}, {"id": "", "kind": "model_call", "name": "b"}]}`), "runs/nightly.jsonl", 4)
	if err != nil {
		t.Fatal(err)
	}
	want := &Trace{
		Version: 1,
		ID:      "runs/nightly_L4",
		Actions: []Action{
			{ID: "action_1", Kind: KindToolCall, Name: "a"},
			{ID: "action_2", Kind: KindModelCall, Name: "b"},
		},
	}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("Decode defaults (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		file string
		line int
		want string
	}{
		{"runs/a.json", 0, "runs/a"},
		{`C:\runs\b.json`, 0, "b"},
		{"runs/a.jsonl", 3, "runs/a_L3"},
		{"noext", 0, "noext"},
		{".json", 0, "trace"},
		{"", 0, ""},
	} {
		if got := DeriveID(tt.file, tt.line); got != tt.want {
			t.Errorf("DeriveID(%q, %d) = %q, want %q", tt.file, tt.line, got, tt.want)
		}
	}
}

func TestDecodeFull(t *testing.T) {
	data, err := os.ReadFile("testdata/valid/full.json")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := Decode(data, "testdata/valid/full.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if tr.ID != "deploy_docs_017" || tr.Version != 1 || len(tr.Actions) != 5 {
		t.Fatalf("Decode(full.json) = id %q version %d, %d actions", tr.ID, tr.Version, len(tr.Actions))
	}
	build := tr.Actions[1]
	if got, want := build.Signature(), "tool_call:mkdocs.build:site_dir,strict"; got != want {
		t.Errorf("Signature() = %q, want %q", got, want)
	}
	if got, want := build.Inputs, any(map[string]any{"config": "mkdocs.yml", "pages": json.Number("142")}); !cmp.Equal(got, want) {
		t.Errorf("inputs = %#v, want %#v (numbers stay json.Number)", got, want)
	}
	if got := tr.Actions[2].Cost; got == nil || got.Model != "gpt-mini" || got.TotalCostUSD != 0.0042 || got.Extra["cache_hit"] != false {
		t.Errorf("cost = %+v", got)
	}
	if got := tr.Actions[3].Approval; got == nil || !got.Required || got.Boundary != "publish" || got.Extra["channel"] != "#docs" {
		t.Errorf("approval = %+v", got)
	}
	if got := tr.Actions[4].Extra["span_id"]; got != json.Number("9912") {
		t.Errorf("action extra span_id = %#v", got)
	}
	if got := tr.Flow.Extra["recorder"]; got != "docsbot/2.3" {
		t.Errorf("flow extra = %#v", got)
	}
	if _, ok := tr.Extra["recorded_by"]; !ok || len(tr.Extra) != 2 {
		t.Errorf("trace extra = %#v, want recorded_by and labels", tr.Extra)
	}
	if got := tr.ReplayAllowlist[1].Replacement; got != "<etag>" {
		t.Errorf("allowlist replacement = %#v", got)
	}
	if got := tr.Usage.Extra["billing_account"]; got != "docs" {
		t.Errorf("usage extra = %#v", got)
	}
}

// TestRoundTrip checks decode → encode → decode gives an equal value and
// that encoding is deterministic, for every valid document in testdata.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			checkRoundTrip(t, data)
		})
	}
}

func checkRoundTrip(t *testing.T, data []byte) {
	t.Helper()
	first, err := Decode(data, "rt.json", 0)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	enc, err := json.Marshal(first)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	second, err := Decode(enc, "rt.json", 0)
	if err != nil {
		t.Fatalf("Decode(Marshal(Decode(x))): %v\n%s", err, enc)
	}
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("round trip (-first +second):\n%s\nencoded: %s", diff, enc)
	}
	again, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(enc) {
		t.Errorf("encoding is not stable:\n%s\n%s", enc, again)
	}
	var viaUnmarshal Trace
	if err := json.Unmarshal(enc, &viaUnmarshal); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	if diff := cmp.Diff(*first, viaUnmarshal); diff != "" {
		t.Errorf("json.Unmarshal differs from Decode (-Decode +Unmarshal):\n%s", diff)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	var se SideEffect
	err := json.Unmarshal([]byte(`{"target": 1}`), &se)
	want := "$.kind: missing required field\n$.target: expected string, got number"
	if err == nil || err.Error() != want {
		t.Errorf("json.Unmarshal(SideEffect) error = %v, want %q", err, want)
	}
	var r AllowlistRule
	err = json.Unmarshal([]byte(`{"path": "/a/~2", "reason": "r"}`), &r)
	want = `$.path: invalid pattern "/a/~2": "~" must be followed by "0" or "1"`
	if err == nil || err.Error() != want {
		t.Errorf("json.Unmarshal(AllowlistRule) error = %v, want %q", err, want)
	}
	var a Action
	if err := json.Unmarshal([]byte(`[]`), &a); err == nil || err.Error() != "$: expected object, got array" {
		t.Errorf("json.Unmarshal(Action, []) error = %v", err)
	}
}

func TestMarshalExtraCannotOverrideFields(t *testing.T) {
	a := Action{ID: "a", Kind: KindToolCall, Name: "n", Extra: map[string]any{"name": "shadow", "z": 1, "b": 2}}
	got, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"a","kind":"tool_call","name":"n","b":2,"z":1}`
	if string(got) != want {
		t.Errorf("Marshal(%+v) = %s, want %s", a, got, want)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.json", Line: 2, Col: 3, Msg: "m"}, "a.json:2:3: m"},
		{Error{File: "a.json", Path: "$.x", Msg: "m"}, "a.json: $.x: m"},
		{Error{File: "a.jsonl", Line: 4, Path: "$", Msg: "m"}, "a.jsonl:4: $: m"},
		{Error{Path: "$.x", Msg: "m"}, "$.x: m"},
		{Error{Line: 5, Msg: "m"}, "5: m"},
		{Error{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
	if err := (ErrorList{}).Err(); err != nil {
		t.Errorf("empty ErrorList.Err() = %v, want nil", err)
	}
	l := ErrorList{
		{File: "b.json", Msg: "1"},
		{File: "a.jsonl", Line: 10, Msg: "2"},
		{File: "a.jsonl", Line: 2, Path: "$.z", Msg: "3"},
		{File: "a.jsonl", Line: 2, Path: "$.a", Msg: "4"},
	}
	l.Sort()
	want := "a.jsonl:2: $.z: 3\na.jsonl:2: $.a: 4\na.jsonl:10: 2\nb.json: 1"
	if got := l.Err().Error(); got != want {
		t.Errorf("sorted list:\n%s\nwant:\n%s", got, want)
	}
}
