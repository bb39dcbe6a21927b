package redact

import "strings"

// Kinds of secret, as Secret and Finding.Kind name them.
const (
	KindJWT         = "jwt"
	KindGitHub      = "github"
	KindSlack       = "slack"
	KindAWS         = "aws"
	KindGitLab      = "gitlab"
	KindHuggingFace = "huggingface"
	KindGoogle      = "google"
	KindNPM         = "npm"
	KindOpenAI      = "openai"
	KindAnthropic   = "anthropic"
	KindStripe      = "stripe"
	KindPrivateKey  = "private_key"
	KindBearer      = "bearer"
	KindAssignment  = "assignment"   // the value of a sensitive key=value or key: value
	KindURLPassword = "url_password" // the password of scheme://user:password@host
	KindEntropy     = "entropy"      // the long-credential heuristic
	KindCommandLine = "command_line" // a password or user:password a command-line option passes
	KindBasic       = "basic_auth"   // base64 of user:password, as HTTP Basic and docker's config hold it
)

// Secret reports whether s is or contains a credential, and the kind of
// the first one. It never returns the credential itself.
func Secret(s string) (kind string, ok bool) {
	scan(s, func(m match) bool {
		kind, ok = m.kind, true
		return false
	})
	return kind, ok
}

// Byte classes. One table lookup classifies a byte for every question the
// scanner asks of it.
const (
	cAlnum  = 1 << iota // [A-Za-z0-9]
	cWord               // [A-Za-z0-9_]
	cURL64              // [A-Za-z0-9_-]: base64url
	cCred               // [A-Za-z0-9+/_=-]: the alphabet of the long-credential heuristic
	cIdent              // [A-Za-z0-9_.-]: may appear in an assignment's key
	cBearer             // [A-Za-z0-9._~+/=-]: may appear in a bearer token
	cTrig               // may start a match: a family's first byte, '-', ':' or '='
	cHex                // [0-9A-Fa-f]
)

var class = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if alnum {
			t[c] |= cAlnum | cWord | cURL64 | cCred | cIdent | cBearer
		}
	}
	t['_'] |= cWord | cURL64 | cCred | cIdent | cBearer
	t['-'] |= cURL64 | cCred | cIdent | cBearer | cTrig
	t['+'] |= cCred | cBearer
	t['/'] |= cCred | cBearer
	t['='] |= cCred | cBearer | cTrig
	t['.'] |= cIdent | cBearer
	t['~'] |= cBearer
	t[':'] |= cTrig
	for _, c := range []byte("eghxAnsrBbp") {
		t[c] |= cTrig
	}
	for c := range families {
		if len(families[c]) > 0 {
			t[c] |= cTrig
		}
	}
	for _, c := range []byte("0123456789abcdefABCDEF") {
		t[c] |= cHex
	}
	return t
}()

// A match is the byte span of one secret in the scanned text.
type match struct {
	start, end int
	kind       string
}

// minRun and maxRun bound the runs of cCred bytes that the long-credential
// heuristic examines: shorter runs are too short to be a credential of
// unknown shape, longer ones are encoded payloads (images, archives), whose
// entropy says nothing.
const (
	minRun = 32
	maxRun = 1024
)

// minBasicRun is the shortest run that may be base64 of user:password
// (KindBasic): 12 bytes of credential encode to 16.
const minBasicRun = 16

