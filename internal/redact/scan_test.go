package redact

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScan(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA" + strings.Repeat("x9Y+", 10) + "\\n-----END RSA PRIVATE KEY-----"
	text := "line one\n" +
		"export GITHUB_TOKEN=" + fakeGitHub + "\n" +
		"\n" +
		`{"key": "` + pem + `", "password": "hunter2", "api_key": "[redacted]"}` + "\n" +
		"id " + fakeAWS + " then " + fakeRandom
	want := []Finding{
		{Offset: strings.Index(text, "ghp_"), Line: 2, Kind: KindGitHub, Excerpt: "ghp_****B3"},
		{Offset: strings.Index(text, "-----BEGIN"), Line: 4, Kind: KindPrivateKey, Excerpt: "-----BEGIN RSA PRIVATE KEY-----****"},
		{Offset: strings.Index(text, "hunter2"), Line: 4, Kind: KindAssignment, Excerpt: "****"},
		{Offset: strings.Index(text, "AKIA"), Line: 5, Kind: KindAWS, Excerpt: "AKIA****X2"},
		{Offset: strings.Index(text, fakeRandom), Line: 5, Kind: KindEntropy, Excerpt: "****Ku"},
	}
	got := Scan([]byte(text))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Scan mismatch (-want +got):\n%s", diff)
	}
	for _, f := range got {
		if !strings.Contains(f.Excerpt, "****") {
			t.Errorf("Scan: finding at %d has an unmasked excerpt", f.Offset)
		}
	}
	for _, f := range got {
		for _, secret := range []string{fakeGitHub[4:], fakeAWS[4:], fakeRandom[:20], "hunter2", "MIIEow"} {
			if strings.Contains(f.Excerpt, secret) {
				t.Errorf("Scan: finding at %d shows a secret in %q", f.Offset, f.Excerpt)
			}
		}
	}
}

// TestScanRedacted checks that Scan finds nothing in what Bytes writes and
// finds in the input what Bytes replaced.
func TestScanRedacted(t *testing.T) {
	doc := realisticTrace(32 << 10)
	if len(Scan(doc)) == 0 {
		t.Fatal("Scan found no secret in the benchmark trace")
	}
	out, n, err := Bytes(doc)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("Bytes replaced nothing in the benchmark trace")
	}
	if fs := Scan(out); len(fs) != 0 {
		t.Errorf("Scan(Bytes(trace)) = %v, want no finding", fs)
	}
}

func TestMasked(t *testing.T) {
	for _, tc := range []struct{ v, kind, want string }{
		{fakeGitHub, KindGitHub, "ghp_****B3"},
		{"hunter22", KindAssignment, "****"},
		{"sk-ant-api03-" + strings.Repeat("Ab9", 10), KindAnthropic, "sk-ant-api03-****b9"},
		{"-----BEGIN EC PRIVATE KEY-----", KindPrivateKey, "-----BEGIN EC PRIVATE KEY-----****"},
		{fakeRandom, KindEntropy, "****Ku"},
	} {
		if got := masked(tc.v, tc.kind); got != tc.want {
			t.Errorf("masked(%s…, %s) = %q, want %q", tc.v[:3], tc.kind, got, tc.want)
		}
	}
}

// TestScanJSONEscapes checks that a secret after an escaped newline in raw
// JSON is found, as it is in the decoded string.
func TestScanJSONEscapes(t *testing.T) {
	for _, raw := range []string{
		`{"stdout":"pushed\n` + fakeGitHub + `\n"}`,
		`{"stdout":"key:\t` + fakeRandom + `"}`,
	} {
		if fs := Scan([]byte(raw)); len(fs) != 1 {
			t.Errorf("Scan(%.30q…) found %d secrets, want 1", raw, len(fs))
		}
	}
}

// TestTextCredentialForms checks where the redaction of a credential
// starts and ends in the forms it is written in: a quoted value is
// redacted whole, spaces and all; an authorization scheme stays and the
// token after it goes, however many blanks lie between; a token with a
// known prefix is named by it; a URL's password goes and its user and
// host stay, and a scheme, user and password with no host is no URL; a
// private key cut before its footer is redacted over all of its body,
// raw or escaped line breaks, up to the first byte no key holds.
func TestTextCredentialForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"password": "correct horse battery"}`, `{"password": "[redacted:assignment]"}`},
		{`Authorization: Bearer abcDEF123456ghiJKL`, `Authorization: Bearer [redacted:bearer]`},
		{`Authorization:   Bearer   abcDEF123456ghiJKL`, `Authorization:   Bearer   [redacted:bearer]`},
		{`token = Bearer   abcDEF123456ghiJKL`, `token = Bearer   [redacted:bearer]`},
		{`Authorization: Bearer ` + fakeGitHub, `Authorization: Bearer [redacted:github]`},
		{`clone https://deploy:Hx9pLq2Vw7@git.example.com/x.git`, `clone https://deploy:[redacted:url_password]@git.example.com/x.git`},
		{`see https://deploy:Hx9pLq2Vw7`, `see https://deploy:Hx9pLq2Vw7`},
		{`mail me@example.com or https://deploy:Hx9pLq2Vw7`, `mail me@example.com or https://deploy:Hx9pLq2Vw7`},
		{`clone https://deploy@git.example.com/x.git`, `clone https://deploy@git.example.com/x.git`},
		{`use Bearer abcDEF123456ghiJKL`, `use Bearer [redacted:bearer]`},
		{`use Bearer ` + fakeGitHub, `use Bearer [redacted:github]`},
		{`Bearer tokens expire`, `Bearer tokens expire`},
		// A scheme or a URL cut off at the end of the text holds no
		// token, and reading it must not run past the end.
		{`send Bearer `, `send Bearer `},
		{`push to https://deploy:Hx9pLq2Vw7@`, `push to https://deploy:Hx9pLq2Vw7@`},
		{"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx9Y+\\r\\nx9Y\\/x9Y+abcd\\tafter", "[redacted:private_key]\\tafter"},
		{"-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEAx9Y+x9Y+\\nx9Y+x9Y+abcd\n--next-flag", "[redacted:private_key]--next-flag"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx9Y+x9Y+\nx9Y+x9Y+abcd\n- item", "[redacted:private_key]- item"},
	} {
		if got, _ := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSlackTokenShape checks Slack's token rule: xox, one of the letters
// Slack issues (a, b, p, r, s), a dash and a number; a word that only
// starts like one (xoxo-…, xoxa-shipping) is left alone, however long.
func TestSlackTokenShape(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"xoxb-1234567890-0987654321-Zq7Zq7Zq7Zq7", true},
		{"xoxp-1234567890-0987654321-Zq7Zq7Zq7Zq7", true},
		{"xoxz-1234567890-0987654321-Zq7Zq7Zq7Zq7", false},
		{"xoxo-1234567890-0987654321-zq7zq7zq7zq7", false},
		{"xoxa-shipping-plan-for-2024-release-train", false},
	} {
		kind, ok := Secret(tc.s)
		if got := ok && kind == KindSlack; got != tc.want {
			t.Errorf("Secret(%q) = %q, %v; want slack %v", tc.s, kind, ok, tc.want)
		}
	}
}
