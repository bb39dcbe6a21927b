package replay

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// doc parses a JSON object as trace decoding does (numbers as
// json.Number).
func doc(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := trace.ParseJSON([]byte(s), "test.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("test document %s is not an object", s)
	}
	return m
}

func rules(pathReason ...string) []trace.AllowlistRule {
	var out []trace.AllowlistRule
	for i := 0; i < len(pathReason); i += 2 {
		out = append(out, trace.AllowlistRule{Path: pathReason[i], Reason: pathReason[i+1]})
	}
	return out
}

const receiptsRun = `{"run_id": "run_1", "effect_receipts": [
	{"receipt_id": "r1", "sha256": "aaa"},
	{"receipt_id": "r2", "sha256": "bbb"}]}`

func TestOracle(t *testing.T) {
	tests := []struct {
		name          string
		first, second string
		allowlist     []trace.AllowlistRule
		divergence    *candidate.Divergence
		warnings      []candidate.Problem
	}{
		{
			name:      "identical runs",
			first:     receiptsRun,
			second:    receiptsRun,
			allowlist: rules("/run_id", "per execution"),
		},
		{
			name:      "run_id allowlisted",
			first:     `{"run_id": "run_1", "effect_receipts": []}`,
			second:    `{"run_id": "shadow_x", "effect_receipts": []}`,
			allowlist: rules("/run_id", "run ids are allocated per execution"),
		},
		{
			name:       "run_id not allowlisted",
			first:      `{"run_id": "run_1", "effect_receipts": []}`,
			second:     `{"run_id": "shadow_x", "effect_receipts": []}`,
			divergence: &candidate.Divergence{Path: "/run_id", Left: "run_1", Right: "shadow_x", Message: "values differ"},
		},
		{
			name:      "wildcard masks every receipt id",
			first:     receiptsRun,
			second:    `{"run_id": "run_1", "effect_receipts": [{"receipt_id": "x1", "sha256": "aaa"}, {"receipt_id": "x2", "sha256": "bbb"}]}`,
			allowlist: rules("/effect_receipts/*/receipt_id", "receipt ids are allocated per execution"),
		},
		{
			name:      "candidate's masked fields",
			first:     receiptsRun,
			second:    `{"run_id": "run_1", "effect_receipts": [{"receipt_id": "<allowlisted>", "sha256": "aaa"}, {"receipt_id": "<allowlisted>", "sha256": "bbb"}]}`,
			allowlist: rules("/effect_receipts/*/receipt_id", "receipt ids are allocated per execution"),
		},
		{
			name:       "masked field where no rule matches",
			first:      receiptsRun,
			second:     `{"run_id": "run_1", "effect_receipts": [{"receipt_id": "r1", "sha256": "<allowlisted>"}, {"receipt_id": "r2", "sha256": "bbb"}]}`,
			allowlist:  rules("/effect_receipts/*/receipt_id", "receipt ids are allocated per execution"),
			divergence: &candidate.Divergence{Path: "/effect_receipts/0/sha256", Left: "aaa", Right: "<allowlisted>", Message: "values differ"},
		},
		{
			name:       "array index rule masks one element only",
			first:      receiptsRun,
			second:     `{"run_id": "run_1", "effect_receipts": [{"receipt_id": "r1", "sha256": "AAA"}, {"receipt_id": "r2", "sha256": "BBB"}]}`,
			allowlist:  rules("/effect_receipts/1/sha256", "second receipt hashes a timestamp"),
			divergence: &candidate.Divergence{Path: "/effect_receipts/0/sha256", Left: "aaa", Right: "AAA", Message: "values differ"},
		},
		{
			name:      "escaped keys",
			first:     `{"files": {"a/b": 1, "m~n": 2, "z": 3}}`,
			second:    `{"files": {"a/b": 9, "m~n": 8, "z": 3}}`,
			allowlist: rules("/files/a~1b", "generated"),
			divergence: &candidate.Divergence{
				Path: "/files/m~0n", Left: json.Number("2"), Right: json.Number("8"), Message: "values differ",
			},
		},
		{
			name:      "escaped key masked",
			first:     `{"files": {"m~n": 2}}`,
			second:    `{"files": {"m~n": 8}}`,
			allowlist: rules("/files/m~0n", "generated"),
		},
		{
			name:      "unused rule is a warning",
			first:     receiptsRun,
			second:    receiptsRun,
			allowlist: rules("/run_id", "per execution", "/effect_receipts/*/receipt_idd", "typo"),
			warnings: []candidate.Problem{{
				Code:    candidate.CodeAllowlistUnused,
				Message: "allowlist rule /effect_receipts/*/receipt_idd matched nothing in either run",
				Path:    "/effect_receipts/*/receipt_idd",
			}},
		},
		{
			name:       "malformed rules are warnings and not applied",
			first:      `{"run_id": "a", "x": 1}`,
			second:     `{"run_id": "b", "x": 1}`,
			allowlist:  rules("run_id", "no slash", "/run~2id", "bad escape", "/run_id", " ", "/x", "fine"),
			divergence: &candidate.Divergence{Path: "/run_id", Left: "a", Right: "b", Message: "values differ"},
			warnings: []candidate.Problem{
				{Code: candidate.CodeAllowlistInvalid, Message: `allowlist rule 0: invalid pattern "run_id": must start with "/"; rule ignored`, Path: "run_id"},
				{Code: candidate.CodeAllowlistInvalid, Message: `allowlist rule 1: invalid pattern "/run~2id": "~" must be followed by "0" or "1"; rule ignored`, Path: "/run~2id"},
				{Code: candidate.CodeAllowlistInvalid, Message: "allowlist rule 2: path /run_id gives no reason why it differs between executions; rule ignored", Path: "/run_id"},
			},
		},
		{
			name:       "first divergence in document order",
			first:      `{"b": 1, "a": {"y": 1, "x": [1, 2]}}`,
			second:     `{"b": 2, "a": {"y": 2, "x": [1, 3]}}`,
			divergence: &candidate.Divergence{Path: "/a/x/1", Left: json.Number("2"), Right: json.Number("3"), Message: "values differ"},
		},
		{
			name:       "missing member",
			first:      `{"a": 1, "b": {"c": true}}`,
			second:     `{"a": 1}`,
			divergence: &candidate.Divergence{Path: "/b", Left: map[string]any{"c": true}, Message: "right run is missing this field"},
		},
		{
			name:       "extra member",
			first:      `{"a": 1}`,
			second:     `{"a": 1, "b": null}`,
			divergence: &candidate.Divergence{Path: "/b", Message: "left run is missing this field"},
		},
		{
			name:      "allowlisted member recorded by one run only",
			first:     `{"run_id": "r", "a": 1}`,
			second:    `{"a": 1}`,
			allowlist: rules("/run_id", "per execution"),
		},
		{
			name:       "missing receipt is drift even under a wildcard",
			first:      receiptsRun,
			second:     `{"run_id": "run_1", "effect_receipts": [{"receipt_id": "r1", "sha256": "aaa"}]}`,
			allowlist:  rules("/effect_receipts/*/receipt_id", "per execution"),
			divergence: &candidate.Divergence{Path: "/effect_receipts/1", Left: map[string]any{"receipt_id": "r2", "sha256": "bbb"}, Message: "right run is missing this array element"},
		},
		{
			name:   "numbers by value",
			first:  `{"n": 1.0, "m": [100, -0.5e1], "z": 0}`,
			second: `{"n": 1, "m": [1e2, -5], "z": -0.0}`,
		},
		{
			name:       "types differ",
			first:      `{"n": 1}`,
			second:     `{"n": "1"}`,
			divergence: &candidate.Divergence{Path: "/n", Left: json.Number("1"), Right: "1", Message: "values differ"},
		},
		{
			name:      "wildcard over object members",
			first:     `{"ids": {"a": 1, "b": 2}}`,
			second:    `{"ids": {"a": 3, "b": 4}}`,
			allowlist: rules("/ids/*", "per execution"),
		},
		{
			name:      "rule masks a whole subtree",
			first:     `{"meta": {"host": "a", "pid": [1]}}`,
			second:    `{"meta": {"host": "b"}}`,
			allowlist: rules("/meta", "per execution"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, second := doc(t, tt.first), doc(t, tt.second)
			got := Oracle(first, second, tt.allowlist)
			want := candidate.OracleReport{
				SchemaVersion:   candidate.ReplayTraceSchema,
				Expectation:     candidate.ExpectMatch,
				Passed:          tt.divergence == nil,
				Divergence:      tt.divergence,
				Warnings:        tt.warnings,
				FirstRunCounts:  counts(first),
				SecondRunCounts: counts(second),
			}
			if want.Warnings == nil {
				want.Warnings = []candidate.Problem{}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Oracle(%s, %s) (-want +got):\n%s", tt.first, tt.second, diff)
			}
		})
	}
}

