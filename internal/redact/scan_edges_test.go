package redact

import (
	"strings"
	"testing"
)

// TestEscapedWhiteSpaceStartsAWord: scanning raw JSON (Scan on a trace
// file, a string that holds JSON), the escapes \n, \r, \t, \b and \f are
// the white space they stand for, so a family matched only at word starts
// is found right after one, and a long credential after one is redacted
// without the escape's letter. Another escape (\u, \") is no white space.
func TestEscapedWhiteSpaceStartsAWord(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`done\n` + fakeAWS + ` next`, `done\n[redacted:aws] next`},
		{`done\t` + fakeAWS, `done\t[redacted:aws]`},
		{`a\r` + fakeAWS, `a\r[redacted:aws]`},
		{`a\b` + fakeAWS, `a\b[redacted:aws]`},
		{`a\f` + fakeAWS, `a\f[redacted:aws]`},
		{`done\n` + fakeRandom, `done\n[redacted:entropy]`},
		{`done\n` + fakeRandom + ` and ` + fakeGitHub, `done\n[redacted:entropy] and [redacted:github]`},
		// Not white space: AKIA inside a word is no key.
		{`x\q` + fakeAWS, `x\q` + fakeAWS},
	} {
		if got, _ := redactString(tc.in); got != tc.want {
			t.Errorf("redactString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRunBeforeAMatchIsWhole: a long credential in the text a matcher
// reads past to reach its match (the user of -u user:password, quoted or
// not, before the password it matches) is redacted from its first byte,
// whichever letter that is, as it is where nothing follows it.
func TestRunBeforeAMatchIsWhole(t *testing.T) {
	for _, first := range []string{"b", "f", "n", "r", "t", "k"} {
		run := first + fakeRandom
		if alone, _ := redactString("x " + run); alone != "x [redacted:entropy]" {
			t.Fatalf("redactString(%q) = %q: the run is no credential; the test is wrong", "x "+run, alone)
		}
		for _, tc := range []struct{ in, want string }{
			{`curl -u "` + run + `":Hx9pLq2Vw7 https://x`, `curl -u "[redacted:entropy]":[redacted:command_line] https://x`},
			{`curl -u '` + run + `':Hx9pLq2Vw7 https://x`, `curl -u '[redacted:entropy]':[redacted:command_line] https://x`},
			{`curl -u ` + run + `:Hx9pLq2Vw7 https://x`, `curl -u [redacted:entropy]:[redacted:command_line] https://x`},
			{"x " + run + " then " + fakeGitHub, "x [redacted:entropy] then [redacted:github]"},
		} {
			if got, _ := redactString(tc.in); got != tc.want {
				t.Errorf("redactString(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}

// TestAWSKeyIsTwentyBytes: an AWS access key id is AKIA or ASIA and 16
// capitals or digits, no more and no fewer; a shorter or longer word that
// starts the same way (an example name, a constant) is no key.
func TestAWSKeyIsTwentyBytes(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"id " + fakeAWS, true},
		{"id " + fakeAWS + " end", true},
		{"id ASIA" + fakeAWS[4:] + ".", true},
		{"see AKIAEXAMPLE docs", false},
		{"see AKIAEXAMPLE", false},
		{"id " + fakeAWS + "Z", false},
		{"id " + fakeAWS + "z9", false},
	} {
		kind, ok := Secret(tc.s)
		if got := ok && kind == KindAWS; got != tc.want {
			t.Errorf("Secret(%q) = %q, %v; want aws %v", tc.s, kind, ok, tc.want)
		}
	}
}

// TestURLPortIsNoPassword: in scheme://host:port@…, the digits after the
// colon are a port (a mistyped or deceptive URL), not a password; a
// password of digits longer than a port, or with a letter, is one.
func TestURLPortIsNoPassword(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"open https://example.com:8080@evil.example/x", false},
		{"open https://example.com:1@evil.example/x", false},
		{"open https://example.com:99999@evil.example/x", false},
		{"open https://deploy:123456@git.example.com/x", true},
		{"open https://deploy:8080a@git.example.com/x", true},
		{"open https://deploy:a8080@git.example.com/x", true},
	} {
		kind, ok := Secret(tc.s)
		if got := ok && kind == KindURLPassword; got != tc.want {
			t.Errorf("Secret(%q) = %q, %v; want url_password %v", tc.s, kind, ok, tc.want)
		}
	}
}

// TestAuthorizationSchemeStays: an assignment's value that starts with an
// HTTP authorization scheme (Bearer, Basic, token, Bot) keeps the scheme,
// and the credential after it goes, even when it is too short for any
// other rule to find; the blanks after the assignment are bounded, so a
// value far from its key is no value.
func TestAuthorizationSchemeStays(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`Authorization: token Hx9pLq2Vw7Zt`, `Authorization: token [redacted:assignment]`},
		{`Authorization: Bot Hx9pLq2Vw7Zt`, `Authorization: Bot [redacted:assignment]`},
		{`Authorization: token   Hx9pLq2Vw7Zt`, `Authorization: token   [redacted:assignment]`},
		{`"Authorization": "Basic Hx9pLq2Vw7Zt"`, `"Authorization": "Basic [redacted:assignment]"`},
		{`token=` + strings.Repeat(" ", 6) + `Hx9pLq2Vw7Zt`, `token=` + strings.Repeat(" ", 6) + `Hx9pLq2Vw7Zt`},
	} {
		if got, _ := redactString(tc.in); got != tc.want {
			t.Errorf("redactString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestMixedCaseHexIsNoCredential: a run of hex digits in both cases is
// hex (an id, a digest written oddly), which the long-credential
// heuristic leaves alone however uniform it is; one letter past f makes
// it base62, a credential.
func TestMixedCaseHexIsNoCredential(t *testing.T) {
	hex := "3aF9c0B7e2D4a8F1b6C5d0E9f3A7c2B8e4D1f6A0"
	if !credentialRun(strings.Replace(hex, "a", "q", 1)) {
		t.Fatalf("credentialRun with a q: false; the run is too regular for the test")
	}
	if credentialRun(hex) {
		t.Errorf("credentialRun(%q) = true, want false: it is hex", hex)
	}
	if _, ok := Secret("digest " + hex); ok {
		t.Errorf("Secret finds a credential in hex %q", hex)
	}
}

// TestUserOptionNeedsBlankOrEquals: --user takes user:password after a
// blank or '=', never glued to other punctuation (--user.name:…, a
// different option or a config key).
func TestUserOptionNeedsBlankOrEquals(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"curl --user alice:Hx9pLq2Vw7 https://x", true},
		{"curl --user=alice:Hx9pLq2Vw7 https://x", true},
		{"git config --user.name:Hx9pLq2Vw7", false},
		{"tool --user/alice:Hx9pLq2Vw7", false},
		{"tool --user", false},
	} {
		kind, ok := Secret(tc.s)
		if got := ok && kind == KindCommandLine; got != tc.want {
			t.Errorf("Secret(%q) = %q, %v; want command_line %v", tc.s, kind, ok, tc.want)
		}
	}
}

// TestCapitalizedWordIsProse: a word with a capital first letter
// ("Incorrect", "Tokens") after a sensitive key or an authorization scheme
// is prose, as it is in lower case; a capital after the first letter, or a
// first byte that is punctuation, makes a token.
func TestCapitalizedWordIsProse(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"login failed: password: Incorrect", false},
		{"token: Expired. Sign in again", false},
		{"Bearer Tokens are short-lived", false},
		{"login failed: password: InCorrect", true},
		{"token=^Expired", true},
	} {
		if _, got := Secret(tc.s); got != tc.want {
			t.Errorf("Secret(%q) found %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestOptionValueAfterBlanks: an option's value follows it after at most
// four blanks; further away, or with nothing after the blanks, the option
// has no value here. A number attached to -p is a port or a process id,
// not a password.
func TestOptionValueAfterBlanks(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"vault login --token    4f9a8c7e6d5b4a39281716", true},
		{"vault login --token\t4f9a8c7e6d5b4a39281716", true},
		{"vault login --token     4f9a8c7e6d5b4a39281716", false},
		{"vault login --token  ", false},
		{"vault login --token", false},
		{"curl --user  ", false},
		{"strace -p1234567 -f", false},
		{"mysql -pSup3rS3cret9", true},
	} {
		if _, got := Secret(tc.s); got != tc.want {
			t.Errorf("Secret(%q) found %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestTokenBoundaries: a credential's match covers all of it. A URL's
// password that starts like a known token but goes on past it is the
// password whole; a quoted option value is redacted inside its quotes,
// and taken as it is, even when it reads as a word. A
// bearer token is at least 8 bytes; a key with OpenAI's sk- prefix has a
// digit in its body, which a slug does not.
func TestTokenBoundaries(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"clone https://deploy:" + fakeGitHub + ".x9@git.example.com/r", "clone https://deploy:[redacted:url_password]@git.example.com/r"},
		{"clone https://deploy:" + fakeGitHub + "@git.example.com/r", "clone https://deploy:[redacted:github]@git.example.com/r"},
		{`vault login --token "4f9a8c7e6d5b4a39281716" -x`, `vault login --token "[redacted:command_line]" -x`},
		// Quoted, a word is taken as the password it is given as.
		{`db --password "hunter" -x`, `db --password "[redacted:command_line]" -x`},
		{`db --password hunter -x`, `db --password hunter -x`},
		{"use Bearer abc123 here", "use Bearer abc123 here"},
		{"use Bearer abc12345 here", "use Bearer [redacted:bearer] here"},
		{"pip install sk-learn-pipeline-for-classification", "pip install sk-learn-pipeline-for-classification"},
		{"key sk-learn9pipeline-for-classification", "key [redacted:openai]"},
	} {
		if got, _ := redactString(tc.in); got != tc.want {
			t.Errorf("redactString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
