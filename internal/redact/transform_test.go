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
}
