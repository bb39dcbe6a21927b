package stepvalue

import (
	"strings"
	"testing"
)

// TestOneLineMatchesFields: OneLine's shortcut for text already on one
// line gives what joining strings.Fields gives.
func TestOneLineMatchesFields(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\nb", "a\rb", "a\vb", "a\fb",
		"a\u00a0b", "a\u2028b", "a\u0085b", "héllo wörld", "x = {\"k\": 1}", "  ", "a b c d",
	} {
		if got, want := OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", s, got, want)
		}
	}
}
