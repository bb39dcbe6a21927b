package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLongKeyIsText: a member name longer than maxKey bytes is no field
// name but data used as a key (a command line, a sentence, a path mapped
// to a count or a status); it does not make its value private, whatever
// words it holds. A secret in it is still redacted, as in any text.
func TestLongKeyIsText(t *testing.T) {
	cmd := "curl -H 'Authorization: Bearer $API_TOKEN' https://api.example.com/v1/items"
	if len(cmd) <= maxKey {
		t.Fatalf("the key is %d bytes, not longer than %d", len(cmd), maxKey)
	}
	if SensitiveKey(cmd) {
		t.Errorf("SensitiveKey(%q) = true, want false: it is a command, not a name", cmd)
	}
	if name := strings.Repeat("x", maxKey-len("_token")) + "_token"; !SensitiveKey(name) {
		t.Errorf("SensitiveKey of a %d-byte name ending in _token = false, want true", len(name))
	}
	in := map[string]any{cmd: json.Number("0")}
	out, n := Value(in)
	if v := out.(map[string]any)[cmd]; v != json.Number("0") || n != 0 {
		t.Errorf("Value(%v) = %v, %d; want the exit status kept", in, out, n)
	}
}

// TestCapitalizedKeyWords: a key in capitals splits into words at its
// separators only, not before every capital, so ALL_CAPS names keep the
// exclusions camelCase names get (SECRET_NAME names a secret, as
// secretName does); capitals after a lower-case letter or a digit start a
// word.
func TestCapitalizedKeyWords(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"SECRET_NAME", false},
		{"GITHUB_TOKEN_TYPE", false},
		{"API_TOKEN_URL", false},
		{"TOKEN_ID", false},
		{"secretName", false},
		{"oauth2TokenTTL", false},
		{"tokenV2Url", false},
		{"passwordV2Hash", true},
		{"GITHUB_TOKEN", true},
		{"XApiKey", true},
	} {
		if got := SensitiveKey(tc.key); got != tc.want {
			t.Errorf("SensitiveKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}
