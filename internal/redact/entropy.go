package redact

import (
	"encoding/base64"
	"math"
	"strings"
)

// The long-credential heuristic decides whether a run of 32 to 1024 bytes
// from [A-Za-z0-9+/_=-] with no known prefix is a credential. A generated
// credential is uniform over its alphabet; what traces otherwise hold in
// such runs is made of words (identifiers, paths, slugs), of hex (digests,
// UUIDs, colors) or is base64 of text. So a run is a credential when all of
// these hold:
//
//   - it has lower-case letters, capitals and digits, and is not all hex
//     digits: digests and UUIDs are hex, identifiers rarely mix all three
//     classes;
//   - between adjacent letters and digits the class (lower, upper, digit)
//     changes at least minChange of the time: about 62 % for uniform
//     base62, under 30 % for CamelCase words with a version number in them;
//   - at most maxWordy (half) of its bytes are in runs of four or more of
//     one class (lower, upper, digit): words and years make such runs
//     ("elease", "rtifacts", "2024" are two thirds of
//     ReleaseTrain2024Q1BuildArtifactsForLinuxAmd64), uniform base62 seldom
//     more than a fifth;
//   - its Shannon entropy, over its bytes, is at least minEntropy bits per
//     byte: a uniform 32-byte base62 run has about 4.5. This test alone
//     does not separate: long CamelCase identifiers reach 4.4 to 4.6, which
//     is why the two tests above exist;
//   - it is not base64 of printable text (unless that text holds a secret):
//     base64 of a sentence passes the three tests above.
//
// On uniform random strings the four tests miss about 2 % of 32-byte
// credentials, under 1 % from 40 bytes and none from 128
// (TestCredentialRunRecall). Credentials of a single case and digits
// (base36) or of hex are missed on purpose: they cannot be told from ids and digests without context, which
// the assignment rule supplies when there is any.
const (
	minChange  = 0.35
	maxWordy   = 0.5
	minEntropy = 4.2
)

// digest reports whether the run r, preceded by the text before, is a
// digest or an id in a notation that says so: base64 digests in Subresource
// Integrity form (sha512-…, npm and Nix) or after h1: (go.sum) or
// sha256: (OCI, pip), and the ids that model APIs give responses, messages
// and tool calls (chatcmpl-…, msg_…, toolu_…), which are uniform random
// strings like credentials but are not secret and fill agent traces.
func digest(before, r string) bool {
	for _, p := range [...]string{"h1:", "sha1:", "sha256:", "sha384:", "sha512:"} {
		if strings.HasSuffix(before, p) {
			return true
		}
	}
	for _, p := range [...]string{
		"sha1-", "sha256-", "sha384-", "sha512-",
		"chatcmpl-", "cmpl-", "msg_", "toolu_", "srvtoolu_", "call_", "req_", "resp_",
		"run_", "asst_", "thread_", "step_", "file-", "batch_",
	} {
		if i := strings.Index(r, p); i == 0 || i > 0 && (r[i-1] == '=' || r[i-1] == '/') {
			return true
		}
	}
	return false
}

func credentialRun(r string) bool {
	var hist [128]uint16
	var lower, upper, digit, pairs, changes, wordy, same int
	hex := true
	var prev byte // class of the previous byte: 1 lower, 2 upper, 3 digit, 0 other
	for i := 0; i < len(r); i++ {
		c := r[i]
		hist[c&127]++
		var k byte
		switch {
		case 'a' <= c && c <= 'z':
			k = 1
			lower++
			hex = hex && c <= 'f'
		case 'A' <= c && c <= 'Z':
			k = 2
			upper++
			hex = hex && c <= 'F'
		case '0' <= c && c <= '9':
			k = 3
			digit++
		}
		if k != 0 && prev != 0 {
			pairs++
			if k != prev {
				changes++
			}
		}
		if k != 0 && k == prev {
			same++
		} else {
			if same >= 4 {
				wordy += same
			}
			same = 1
		}
		prev = k
	}
	if same >= 4 && prev != 0 {
		wordy += same
	}
	if hex || lower == 0 || upper == 0 || digit == 0 {
		return false
	}
	if float64(changes) < minChange*float64(pairs) || float64(wordy) > maxWordy*float64(len(r)) {
		return false
	}
	if entropy(&hist, len(r)) < minEntropy {
		return false
	}
	if text, ok := base64Text(r); ok {
		_, secret := Secret(text)
		return secret
	}
	return true
}

// entropy returns the Shannon entropy, in bits per byte, of n bytes with
// the histogram h: log2(n) − Σ c·log2(c) / n.
func entropy(h *[128]uint16, n int) float64 {
	var sum float64
	for _, c := range h {
		if c > 1 {
			f := float64(c)
			sum += f * math.Log2(f)
		}
	}
	return math.Log2(float64(n)) - sum/float64(n)
}

// base64Text decodes r as base64 (standard or URL alphabet, padded or not)
// and returns the text when at least 95 % of the decoded bytes are
// printable ASCII. Uniform random bytes are printable 37 % of the time, so
// a decoded credential never passes.
func base64Text(r string) (string, bool) {
	std := strings.ContainsAny(r, "+/")
	url := strings.ContainsAny(r, "-_")
	if std && url {
		return "", false
	}
	enc := base64.RawStdEncoding
	if url {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(strings.TrimRight(r, "="))
	if err != nil || len(b) == 0 {
		return "", false
	}
	printable := 0
	for _, c := range b {
		if 0x20 <= c && c < 0x7f || c == '\n' || c == '\r' || c == '\t' {
			printable++
		}
	}
	if printable*100 < 95*len(b) {
		return "", false
	}
	return string(b), true
}

// basicCredential reports whether the run r is base64 of user:password,
// what HTTP Basic authorization and a docker config's "auth" hold: decoded,
// printable text without blanks and with exactly one colon, after a user
// of at least one byte from [A-Za-z0-9_.@+-], before a password that credible accepts. Base64 of
// other text (a path, a sentence, JSON) has blanks, no colon or several,
// or no credible password; random bytes are not printable.
func basicCredential(r string) bool {
	t := strings.TrimRight(r, "=")
	if len(t) < minBasicRun-2 || len(t) > 256 || len(t)%4 == 1 {
		return false
	}
	// Decode as it goes, without allocating, and stop at the first byte
	// that cannot be in user:password: most runs are paths or words,
	// whose decoding fails within a few bytes.
	var buf [192]byte
	n, colon := 0, -1
	var acc uint32
	bits := 0
	for i := 0; i < len(t); i++ {
		d := b64[t[i]]
		if d == 0xff {
			return false
		}
		acc = acc<<6 | uint32(d)
		bits += 6
		if bits < 8 {
			continue
		}
		bits -= 8
		c := byte(acc >> bits)
		switch {
		case c <= ' ' || c >= 0x7f:
			return false
		case c == ':':
			if colon >= 0 {
				return false
			}
			colon = n
		case colon < 0 && class[c]&cIdent == 0 && c != '@' && c != '+':
			return false // not a user name: JSON ({"alg":…}), a URL
		}
		buf[n] = c
		n++
	}
	return colon > 0 && credible(string(buf[colon+1:n]), false)
}

// b64 maps the bytes of both base64 alphabets (standard and URL) to their
// values, and every other byte to 0xff.
var b64 = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()