// scan calls yield with each secret in s, in order and without overlap,
// until yield returns false.
//
// It is one pass over s. A byte that is not in cTrig costs a table lookup
// and, at the end of a run of cCred bytes, a length check; family prefixes
// are tried only at word starts, assignments only at ':' and '='.
//
// Redaction depends on a property of this loop: replacing each match by
// text that starts with '[' and ends with ']' yields a string with no
// match. Two rules give it. Nothing looks back across the end of the last
// match (floor), and the position right after a match counts as a word
// start, so the scanner sees the same context on either side of a match
// as it sees after the match has been replaced by "[redacted:…]". And a
// run that a match interrupts is examined up to the match, as it would be
// up to the '['.
func scan(s string, yield func(match) bool) {
	if len(s) < minText {
		return
	}
	rs := 0    // start of the current run of cCred bytes
	floor := 0 // end of the last match
	for i := 0; i < len(s); {
		// The common byte continues a run and starts nothing.
		for i < len(s) && class[s[i]]&(cCred|cTrig) == cCred {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		f := class[c]
		if f&cCred == 0 {
			if i-rs >= minBasicRun {
				if m, ok := runAt(s, rs, i, floor); ok && !yield(m) {
					return
				}
			}
			rs = i + 1
			if c == '\\' && escape(s, i+1) {
				rs++ // in raw JSON, \nAbC… is a run AbC… after a newline
			}
		}
		if f&cTrig != 0 {
			var m match
			ok := false
			switch {
			case c == ':' && strings.HasPrefix(s[i:], "://"):
				m, ok = urlPasswordAt(s, i)
			case c == ':' || c == '=':
				m, ok = assignAt(s, i, floor)
			case c == '-':
				m, ok = privateKeyAt(s, i)
				if !ok && (i == floor || class[s[i-1]]&cWord == 0 && s[i-1] != '-') {
					m, ok = optionAt(s, i)
				}
			case i == floor || class[s[i-1]]&cWord == 0 || i-2 >= floor && s[i-2] == '\\' && escape(s, i-1):
				m, ok = prefixAt(s, i)
			case s[i-1] == '_':
				// Inside an identifier (curl_xoxb-…, deploy_ghp_…): an
				// underscore separates words as well as a blank does.
				m, ok = prefixAt(s, i)
			case c == 'g' || c == 'x' || c == 's' || c == 'r':
				m, ok = embeddedAt(s, i)
			}
			if ok {
				if !runsIn(s, rs, m.start, floor, yield) || !yield(m) {
					return
				}
				i, rs, floor = m.end, m.end, m.end
				continue
			}
		}
		i++
	}
	if len(s)-rs >= minBasicRun {
		if m, ok := runAt(s, rs, len(s), floor); ok {
			yield(m)
		}
	}
}

// escape reports whether s[i] is the letter of a JSON escape of white
// space (\n, \r, \t, \b, \f) after a backslash. Scanning raw JSON, the
// scanner treats such a letter as the white space it stands for, so that it
// sees a word start and the run after it as it does in the decoded string.
func escape(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	switch s[i] {
	case 'n', 'r', 't', 'b', 'f':
		return true
	}
	return false
}

// runsIn applies the long-credential heuristic to the runs of cCred bytes
// in s[from:to], for when a match at to cuts the scan short. It reports
// whether yield wants more.
func runsIn(s string, from, to, floor int, yield func(match) bool) bool {
	for from < to {
		for from < to && class[s[from]]&cCred == 0 {
			if s[from] == '\\' && escape(s, from+1) {
				from++ // as in scan
			}
			from++
		}
		end := from
		for end < to && class[s[end]]&cCred != 0 {
			end++
		}
		if end-from >= minBasicRun {
			if m, ok := runAt(s, from, end, floor); ok && !yield(m) {
				return false
			}
		}
		from = end
	}
	return true
}

// runAt applies the long-credential heuristic to the run s[start:end]; it
// looks no further back than floor.
func runAt(s string, start, end, floor int) (match, bool) {
	r := s[start:end]
	if len(r) > maxRun {
		return match{}, false
	}
	if basicCredential(r) {
		return match{start, end, KindBasic}, true
	}
	if len(r) < minRun || digest(s[floor:start], r) || !credentialRun(r) {
		return match{}, false
	}
	return match{start, end, KindEntropy}, true
}

// prefixAt matches a credential by its prefix at s[i], a word start: a
// family of knownAt or of the vendor families (family.go), or the
// password of a netrc line.
func prefixAt(s string, i int) (match, bool) {
	if len(s)-i < 8 {
		return match{}, false
	}
	if m, ok := knownAt(s, i); ok {
		return m, true
	}
	if m, ok := familyAt(s, i); ok {
		return m, true
	}
	if s[i] == 'p' {
		return netrcAt(s, i)
	}
	return match{}, false
}

// knownAt matches, at s[i], one of the families this package has always
// named, each checked by hand.
func knownAt(s string, i int) (match, bool) {
	t := s[i:]
	if len(t) < 8 {
		return match{}, false
	}
	switch t[0] {
	case 'e':
		return jwtAt(s, i)
	case 'g':
		if t[1] == 'h' && t[3] == '_' && strings.IndexByte("pousr", t[2]) >= 0 {
			return body(s, i, 4, cAlnum, 30, KindGitHub)
		}
		if strings.HasPrefix(t, "github_pat_") {
			return body(s, i, 11, cWord, 30, KindGitHub)
		}
		if strings.HasPrefix(t, "glpat-") {
			return body(s, i, 6, cURL64, 20, KindGitLab)
		}
	case 'x':
		// Slack's tokens go on with a number after the dash
		// (xoxb-123…-…), which a word such as xoxa-shipping does not.
		if strings.HasPrefix(t, "xox") && strings.IndexByte("abprs", t[3]) >= 0 && t[4] == '-' && '0' <= t[5] && t[5] <= '9' {
			if m, ok := body(s, i, 5, cURL64, 10, KindSlack); ok && hasDigit(s[i+5:m.end]) {
				return m, true
			}
		}
	case 'h':
		if strings.HasPrefix(t, "hooks.slack.com/services/") {
			j := i + 25
			for j < len(s) && (class[s[j]]&cURL64 != 0 || s[j] == '/') {
				j++
			}
			if j-(i+25) >= 20 {
				return match{i, j, KindSlack}, true
			}
			return match{}, false
		}
		if strings.HasPrefix(t, "hf_") {
			return body(s, i, 3, cAlnum, 30, KindHuggingFace)
		}
	case 'A':
		if strings.HasPrefix(t, "AKIA") || strings.HasPrefix(t, "ASIA") {
			j := i + 4
			for j < len(s) && j < i+20 && ('A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9') {
				j++
			}
			if j == i+20 && (j == len(s) || class[s[j]]&cAlnum == 0) {
				return match{i, j, KindAWS}, true
			}
			return match{}, false
		}
		if strings.HasPrefix(t, "AIza") {
			return body(s, i, 4, cURL64, 35, KindGoogle)
		}
	case 'n':
		if strings.HasPrefix(t, "npm_") {
			return body(s, i, 4, cAlnum, 30, KindNPM)
		}
	case 's':
		switch {
		case strings.HasPrefix(t, "sk-ant-"):
			return body(s, i, 7, cURL64, 20, KindAnthropic)
		case strings.HasPrefix(t, "sk_live_"), strings.HasPrefix(t, "sk_test_"):
			return body(s, i, 8, cAlnum, 16, KindStripe)
		case strings.HasPrefix(t, "sk-"):
			if m, ok := body(s, i, 3, cURL64, 20, KindOpenAI); ok && hasDigit(s[i+3:m.end]) {
				return m, true
			}
		}
	case 'r':
		if strings.HasPrefix(t, "rk_live_") || strings.HasPrefix(t, "rk_test_") {
			return body(s, i, 8, cAlnum, 16, KindStripe)
		}
	case 'B', 'b':
		if t[1] == 'e' && t[2] == 'a' && t[3] == 'r' && t[4] == 'e' && t[5] == 'r' || strings.HasPrefix(t, "BEARER") {
			return tokenAt(s, i+6, KindBearer)
		}
	}
	return match{}, false
}

// embeddedAt matches, at s[i] inside a word (after a letter or digit),
// the families whose prefix carries a separator of its own and is long
// enough not to occur in ordinary words or encodings: gh?_ and github_pat_,
// glpat-, xox?-, sk-ant-, and the Stripe live and test keys. Other
// prefixes (eyJ, AKIA, AIza, hf_, npm_, sk-) occur inside base64, hex and
// words, and are matched only at word starts and after an underscore.
func embeddedAt(s string, i int) (match, bool) {
	t := s[i:]
	if len(t) < 8 {
		return match{}, false
	}
	switch t[0] {
	case 'g':
		if t[1] == 'h' || t[1] == 'l' {
			return knownAt(s, i)
		}
	case 'x':
		if t[1] == 'o' {
			return knownAt(s, i)
		}
	case 's', 'r':
		// Inside a word, sk-ant- must go on as Anthropic's keys do
		// (api03-, admin01-, oat01-): "desk-ant-colony-…" is a name.
		if t[1] == 'k' && (strings.HasPrefix(t[2:], "-ant-api") || strings.HasPrefix(t[2:], "-ant-admin") || strings.HasPrefix(t[2:], "-ant-oat") ||
			strings.HasPrefix(t[2:], "_live_") || strings.HasPrefix(t[2:], "_test_")) {
			return knownAt(s, i)
		}
	}
	return match{}, false
}

// urlPasswordAt matches the password of a URL's userinfo,
// scheme://user:password@host, whose "://" is at s[i]. The user stays (it
// names an account, not a secret); a password that is a reference
// (${TOKEN}, <password>, an ALL_CAPS id) is not one. Userinfo may hold
// only unreserved, sub-delim and percent-encoded bytes, so a path, a port
// before a path, or an IPv6 literal ends the search before an '@'.
func urlPasswordAt(s string, i int) (match, bool) {
	j := i + 3
	colon := -1
	for ; j < len(s) && j < i+3+256; j++ {
		c := s[j]
		if c == '@' {
			break
		}
		if c == ':' && colon < 0 {
			colon = j
			continue
		}
		if class[c]&cAlnum == 0 && strings.IndexByte("-._~%!$&'()*+,;=:", c) < 0 {
			return match{}, false
		}
	}
	if j >= len(s) || s[j] != '@' || colon < 0 || j+1 >= len(s) || class[s[j+1]]&cAlnum == 0 {
		return match{}, false
	}
	start := colon + 1
	if !credible(s[start:j], true) || port(s[start:j]) {
		return match{}, false
	}
	if class[s[start]]&cTrig != 0 && class[s[start]]&cAlnum != 0 {
		if m, ok := prefixAt(s, start); ok && m.end == j {
			return m, true
		}
	}
	return match{start, j, KindURLPassword}, true
}

// port reports whether v reads as a port number (one to five digits):
// host:port@… is a mistyped or deceptive URL more often than a password.
func port(v string) bool {
	if len(v) > 5 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// body matches a prefix of length plen at s[i] followed by at least min
// bytes of class cls.
func body(s string, i, plen int, cls uint8, min int, kind string) (match, bool) {
	j := i + plen
	for j < len(s) && class[s[j]]&cls != 0 {
		j++
	}
	if j-(i+plen) < min {
		return match{}, false
	}
	return match{i, j, kind}, true
}

// jwtAt matches a JSON Web Token: base64url segments header.payload.signature
// whose header, a JSON object, encodes to "eyJ…". The signature may be empty
// (alg "none") only when the payload is also an encoded object.
func jwtAt(s string, i int) (match, bool) {
	if !strings.HasPrefix(s[i:], "eyJ") {
		return match{}, false
	}
	seg := func(j int) int {
		for j < len(s) && class[s[j]]&cURL64 != 0 {
			j++
		}
		return j
	}
	h := seg(i)
	if h-i < 10 || h >= len(s) || s[h] != '.' {
		return match{}, false
	}
	p := seg(h + 1)
	if p-(h+1) < 10 || p >= len(s) || s[p] != '.' {
		return match{}, false
	}
	e := seg(p + 1)
	if e-(p+1) < 10 && !strings.HasPrefix(s[h+1:], "eyJ") {
		return match{}, false
	}
	return match{i, e, KindJWT}, true
}

// tokenAt matches the token of an HTTP authorization scheme: blanks, then
// a token that does not read as a word ("Bearer tokens are…").
func tokenAt(s string, j int, kind string) (match, bool) {
	k := j
	for k < len(s) && k < j+4 && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k == j {
		return match{}, false
	}
	start := k
	if start < len(s) && class[s[start]]&cTrig != 0 && class[s[start]]&cAlnum != 0 {
		if m, ok := prefixAt(s, start); ok {
			return m, true
		}
	}
	for k < len(s) && class[s[k]]&cBearer != 0 {
		k++
	}
	if k-start < 8 || wordLike(s[start:k]) {
		return match{}, false
	}
	return match{start, k, kind}, true
}

// privateKeyAt matches a PEM private key block at s[i]: the header, the
// body and the footer when it follows. The header alone is enough to
// match, since it appears only with the key.
//
// When the footer of the same label follows within maxPEM bytes, the
// match runs to it whatever lies between: the body's line breaks may be
// raw, escaped once or twice (\n, \\n, JSON inside a JSON string) or
// escaped slashes (\/), and a legacy encrypted key has header lines
// (Proc-Type: 4,ENCRYPTED), none of which a scan of base64 bytes would
// cross, so that it stopped early and the rest of the body, its short
// last line first, was left in the text. Without a footer (a truncated
// key), the body is scanned as base64 across line breaks and their
// escapes.
func privateKeyAt(s string, i int) (match, bool) {
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s[i:], begin) {
		return match{}, false
	}
	head := i + len(begin)
	end := strings.Index(s[head:min(len(s), head+64)], "-----")
	if end < 0 || !strings.HasSuffix(s[head:head+end], "PRIVATE KEY") {
		return match{}, false
	}
	j := head + end + 5
	footer := "-----END " + s[head:head+end] + "-----"
	if f := strings.Index(s[j:min(len(s), j+maxPEM)], footer); f >= 0 {
		return match{i, j + f + len(footer), KindPrivateKey}, true
	}
body:
	for j < len(s) {
		c := s[j]
		switch {
		case class[c]&cCred != 0 && c != '-', c == '\n', c == '\r':
			j++
		case c == '\\':
			k := j
			for k < len(s) && s[k] == '\\' {
				k++
			}
			if k == len(s) || s[k] != 'n' && s[k] != 'r' && s[k] != '/' {
				break body
			}
			j = k + 1
		default:
			break body
		}
	}
	if strings.HasPrefix(s[j:], "-----END ") {
		if e := strings.Index(s[j+9:min(len(s), j+9+64)], "-----"); e >= 0 {
			j += 9 + e + 5
		}
	}
	return match{i, j, KindPrivateKey}, true
}

// maxPEM bounds the distance from a private key's header to its footer:
// an RSA key of 16384 bits is under 13 KB of PEM, and escaping its line
// breaks twice adds a few hundred bytes.
const maxPEM = 16 << 10

// minText is a lower bound on the length of a text that holds a match: the
// shortest is an assignment such as token":"x (9 bytes). Most JSON keys and
// many values are shorter and cost nothing.
const minText = 9

// maxKey bounds the keys that assignAt and SensitiveKey consider.
const maxKey = 64

// assignAt matches the value of an assignment to a sensitive key whose
// separator (':' or '=') is at s[i]: token=…, "password": "…",
// --client-secret=…, Authorization: Bearer …. The key may be quoted (JSON,
// also JSON inside a JSON string, with \"); a quoted key and a quoted value
// make the whole quoted string the value, whatever it holds, since a
// document that still has it unredacted is what validate must refuse.
// Otherwise the value is one unquoted word, and it must not look like
// prose: see credible.
func assignAt(s string, i, floor int) (match, bool) {
	j := i
	for j > floor && j > i-4 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	quotedKey := false
	if j > floor && (s[j-1] == '"' || s[j-1] == '\'') {
		quotedKey = true
		j--
		if j > floor && s[j-1] == '\\' {
			j--
		}
	}
	keyEnd := j
	for j > floor && keyEnd-j <= maxKey && class[s[j-1]]&cIdent != 0 {
		j--
	}
	if keyEnd-j < 5 || keyEnd-j > maxKey {
		return match{}, false
	}
	key := s[j:keyEnd]
	if !sensitive(key, true) {
		return match{}, false
	}

	k := i + 1
	if s[i] == ':' && k < len(s) && s[k] == ':' {
		return match{}, false // a path such as Token::new
	}
	for k < len(s) && k < i+5 && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k < len(s) && s[k] == '\\' {
		k++
	}
	var q byte
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		q = s[k]
		k++
	}
	// An authorization scheme is not the secret; the token after it is.
	kind := KindAssignment
	if n := scheme(s[k:]); n > 0 {
		if strings.EqualFold(s[k:k+n], "bearer ") {
			kind = KindBearer
		}
		k += n
		for k < len(s) && s[k] == ' ' {
			k++
		}
	}
	start := k
	quoted := quotedKey && q != 0
	if quoted {
		for k < len(s) && s[k] != q && s[k] != '\\' && s[k] != '\n' {
			k++
		}
	} else {
		for k < len(s) && !stop(s[k]) {
			k++
		}
	}
	if !credible(s[start:k], quoted) {
		return match{}, false
	}
	if class[s[start]]&cTrig != 0 && class[s[start]]&cAlnum != 0 {
		if m, ok := prefixAt(s, start); ok {
			return m, true
		}
	}
	if kind == KindAssignment && containsFold(key, "aws_secret_access_key") {
		kind = KindAWS
	}
	return match{start, k, kind}, true
}

