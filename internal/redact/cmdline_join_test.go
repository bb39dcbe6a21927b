package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJoinOptionValuesWholeWordOnly: an option is joined to the next word
// only when that whole word is its credential; a word that merely starts
// with one (a value with more words after it, as a shell would not split)
// stays a word of its own.
func TestJoinOptionValuesWholeWordOnly(t *testing.T) {
	for _, tc := range []struct {
		argv, want []string
	}{
		{[]string{"--token", "4f9a8c7e6d5b4a39281716 rest"}, []string{"--token", "4f9a8c7e6d5b4a39281716 rest"}},
		{[]string{"-u", "admin:Hx9pLq2Vw7 x"}, []string{"-u", "admin:Hx9pLq2Vw7 x"}},
		{[]string{"--password", "Sup3rS3cret;", "x"}, []string{"--password", "Sup3rS3cret;", "x"}},
		{[]string{"--password", "Sup3rS3cret"}, []string{"--password=Sup3rS3cret"}},
	} {
		if got := JoinOptionValues(tc.argv); !cmp.Equal(got, tc.want) {
			t.Errorf("JoinOptionValues(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}
