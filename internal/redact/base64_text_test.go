package redact

import (
	"encoding/base64"
	"testing"
)

// TestBase64OfProseIsNoCredential: base64 of a sentence passes the
// long-credential heuristic's shape tests, so it is decoded, in the
// alphabet its bytes show (standard, or URL with '-' and '_'), padded or
// not, and left alone as text; base64 of text holding a secret is one.
func TestBase64OfProseIsNoCredential(t *testing.T) {
	prose := []string{
		"Build 2024.11 ok? yes> see ~/logs for >> details",
		"release notes >>> v1.2.3 fixed ?? the cache ~~ bug",
	}
	for _, s := range prose {
		for _, enc := range []*base64.Encoding{base64.URLEncoding, base64.RawURLEncoding, base64.StdEncoding, base64.RawStdEncoding} {
			r := enc.EncodeToString([]byte(s))
			if credentialRun(r) {
				t.Errorf("credentialRun(%q) = true for base64 of %q", r, s)
			}
		}
	}
	secret := base64.RawURLEncoding.EncodeToString([]byte("export TOKEN ghp_" + "Xk9pQ2vL7mR4tY8wZ3nB6cD1fG5hJ0sA2e >> ~/.env?"))
	if !credentialRun(secret) {
		t.Errorf("credentialRun(%q) = false for base64 of a token", secret)
	}
}

// TestBasicCredentialShape: base64 of user:password is a credential when
// the user is a name ([A-Za-z0-9_.@+-]) and the password is credible,
// whatever printable bytes it holds; a word or a short password, or a
// "user" that is JSON or a URL, is not one.
func TestBasicCredentialShape(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"deploy:Hx9pLq2Vw7", true},
		{"deploy:Hx9!pLq2$Vw7", true},
		{"ci+bot@example.com:Hx9pLq2Vw7", true},
		{"deploy:changeme", false},
		{"deploy:Hx9 pLq2Vw7", false},
		{"deploy:Hx9\x01pLq2Vw7", false},
		{"deploy:Hx9\x7fpLq2Vw7", false},
		{"deploy:Hx9pL", false},
		{`{"a":"Hx9pLq2Vw7"}`, false},
		{"example.com/path:Hx9pLq2Vw7", false},
		{":Hx9pLq2Vw7zzzz", false},
	} {
		r := base64.StdEncoding.EncodeToString([]byte(tc.text))
		if got := basicCredential(r); got != tc.want {
			t.Errorf("basicCredential(%q), base64 of %q, = %v, want %v", r, tc.text, got, tc.want)
		}
	}
}
