package trace

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestHashBytes(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		if got := HashBytes([]byte(tt.in)); got != tt.want {
			t.Errorf("HashBytes(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSignature(t *testing.T) {
	tests := []struct {
		a    Action
		want string
	}{
		{Action{Kind: KindToolCall, Name: "git.checkout_branch", Parameters: map[string]any{"repo_path": "/r", "branch_name": "b"}},
			"tool_call:git.checkout_branch:branch_name,repo_path"},
		{Action{Kind: KindModelCall, Name: "summarize"}, "model_call:summarize:"},
		{Action{Kind: "custom", Name: "x", Parameters: map[string]any{}}, "custom:x:"},
	}
	for _, tt := range tests {
		if got := tt.a.Signature(); got != tt.want {
			t.Errorf("Signature(%+v) = %q, want %q", tt.a, got, tt.want)
		}
	}
}

// TestFailed pins what Action.Failed counts as a failure: mining folds a
// failed attempt and its retry into one step on this answer, so an
// exit_code of any numeric type the decoders give must be read.
func TestFailed(t *testing.T) {
	tests := []struct {
		name string
		meta map[string]any
		want bool
	}{
		{"no metadata", nil, false},
		{"error true", map[string]any{"error": true}, true},
		{"error false", map[string]any{"error": false}, false},
		{"error not a bool", map[string]any{"error": "yes"}, false},
		{"json.Number non-zero", map[string]any{"exit_code": json.Number("2")}, true},
		{"json.Number zero", map[string]any{"exit_code": json.Number("0")}, false},
		{"json.Number not a number", map[string]any{"exit_code": json.Number("x")}, false},
		{"float64 non-zero", map[string]any{"exit_code": float64(1)}, true},
		{"float64 zero", map[string]any{"exit_code": float64(0)}, false},
		{"int non-zero", map[string]any{"exit_code": -1}, true},
		{"int zero", map[string]any{"exit_code": 0}, false},
		{"int64 non-zero", map[string]any{"exit_code": int64(127)}, true},
		{"exit_code a string", map[string]any{"exit_code": "1"}, false},
		{"zero exit but error", map[string]any{"exit_code": 0, "error": true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Action{Metadata: tt.meta}
			if got := a.Failed(); got != tt.want {
				t.Errorf("Failed() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tr := &Trace{
		Actions: []Action{
			{
				ID: "a", Kind: KindToolCall, Name: "build",
				Capabilities:    []string{"fs.write", "fs.read", "fs.write"},
				RequiredSecrets: []string{"B", "A", "B"},
				SideEffects: []SideEffect{
					{Kind: "file_write", Target: "z"},
					{Kind: "file_write", Target: "a", Capability: "fs.write", Mutation: "m2"},
					{Kind: "file_write", Target: "a", Capability: "fs.write", Mutation: "m1", Metadata: map[string]any{"n": 1}},
					{Kind: "file_write", Target: "a", Capability: "fs.write", Mutation: "m1", Metadata: map[string]any{"n": 2}},
					{Kind: "git_ref", Target: "a"},
				},
				DurationMS: ptr(int64(100)),
				Cost:       &Cost{InputTokens: 10, WallMS: 5, TotalCostUSD: 0.5},
			},
			{ID: "b", Kind: KindModelCall, Name: "think"},
			{ID: "c", Kind: KindModelCall, Name: "think", Cost: &Cost{ModelCalls: 3, OutputTokens: 7}},
			{ID: "d", Kind: KindToolCall, Name: "noop", Capabilities: []string{}},
		},
	}
	Normalize(tr)
	want := &Trace{
		Actions: []Action{
			{
				ID: "a", Kind: KindToolCall, Name: "build",
				Capabilities:    []string{"fs.read", "fs.write"},
				RequiredSecrets: []string{"A", "B"},
				SideEffects: []SideEffect{
					{Kind: "file_write", Target: "a", Capability: "fs.write", Mutation: "m1", Metadata: map[string]any{"n": 1}},
					{Kind: "file_write", Target: "a", Capability: "fs.write", Mutation: "m1", Metadata: map[string]any{"n": 2}},
					{Kind: "file_write", Target: "a", Capability: "fs.write", Mutation: "m2"},
					{Kind: "file_write", Target: "z"},
					{Kind: "git_ref", Target: "a"},
				},
				DurationMS: ptr(int64(100)),
				Cost:       &Cost{InputTokens: 10, WallMS: 5, TotalCostUSD: 0.5},
			},
			{ID: "b", Kind: KindModelCall, Name: "think", Cost: &Cost{ModelCalls: 1}},
			{ID: "c", Kind: KindModelCall, Name: "think", Cost: &Cost{ModelCalls: 3, OutputTokens: 7}},
			{ID: "d", Kind: KindToolCall, Name: "noop", Capabilities: []string{}},
		},
		Usage: &Usage{ModelCalls: 4, InputTokens: 10, OutputTokens: 7, TotalCostUSD: 0.5, WallMS: 105},
	}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("Normalize (-want +got):\n%s", diff)
	}

	// A recorded usage is the recorder's total and is kept.
	recorded := &Trace{Actions: []Action{{Kind: KindModelCall, Name: "m"}}, Usage: &Usage{WallMS: 9}}
	Normalize(recorded)
	if diff := cmp.Diff(&Usage{WallMS: 9}, recorded.Usage); diff != "" {
		t.Errorf("Normalize changed a recorded usage (-want +got):\n%s", diff)
	}
}

func TestPattern(t *testing.T) {
	tests := []struct {
		pattern, pointer string
		want             bool
	}{
		{"/run_id", "/run_id", true},
		{"/run_id", "/run_id/x", false},
		{"/run_id", "/other", false},
		{"/effect_receipts/*/receipt_id", "/effect_receipts/0/receipt_id", true},
		{"/effect_receipts/*/receipt_id", "/effect_receipts/12/receipt_id", true},
		{"/effect_receipts/*/receipt_id", "/effect_receipts/receipt_id", false},
		{"/effect_receipts/*/receipt_id", "/effect_receipts/0/x/receipt_id", false},
		{"/*", "/anything", true},
		{"/*", "/", true},
		{"/*", "", false},
		{"/a~1b", "/a~1b", true},
		{"/a~0b", "/a~0b", true},
		{"/a~1b", "/a/b", false},
		{"/files/*/path", "/files/a~1b/path", true},
		{"/x", "x", false},
		{"/x", "/x~", false},
		{"/", "/", true},
	}
	for _, tt := range tests {
		p, err := CompilePattern(tt.pattern)
		if err != nil {
			t.Fatalf("CompilePattern(%q): %v", tt.pattern, err)
		}
		if got := p.Match(tt.pointer); got != tt.want {
			t.Errorf("Pattern(%q).Match(%q) = %v, want %v", tt.pattern, tt.pointer, got, tt.want)
		}
		if got := (AllowlistRule{Path: tt.pattern}).Match(tt.pointer); got != tt.want {
			t.Errorf("AllowlistRule{%q}.Match(%q) = %v, want %v", tt.pattern, tt.pointer, got, tt.want)
		}
		if p.String() != tt.pattern {
			t.Errorf("Pattern.String() = %q, want %q", p.String(), tt.pattern)
		}
	}

	bad := []struct{ pattern, want string }{
		{"", `invalid pattern "": must start with "/"`},
		{"run_id", `invalid pattern "run_id": must start with "/"`},
		{"/a~", `invalid pattern "/a~": "~" must be followed by "0" or "1"`},
		{"/a~2b", `invalid pattern "/a~2b": "~" must be followed by "0" or "1"`},
	}
	for _, tt := range bad {
		_, err := CompilePattern(tt.pattern)
		if err == nil || err.Error() != tt.want {
			t.Errorf("CompilePattern(%q) error = %v, want %q", tt.pattern, err, tt.want)
		}
		if (AllowlistRule{Path: tt.pattern}).Match("/run_id") {
			t.Errorf("malformed rule %q matched", tt.pattern)
		}
	}
	var zero Pattern
	if zero.Match("/x") {
		t.Error("zero Pattern matched")
	}
}

func TestPolicyViolation(t *testing.T) {
	tests := []struct {
		name       string
		trace      Trace
		wantAction string
		wantOK     bool
	}{
		{"none", Trace{Metadata: map[string]any{"goal": "x"}, Actions: []Action{{ID: "a"}}}, "", false},
		{"trace flag", Trace{Metadata: map[string]any{"unresolved_policy_violation": true}}, "", true},
		{"flag false", Trace{Metadata: map[string]any{"unresolved_policy_violation": false}}, "", false},
		{"contains key", Trace{Metadata: map[string]any{"has_unresolved_policy_violations": true}}, "", true},
		{"mixed case key", Trace{Metadata: map[string]any{"Policy_Violation": "Unresolved"}}, "", true},
		{"resolved string", Trace{Metadata: map[string]any{"policy_violation": "resolved"}}, "", false},
		{"non-empty list", Trace{Metadata: map[string]any{"policy_violation_unresolved": []any{"pii"}}}, "", true},
		{"empty list", Trace{Metadata: map[string]any{"policy_violation_unresolved": []any{}}}, "", false},
		{"status", Trace{Metadata: map[string]any{"policy_status": "UNRESOLVED"}}, "", true},
		{"status resolved", Trace{Metadata: map[string]any{"policy_status": "resolved"}}, "", false},
		{"status true is not a status", Trace{Metadata: map[string]any{"policy_status": true}}, "", false},
		{"action", Trace{Actions: []Action{
			{ID: "a", Metadata: map[string]any{"policy_violation": false}},
			{ID: "b", Metadata: map[string]any{"policy_violation": true}},
			{ID: "c", Metadata: map[string]any{"policy_violation": true}},
		}}, "b", true},
	}
	for _, tt := range tests {
		id, ok := tt.trace.PolicyViolation()
		if id != tt.wantAction || ok != tt.wantOK {
			t.Errorf("%s: PolicyViolation() = %q, %v, want %q, %v", tt.name, id, ok, tt.wantAction, tt.wantOK)
		}
	}
}

func TestNondeterministicSideEffect(t *testing.T) {
	effect := []SideEffect{{Kind: "file_write", Target: "x"}}
	tests := []struct {
		name string
		a    Action
		want bool
	}{
		{"no side effects, fuzzy", Action{Fuzzy: ptr(true), Deterministic: ptr(false)}, false},
		{"deterministic unset", Action{SideEffects: effect}, false},
		{"deterministic true", Action{SideEffects: effect, Deterministic: ptr(true), Fuzzy: ptr(false)}, false},
		{"deterministic false", Action{SideEffects: effect, Deterministic: ptr(false)}, true},
		{"fuzzy", Action{SideEffects: effect, Fuzzy: ptr(true)}, true},
		{"metadata flag", Action{SideEffects: effect, Metadata: map[string]any{"nondeterministic_side_effect": true}}, true},
		{"metadata flag not bool", Action{SideEffects: effect, Metadata: map[string]any{"nondeterministic_side_effect": "true"}}, false},
		{"effect flag", Action{SideEffects: []SideEffect{{Kind: "k"}, {Kind: "k", Metadata: map[string]any{"nondeterministic": true}}}}, true},
	}
	for _, tt := range tests {
		if got := tt.a.NondeterministicSideEffect(); got != tt.want {
			t.Errorf("%s: NondeterministicSideEffect() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestOriginString(t *testing.T) {
	if got := (Origin{Path: "a/b.jsonl", Line: 3}).String(); got != "a/b.jsonl:3" {
		t.Errorf("Origin.String() = %q", got)
	}
	if got := (Origin{Path: "a.json"}).String(); got != "a.json" {
		t.Errorf("Origin.String() = %q", got)
	}
}

func TestMarshalEmptyTrace(t *testing.T) {
	got, err := json.Marshal(Trace{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"version":0,"id":"","actions":[]}`; string(got) != want {
		t.Errorf("Marshal(Trace{}) = %s, want %s", got, want)
	}
}

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{Member("$", "actions"), "$.actions"},
		{Member("$", "x1_y"), "$.x1_y"},
		{Member("$", "1x"), `$["1x"]`},
		{Member("$.metadata", "a b"), `$.metadata["a b"]`},
		{Member("$", ""), `$[""]`},
		{Element(Member("$", "actions"), 3), "$.actions[3]"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("path = %s, want %s", tt.got, tt.want)
		}
	}
}

func TestFieldsNonJSONNumbers(t *testing.T) {
	// FromValue may be given values built in Go rather than parsed.
	f := &Fields{File: "f"}
	obj := map[string]any{"a": 3, "b": 2.0, "c": 2.5, "d": int64(-1), "e": float32(1)}
	if got := f.Count(obj, "$", "a"); got != 3 {
		t.Errorf("Count(int) = %d", got)
	}
	if got := f.Count(obj, "$", "b"); got != 2 {
		t.Errorf("Count(float64) = %d", got)
	}
	f.Count(obj, "$", "c")
	f.Count(obj, "$", "d")
	f.Amount(obj, "$", "e")
	want := "f: $.c: expected integer, got 2.5\nf: $.d: expected non-negative integer, got -1\nf: $.e: expected number, got float32"
	if err := f.Err(); err == nil || err.Error() != want {
		t.Errorf("errors = %v, want %q", err, want)
	}
}

func TestPruneExtra(t *testing.T) {
	tr := &Trace{
		Extra: map[string]any{"source": "shadow", "keep": 1},
		Flow:  &Flow{Extra: map[string]any{"trace_id": "x"}},
		Actions: []Action{{
			Extra:       map[string]any{"metadata": map[string]any{}, "status": "done"},
			SideEffects: []SideEffect{{Kind: "k", Extra: map[string]any{"target": "t"}}},
			Approval:    &Approval{Extra: map[string]any{"required": true}},
			Cost:        &Cost{Extra: map[string]any{"model": "m", "models": []any{"m"}}},
		}},
		ReplayAllowlist: []AllowlistRule{{Extra: map[string]any{"path": "/x"}}},
		Usage:           &Usage{Extra: map[string]any{"wall_ms": 1}},
	}
	tr.PruneExtra()
	want := &Trace{
		Extra: map[string]any{"keep": 1},
		Flow:  &Flow{},
		Actions: []Action{{
			Extra:       map[string]any{"status": "done"},
			SideEffects: []SideEffect{{Kind: "k"}},
			Approval:    &Approval{},
			Cost:        &Cost{Extra: map[string]any{"models": []any{"m"}}},
		}},
		ReplayAllowlist: []AllowlistRule{{}},
		Usage:           &Usage{},
	}
	if diff := cmp.Diff(want, tr); diff != "" {
		t.Errorf("PruneExtra (-want +got):\n%s", diff)
	}
}
