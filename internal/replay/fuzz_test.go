package replay

import (
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// FuzzAllowlistPattern checks the oracle's rule compiler against
// trace.Pattern, the definition of the pattern language: the same paths
// are refused, a refused path is reported (never silently applied or
// dropped), and an accepted one matches the same pointers.
func FuzzAllowlistPattern(f *testing.F) {
	for _, s := range [][2]string{
		{"/run_id", "/run_id"},
		{"/effect_receipts/*/receipt_id", "/effect_receipts/0/receipt_id"},
		{"/effect_receipts/*/receipt_id", "/effect_receipts/receipt_id"},
		{"/a~1b/~0", "/a~1b/~0"},
		{"/*", "/*"},
		{"/x", "/~01"},
		{"", ""},
		{"run_id", "/run_id"},
		{"/a~", "/a"},
		{"/a~2", "/a"},
		{"/", "/"},
		{"//", "//"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, ptr string) {
		segs, err := compilePattern(pattern)
		p, perr := trace.CompilePattern(pattern)
		if (err == nil) != (perr == nil) {
			t.Fatalf("compilePattern(%q) error = %v, trace.CompilePattern error = %v", pattern, err, perr)
		}
		rep := Oracle(map[string]any{}, map[string]any{}, []trace.AllowlistRule{{Path: pattern, Reason: "fuzz"}})
		if len(rep.Warnings) != 1 {
			t.Fatalf("Oracle with rule %q: warnings %v, want one", pattern, rep.Warnings)
		}
		wantCode := candidate.CodeAllowlistUnused
		if err != nil {
			wantCode = candidate.CodeAllowlistInvalid
		}
		if got := rep.Warnings[0].Code; got != wantCode {
			t.Fatalf("Oracle with rule %q: warning %q, want %q", pattern, got, wantCode)
		}
		if err != nil {
			return
		}
		if _, err := trace.CompilePattern(ptr); err != nil {
			return // not a pointer: Pattern.Match refuses it, the walker never builds it
		}
		r := rule{segs: segs}
		if got, want := r.match(splitSegments(ptr)), p.Match(ptr); got != want {
			t.Fatalf("rule %q matching %q = %v, Pattern.Match = %v", pattern, ptr, got, want)
		}
		// The pointer the oracle reports for a path names the same path.
		if back := pointer(splitSegments(ptr)); p.Match(back) != p.Match(ptr) {
			t.Fatalf("pointer(splitSegments(%q)) = %q matches %q differently", ptr, back, pattern)
		}
	})
}

// FuzzOracle checks on arbitrary JSON documents that the oracle never
// panics, that a run always matches itself, and that the verdict does not
// depend on which run is first.
func FuzzOracle(f *testing.F) {
	for _, s := range [][3]string{
		{`{"run_id": "a", "effect_receipts": [{"receipt_id": "r", "sha256": "x"}]}`, `{"run_id": "b", "effect_receipts": [{"receipt_id": "s", "sha256": "x"}]}`, "/effect_receipts/*/receipt_id"},
		{`{"n": 1.0}`, `{"n": 1}`, "/run_id"},
		{`{"a": {"b/c": [1, 2, {"~": null}]}}`, `{"a": {"b/c": [1, 2]}}`, "/a/b~1c/2/~0"},
		{`{}`, `{"x": []}`, "/x"},
		{`{"x": 1e400}`, `{"x": 10e399}`, "/*"},
		{`[]`, `{}`, "bad"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, rulePath string) {
		x, okx := object(a)
		y, oky := object(b)
		if !okx || !oky {
			return
		}
		allowlist := []trace.AllowlistRule{{Path: rulePath, Reason: "fuzz"}}
		if rep := Oracle(x, x, allowlist); !rep.Passed {
			t.Fatalf("Oracle(%s, itself) diverged: %+v", a, rep.Divergence)
		}
		ab, ba := Oracle(x, y, allowlist), Oracle(y, x, allowlist)
		if ab.Passed != ba.Passed {
			t.Fatalf("Oracle(%s, %s).Passed = %v, reversed %v", a, b, ab.Passed, ba.Passed)
		}
		if d := ab.Divergence; d != nil && ba.Divergence.Path != d.Path {
			t.Fatalf("Oracle(%s, %s) diverges at %q, reversed at %q", a, b, d.Path, ba.Divergence.Path)
		}
		if plain := Oracle(x, y, nil); plain.Passed != equal(x, y) {
			t.Fatalf("Oracle(%s, %s) without rules passed = %v, equal = %v", a, b, plain.Passed, equal(x, y))
		}
	})
}

func object(s string) (map[string]any, bool) {
	v, err := trace.ParseJSON([]byte(s), "fuzz.json", 0)
	if err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}
