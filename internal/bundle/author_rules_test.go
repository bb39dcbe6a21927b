package bundle

import (
	"strings"
	"testing"
)

// TestIsAuthorEitherSpelling: the author a bundle records is recognised
// in approve whether the manifest holds the name as typed or as the
// bundle's writer redacted it. A name holding something shaped like a
// credential is written redacted, so the author typing it again must
// still be the author; and a manifest holding it unredacted (written by
// hand) must not let the same person through because the redacted
// spelling differs.
func TestIsAuthorEitherSpelling(t *testing.T) {
	actor := "ci-ghp_" + strings.Repeat("a1B2", 9)
	redacted := redactID(actor)
	if redacted == actor {
		t.Fatalf("redactID(%q) left it as it is; the test needs a name the writer redacts", actor)
	}
	for _, tt := range []struct {
		author string
		want   bool
	}{
		{redacted, true},
		{actor, true},
		{" " + strings.ToUpper(actor) + " ", true},
		{"someone-else", false},
	} {
		author := tt.author
		m := &Manifest{}
		m.Promotion.Author = &author
		if got := IsAuthor(m, actor); got != tt.want {
			t.Errorf("IsAuthor(author %q, actor %q) = %v, want %v", author, actor, got, tt.want)
		}
	}
}
