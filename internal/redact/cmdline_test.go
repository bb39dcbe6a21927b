package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJoinOptionValues(t *testing.T) {
	for _, tc := range []struct {
		argv, want []string
	}{
		{[]string{"-u", "admin:Hx9pLq2Vw7", "https://x.example.com"}, []string{"-uadmin:Hx9pLq2Vw7", "https://x.example.com"}},
		{[]string{"--user", "admin:Hx9pLq2Vw7"}, []string{"--user=admin:Hx9pLq2Vw7"}},
		{[]string{"login", "--token", "4f9a8c7e6d5b4a39281716"}, []string{"login", "--token=4f9a8c7e6d5b4a39281716"}},
		{[]string{"--password", "Sup3rS3cret", "-e", "select 1"}, []string{"--password=Sup3rS3cret", "-e", "select 1"}},
		// Not credentials: no password, a reference, a word, another option.
		{[]string{"-u", "root", "-p", "shop"}, []string{"-u", "root", "-p", "shop"}},
		{[]string{"-u", "1000:1000"}, []string{"-u", "1000:1000"}},
		{[]string{"-u", "$USER:$PASS"}, []string{"-u", "$USER:$PASS"}},
		{[]string{"--token", "--verbose"}, []string{"--token", "--verbose"}},
		{[]string{"--token-file", "/run/secrets/t"}, []string{"--token-file", "/run/secrets/t"}},
		{[]string{"--name", "Hx9pLq2Vw7"}, []string{"--name", "Hx9pLq2Vw7"}},
	} {
		if got := JoinOptionValues(tc.argv); !cmp.Equal(got, tc.want) {
			t.Errorf("JoinOptionValues(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}