// scheme returns the length of an HTTP authorization scheme and the blank
// after it at the start of s, or 0.
func scheme(s string) int {
	for _, w := range [...]string{"bearer ", "basic ", "token ", "bot "} {
		if len(s) > len(w) && strings.EqualFold(s[:len(w)], w) {
			return len(w)
		}
	}
	return 0
}

// stop reports whether c ends an unquoted assignment value.
func stop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', ',', ';', '&', '\\', '(', ')', '[', ']', '{', '}', '<', '>', '|':
		return true
	}
	return false
}

// credible reports whether v, the value of an assignment to a sensitive
// key, may be a credential. References are not: $VAR, ${{ secrets.X }},
// {{ template }}, <placeholder>, [PLACEHOLDER], an ALL_CAPS logical id such as
// CRATES_IO_TOKEN, nor an earlier redaction. A quoted value is otherwise
// taken as it is; an unquoted one must also not read as prose: at least 6
// bytes, not a placeholder word, not a word (see wordLike).
func credible(v string, quoted bool) bool {
	if v == "" || strings.HasPrefix(v, "[redacted") || strings.HasPrefix(v, "{{") {
		return false
	}
	switch v[0] {
	case '$', '<', '%', '*':
		return false
	case '[':
		if v[len(v)-1] == ']' {
			return false // [PASSWORD]
		}
	}
	if varName(v) {
		return false
	}
	if quoted {
		return true
	}
	if len(v) < 6 || wordLike(v) {
		return false
	}
	switch strings.ToLower(v) {
	case "undefined", "redacted", "example", "placeholder", "required", "optional":
		return false
	}
	return true
}

// varName reports whether v is an ALL_CAPS identifier, the shape of an
// environment variable or a logical secret id.
func varName(v string) bool {
	if v[0] < 'A' || v[0] > 'Z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// wordLike reports whether v reads as a word or an identifier made of words
// rather than as a token: no digits, and no capital letter except the first
// (so "tokens", "Required" and "release-eng" are words, "hunter2" and
// "aBcDeF" are not).
func wordLike(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case 'a' <= c && c <= 'z', c == '_', c == '-', c == '.':
		case 'A' <= c && c <= 'Z' && i == 0:
		default:
			return false
		}
	}
	return true
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if '0' <= s[i] && s[i] <= '9' {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lowercase ASCII string sub,
// ignoring ASCII case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
