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
