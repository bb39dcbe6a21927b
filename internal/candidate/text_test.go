package candidate

import (
	"strings"
	"testing"
)

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\nb", "a b"},
		{"a\r\n\r\nb", "a b"},
		{"\n  lead and trail \n", "lead and trail"},
		{"tab\there", "tab here"},
		{"nul\x00bell\a", "nulbell"},
		{"rtl\u202eover\u200bzw", "rtloverzw"},
		{"line\u2028sep", "line sep"},
		{"bad\xff", "bad\uFFFD"},
		{"é 日本 🚀", "é 日本 🚀"},
		{strings.Repeat("x", MaxTextRunes+10), strings.Repeat("x", MaxTextRunes) + "…"},
	}
	for _, tt := range tests {
		if got := OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