func TestOracleCounts(t *testing.T) {
	first := doc(t, receiptsRun)
	second := doc(t, `{"run_id": "x", "effect_receipts": [], "llm_interactions": [1, 2, 3], "final_artifacts": {}}`)
	got := Oracle(first, second, nil)
	if diff := cmp.Diff(map[string]int{"effect_receipts": 2}, got.FirstRunCounts); diff != "" {
		t.Errorf("FirstRunCounts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"effect_receipts": 0, "llm_interactions": 3}, got.SecondRunCounts); diff != "" {
		t.Errorf("SecondRunCounts (-want +got):\n%s", diff)
	}
}

// TestOracleDoesNotModify checks that masking leaves both runs as they
// were: they are the caller's, often shared with a decoded trace.
func TestOracleDoesNotModify(t *testing.T) {
	first, second := doc(t, receiptsRun), doc(t, `{"run_id": "y", "effect_receipts": [{"receipt_id": "z"}]}`)
	a, b := doc(t, receiptsRun), doc(t, `{"run_id": "y", "effect_receipts": [{"receipt_id": "z"}]}`)
	Oracle(first, second, rules("/run_id", "r", "/effect_receipts/*/receipt_id", "r"))
	if diff := cmp.Diff(a, first); diff != "" {
		t.Errorf("first run modified (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(b, second); diff != "" {
		t.Errorf("second run modified (-want +got):\n%s", diff)
	}
}

func TestNormNumber(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"0", "0", true},
		{"-0.000e5", "0", true},
		{"1", "1e0", true},
		{"1.0", "1e0", true},
		{"10", "1e1", true},
		{"0.5e1", "5e0", true},
		{"-12.50e1", "-125e0", true},
		{"1e999999999999999999999", "1e999999999999999999999", true},
		{"123456789012345678901234567890", "12345678901234567890123456789e1", true},
		{"", "", false},
		{"abc", "", false},
		{"1e", "", false},
		{".", "", false},
	}
	for _, tt := range tests {
		got, ok := normNumber(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("normNumber(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b any
		want bool
	}{
		{json.Number("1"), float64(1), true},
		{json.Number("9007199254740993"), json.Number("9007199254740992"), false},
		{int64(3), json.Number("3.0"), true},
		{json.Number("1"), "1", false},
		{nil, nil, true},
		{nil, false, false},
		{map[string]any{"a": json.Number("1")}, map[string]any{"a": 1}, true},
		{map[string]any{"a": 1}, map[string]any{"b": 1}, false},
		{[]any{1, 2}, []any{1, 2, 3}, false},
		// Arrays compare element by element, each by value.
		{[]any{json.Number("1"), "x"}, []any{float64(1), "x"}, true},
		{[]any{json.Number("1"), "x"}, []any{float64(1), "y"}, false},
		{[]string{"x"}, []string{"x"}, true},
		// Every integer type a decoder or a test may hand over compares
		// by value.
		{float32(0.5), json.Number("0.5"), true},
		{int(7), uint(7), true},
		{int32(-2), json.Number("-2"), true},
		{uint64(18446744073709551615), json.Number("18446744073709551615"), true},
		{uint(7), uint64(8), false},
	}
	for _, tt := range tests {
		if got := equal(tt.a, tt.b); got != tt.want {
			t.Errorf("equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
