package redact

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

// TestDigest checks which random-looking runs are digests or API ids by
// their notation: after a digest prefix, or starting with an id prefix at
// the run's start or after = or /, but not inside another word.
func TestDigest(t *testing.T) {
	tests := []struct {
		before, run string
		want        bool
	}{
		{"go.sum h1:", "Zq2kQ9xV7mB3nR8tY1wE4uI6oP0aS5dF", true},
		{"image@sha256:", "Zq2kQ9xV7mB3nR8tY1wE4uI6oP0aS5dF", true},
		{"sha256", "Zq2kQ9xV7mB3nR8tY1wE4uI6oP0aS5dF", false},
		{"", "sha512-Zq2kQ9xV7mB3nR8tY1wE4uI6oP0aS5dF", true},
		{"", "integrity=sha512-Zq2kQ9xV7mB3nR8tY1wE4uI6oP0aS5dF", true},
		{"", "v1/toolu_Zq2kQ9xV7mB3nR8tY1wE4uI6oP", true},
		{"", "xtoolu_Zq2kQ9xV7mB3nR8tY1wE4uI6oP", false},
		{"", "key:toolu_Zq2kQ9xV7mB3nR8tY1wE4uI6oP", false},
		{"", "Zq2kQ9xV7mB3nR8tY1wE4uI6oP0aS5dF", false},
	}
	for _, tt := range tests {
		if got := digest(tt.before, tt.run); got != tt.want {
			t.Errorf("digest(%q, %q) = %v, want %v", tt.before, tt.run, got, tt.want)
		}
	}
}

// TestCredentialRunWordy checks that a run whose letters and digits come
// mostly in runs of four or more of one class, like words and numbers
// joined, is not taken for a credential, while the same characters
// alternating are.
func TestCredentialRunWordy(t *testing.T) {
	alternating := "a1B2c3D4e5F6g7H8i9J0"
	if !credentialRun(alternating + "kMn5pQr7sTu9vWx3yZ") {
		t.Errorf("credentialRun(%q) = false for alternating classes", alternating+"kMn5pQr7sTu9vWx3yZ")
	}
	wordy := alternating + "kmnpQRSVwxyzLMNOtuvsEGHK"
	if credentialRun(wordy) {
		t.Errorf("credentialRun(%q) = true for a run mostly of words", wordy)
	}
}

// TestBasicCredentialLength checks the bounds of a base64 user:password:
// too short or over 256 characters is not one.
func TestBasicCredentialLength(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	if !basicCredential(enc("deploy:Xk9pQ2vL7mR4")) {
		t.Errorf("basicCredential(%q) = false", enc("deploy:Xk9pQ2vL7mR4"))
	}
	long := enc("deploy:" + strings.Repeat("Xk9pQ2vL7mR4", 20))
	if basicCredential(long) {
		t.Errorf("basicCredential of %d characters = true, want false over 256", len(long))
	}
	if short := enc("a:Xk9p"); basicCredential(short) {
		t.Errorf("basicCredential(%q) = true, want false under %d", short, minBasicRun)
	}
}

// TestFamilyLength checks that a vendor family with a fixed length
// matches that length only.
func TestFamilyLength(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef"
	if kind, _ := Secret("token shpat_" + hex); kind != KindShopify {
		t.Errorf("Secret(shpat_ + 32 hex) kind %q, want %q", kind, KindShopify)
	}
	if kind, _ := Secret("token shpat_" + hex + "a"); kind == KindShopify {
		t.Errorf("Secret(shpat_ + 33 hex) kind %q, want no Shopify token", kind)
	}
}

// TestJWTSignature checks the signature rule of a JSON Web Token: a
// signature of ten or more characters makes one whatever the payload;
// a shorter one only when the payload is also an encoded object.
func TestJWTSignature(t *testing.T) {
	header := "eyJhbGciOiJIUzI1NiJ9"
	tests := []struct {
		payload, signature string
		want               bool
	}{
		{"c3ViamVjdF9pZF8xMjM", "dBjftJeZ4CVPmB92K27uhbUJU1p1r", true},
		{"eyJzdWIiOiIxMjMifQ", "", true},
		{"c3ViamVjdF9pZF8xMjM", "abc", false},
	}
	for _, tt := range tests {
		s := "auth " + header + "." + tt.payload + "." + tt.signature + " end"
		m, ok := jwtAt(s, 5)
		if ok != tt.want || ok && m.kind != KindJWT {
			t.Errorf("jwtAt(%q) = %v, %v; want %v", s, m, ok, tt.want)
		}
	}
}

// TestCredible checks the references an assignment's value may be
// instead of a credential.
func TestCredible(t *testing.T) {
	for _, tt := range []struct {
		v      string
		quoted bool
		want   bool
	}{
		{"", true, false},
		{"[redacted:token", true, false},
		{"{{ secrets.token }}", true, false},
		{"CRATES_IO_TOKEN", true, false},
		{"crates_IO_TOKEN", true, true},
		{"_IO_TOKEN", true, true},
		{"Xk9pQ2vL7mR4", false, true},
	} {
		if got := credible(tt.v, tt.quoted); got != tt.want {
			t.Errorf("credible(%q, %v) = %v, want %v", tt.v, tt.quoted, got, tt.want)
		}
	}
}

