package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestReplaceTransformed(t *testing.T) {
	const v = "ghp_Abc123Def456Ghi789Jkl012Mno345Pqr"
	rev := reverse(v)
	repl := func(form string) string { return "<" + form + ">" }
	tests := []struct {
		name, in, want string
	}{
		{"reversed", "x " + rev + " y", "x <reversed> y"},
		{"upper", "token=" + strings.ToUpper(v), "token=<case>"},
		{"lower", strings.ToLower(v) + "!", "<case>!"},
		{"reversed upper", strings.ToUpper(rev), "<case>"},
		{"base64 std", base64.StdEncoding.EncodeToString([]byte(v)), "<base64>"},
		{"base64 raw url", base64.RawURLEncoding.EncodeToString([]byte(v)), "<base64>"},
		{"base64 inside basic auth", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:"+v)), "Authorization: Basic "},
		{"base64 at the other alignment", base64.StdEncoding.EncodeToString([]byte("ab" + v + "z")), ""},
		{"split by a space", "a " + v[:10] + " " + v[10:] + " b", "a <split> b"},
		{"split across lines, upper", strings.ToUpper(v[:5]) + "\n" + strings.ToUpper(v[5:]), "<split>"},
		// Look-alikes stay.
		{"other token", "ghp_Zzz999Yyy888Xxx777Www666Vvv555Uuu", "ghp_Zzz999Yyy888Xxx777Www666Vvv555Uuu"},
		{"prefix only", "ghp_Abc123 and more", "ghp_Abc123 and more"},
		{"plain text", "a version 1.2.3 and a path /usr/bin", "a version 1.2.3 and a path /usr/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ReplaceTransformed(tt.in, v, repl)
			if strings.HasPrefix(tt.name, "base64 inside") || strings.HasPrefix(tt.name, "base64 at") {
				// Only the characters the value alone determines are
				// replaced; the few at its edges mix in its neighbours.
				if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, "<base64>") || len(got) > len(tt.want)+len("<base64>")+16 {
					t.Errorf("ReplaceTransformed(%q) = %q, want the encoding replaced", tt.in, got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("ReplaceTransformed(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := ReplaceTransformed("SHORTONE", "short", repl); got != "SHORTONE" {
		t.Errorf("a value shorter than MinTransformed was looked for: %q", got)
	}
	// A value without letters has no other case: the text around its
	// reverse is kept, and nothing else of it goes.
	const pin = "12345678901234"
	in := "pin " + reverse(pin) + " printed, 55 other digits"
	if got, want := ReplaceTransformed(in, pin, repl), "pin <reversed> printed, 55 other digits"; got != want {
		t.Errorf("ReplaceTransformed(%q, a value of digits) = %q, want %q", in, got, want)
	}
}

// TestTransformCorpus measures ReplaceTransformed over known values and
// their transforms (positives) and over look-alikes that must stay:
// other values' transforms, versions, digests, UUIDs, paths, words.
func TestTransformCorpus(t *testing.T) {
	values := []string{
		"ghp_Abc123Def456Ghi789Jkl012Mno345Pqr",
		"xoxb-1234567890-abcdefghijkl",
		"hunter2-s3cr3t-value-0123456789",
		"sk_live_51HxYzAbCdEfGhIjKl",
		"correct-horse-battery-staple",
		"p@ssw0rd!2026",
		"AKIAIOSFODNN7EXAMPLE",
		"tok-9f8e7d6c5b4a3210-Secret",
	}
	transforms := map[string]func(string) string{
		"reversed":    reverse,
		"upper":       strings.ToUpper,
		"lower":       strings.ToLower,
		"base64":      func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"base64url":   func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
		"basic auth":  func(s string) string { return base64.StdEncoding.EncodeToString([]byte("user:" + s)) },
		"split":       func(s string) string { return s[:len(s)/2] + " " + s[len(s)/2:] },
		"wrapped":     func(s string) string { return s[:5] + "\n" + s[5:] },
		"upper split": func(s string) string { return strings.ToUpper(s[:4] + " " + s[4:]) },
	}
	lookalikes := []string{
		"v1.2.3", "go1.25.0", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"123e4567-e89b-12d3-a456-426614174000", "/usr/local/go/bin/go", "internal/runtime/exec.go",
		"the quick brown fox jumps over the lazy dog", "deadbeefcafebabe0123456789abcdef",
	}
	tp, fn, fp, tn := 0, 0, 0, 0
	for i, v := range values {
		for name, tr := range transforms {
			in := "out: " + tr(v) + " end"
			got := ReplaceTransformed(in, v, func(string) string { return "<x>" })
			if strings.Contains(got, "<x>") {
				tp++
			} else {
				fn++
				t.Errorf("%s of %q not found in %q", name, v, in)
			}
			// Another value's transform is not this value.
			other := values[(i+1)%len(values)]
			if got := ReplaceTransformed("out: "+tr(other)+" end", v, func(string) string { return "<x>" }); strings.Contains(got, "<x>") {
				fp++
				t.Errorf("%s of %q matched %q", name, other, v)
			} else {
				tn++
			}
		}
		for _, l := range lookalikes {
			if got := ReplaceTransformed(l, v, func(string) string { return "<x>" }); got != l {
				fp++
				t.Errorf("look-alike %q changed to %q for %q", l, got, v)
			} else {
				tn++
			}
		}
	}
	t.Logf("transform corpus: %d positives, %d negatives; precision %.4f, recall %.4f", tp+fn, fp+tn, float64(tp)/float64(tp+fp), float64(tp)/float64(tp+fn))
}
