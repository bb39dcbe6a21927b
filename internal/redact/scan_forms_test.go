package redact

import (
	"strings"
	"testing"
)

// TestMoreCredentialForms: forms a credential takes in traces that the
// scanner must find, and their look-alikes it must leave: a netrc password
// after a tab, and none when nothing or no blank follows the word; an AWS key id is capitals and digits only; GitLab's glpat-
// is found inside a word as GitHub's prefixes are; a key quoted with
// escaped quotes (JSON inside a JSON string) is a key; a placeholder in
// brackets is no value.
func TestMoreCredentialForms(t *testing.T) {
	glpat := "glpat-" + strings.Repeat("Xy9", 7)
	for _, tc := range []struct{ in, want string }{
		{"machine h login deploy password\tNr7Kq2Xw9Lm4", "machine h login deploy password\t[redacted:command_line]"},
		{"machine h login deploy password", "machine h login deploy password"},
		{"machine h login deploy passwordNr7Kq2Xw9Lm4", "machine h login deploy passwordNr7Kq2Xw9Lm4"},
		{"id AKIA" + strings.Repeat("q7x2", 4) + " end", "id AKIA" + strings.Repeat("q7x2", 4) + " end"},
		{"clone_with" + glpat + " now", "clone_with[redacted:gitlab] now"},
		{`{\"password\":\"Hx9pLq2Vw7\"}`, `{\"password\":\"[redacted:assignment]\"}`},
		{`"password": "[PASSWORD]"`, `"password": "[PASSWORD]"`},
		{`"password": "[Hx9pLq2Vw7"`, `"password": "[redacted:assignment]"`},
	} {
		if got, _ := redactString(tc.in); got != tc.want {
			t.Errorf("redactString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