// TestBearerWord checks that only the word Bearer starts a bearer token,
// not another word that begins like it.
func TestBearerWord(t *testing.T) {
	if kind, _ := Secret("Authorization: Bearer Xk9pQ2vL7mR4abcdEF"); kind != KindBearer {
		t.Errorf("Secret(Bearer token) kind %q, want %q", kind, KindBearer)
	}
	for _, s := range []string{"Betray Xk9pQ2vL7mR4abcdEF", "Bxarer Xk9pQ2vL7mR4abcdEF"} {
		if kind, _ := Secret(s); kind == KindBearer {
			t.Errorf("Secret(%q) kind %q, want no bearer token", s, kind)
		}
	}
}

// TestMatchSpaced checks that only white space may stand between the
// bytes of a spaced match.
func TestMatchSpaced(t *testing.T) {
	for _, tt := range []struct {
		s      string
		end    int
		spaced bool
	}{
		{"abc", 3, false},
		{"a b\r\n\tc", 7, true},
		{"abXc", -1, false},
		{" abc", -1, false},
		{"ab", -1, false},
	} {
		end, spaced := matchSpaced(tt.s, 0, "abc")
		if end != tt.end || spaced != tt.spaced {
			t.Errorf("matchSpaced(%q, abc) = %d, %v; want %d, %v", tt.s, end, spaced, tt.end, tt.spaced)
		}
	}
}

// TestSelfEncoding checks which types take the JSON round trip because
// encoding/json treats them specially: a byte slice (base64) but not
// another slice.
func TestSelfEncoding(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want bool
	}{
		{[]byte("x"), true},
		{[]string{"x"}, false},
		{map[int]string{}, true},
		{map[string]string{}, false},
	} {
		if got := selfEncoding(reflect.TypeOf(tt.v)); got != tt.want {
			t.Errorf("selfEncoding(%T) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// TestCopySensitiveArray checks that an array under a sensitive key is
// an error, as for a slice: it cannot hold the redaction string.
func TestCopySensitiveArray(t *testing.T) {
	type pins struct {
		Pins [2]int `json:"password"`
	}
	_, _, err := Copy(&pins{Pins: [2]int{1, 2}})
	if err == nil || !strings.HasPrefix(err.Error(), "redacting /password: the member's key is sensitive") {
		t.Errorf("Copy of an array under a sensitive key = %v, want the member's key is sensitive", err)
	}
}

// TestEmbeddedAnthropicKey checks that an Anthropic key is found inside a
// word only when it goes on as the keys do, and a name that merely
// contains sk-ant- is left alone.
func TestEmbeddedAnthropicKey(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("Ab9", 10)
	if kind, _ := Secret("see x" + key); kind != KindAnthropic {
		t.Errorf("Secret(key inside a word) kind %q, want %q", kind, KindAnthropic)
	}
	if kind, ok := Secret("the desk-ant-colony-" + strings.Repeat("ab", 10) + " project"); ok {
		t.Errorf("Secret(desk-ant-colony…) = %q, want no secret", kind)
	}
}

// TestAssignmentKeyLength checks the bounds of a sensitive key: one of
// more than 64 identifier bytes is no key a person wrote.
func TestAssignmentKeyLength(t *testing.T) {
	if kind, _ := Secret("db_password=Xk9pQ2vL7mR4"); kind != KindAssignment {
		t.Errorf("Secret(db_password=…) kind %q, want %q", kind, KindAssignment)
	}
	long := strings.Repeat("a", 60) + "_password=Xk9pQ2vL7mR4"
	if kind, _ := Secret(long); kind == KindAssignment {
		t.Errorf("Secret(%q) kind %q, want no assignment", long, kind)
	}
}

// TestCredentialRunNeedsAllClasses checks the first test of a random
// credential: lower-case letters, capitals and digits all occur. A run
// that lacks one, however mixed its case and punctuation, is an
// identifier or a slug (base36 ids, CamelCase_names-joined) and is not
// redacted on its looks alone.
func TestCredentialRunNeedsAllClasses(t *testing.T) {
	for _, r := range []string{
		"kMn-pQr_sTu-vWx_yZa-bCd_eFg-hJk_LmN", // no digit
		"k7n-p2r_s9u-v4x_y1a-b8d_e3g-h6k_l5n", // no capital
		"K7N-P2R_S9U-V4X_Y1A-B8D_E3G-H6K_L5N", // no lower-case letter
	} {
		if credentialRun(r) {
			t.Errorf("credentialRun(%q) = true, want false: a class is missing", r)
		}
	}
	if r := "kMn-pQr_sTu-vWx_yZa-bCd_eFg-hJk_LmN7"; !credentialRun(strings.ReplaceAll(r, "-", "4")) {
		t.Errorf("credentialRun(%q) = false with every class", strings.ReplaceAll(r, "-", "4"))
	}
}
