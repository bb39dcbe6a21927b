package redact

import "strings"

// Credentials a command line passes as an option's value, and the password
// of a netrc line. Agents type these in shell commands (mysql -pPASS,
// curl -u user:pass, vault login --token X) and configuration files they
// print (.netrc), where no key=value or known prefix announces them. The
// value must be credible (see credible): a reference ($PASS, ${{ … }},
// <password>, [PASSWORD]) or a word (mkdir -p, gcc -pthread, -u root:root,
// user:pass) is not a credential.

// optionAt matches at s[i], a '-' at a word start, the credential of a
// command-line option:
//
//   - -u user:password and --user user:password (curl, and every tool
//     that copied its option), with the user:password attached (-uUSER:PW,
//     --user=USER:PW), after blanks, and quoted as a whole or in parts; the
//     match is the password;
//   - -pPASSWORD, attached (mysql and its tools, where -p with a blank
//     after it asks for the password instead);
//   - --NAME VALUE, where NAME is a sensitive key (--password,
//     --token, --client-secret): the form with '=' is an assignment, which
//     assignAt matches.
func optionAt(s string, i int) (match, bool) {
	if i+2 >= len(s) {
		return match{}, false
	}
	switch s[i+1] {
	case 'u':
		return userPasswordAt(s, i+2, true)
	case 'p':
		return attachedPasswordAt(s, i+2)
	case '-':
	default:
		return match{}, false
	}
	j := i + 2
	for j < len(s) && j-i <= maxKey && class[s[j]]&cIdent != 0 && s[j] != '.' {
		j++
	}
	name := s[i+2 : j]
	if name == "user" {
		return userPasswordAt(s, j, false)
	}
	if j == len(s) || s[j] != ' ' && s[j] != '\t' || !sensitive(name, true) {
		return match{}, false
	}
	return blankValueAt(s, j, KindCommandLine)
}

// blankValueAt matches the value after the blanks at s[j] (at most four):
// a quoted string, or a word that does not start another option.
func blankValueAt(s string, j int, kind string) (match, bool) {
	k := j
	for k < len(s) && k < j+4 && (s[k] == ' ' || s[k] == '\t') {
		k++
	}
	if k == j || k == len(s) || s[k] == '-' {
		return match{}, false
	}
	start, end, quoted := valueSpan(s, k)
	v := s[start:end]
	// A key=value spec (docker build --secret id=npmrc,src=…) names a
	// secret; base64 padding is the only '=' a password here ends with.
	if !credible(v, quoted) || strings.Contains(strings.TrimRight(v, "="), "=") {
		return match{}, false
	}
	return match{start, end, kind}, true
}

// valueSpan returns the span of the value at s[k]: inside its quotes when
// it is quoted (up to the closing quote, or a newline or the end when it
// has none), else up to the first byte that stop accepts.
func valueSpan(s string, k int) (start, end int, quoted bool) {
	if q := s[k]; q == '"' || q == '\'' {
		end = k + 1
		for end < len(s) && s[end] != q && s[end] != '\n' && s[end] != '\\' {
			end++
		}
		return k + 1, end, true
	}
	end = k
	for end < len(s) && !stop(s[end]) {
		end++
	}
	return k, end, false
}

// userPasswordAt matches the password of the user:password that follows an
// option -u or --user ending at s[j]: attached (only after -u), after '='
// (only after --user) or after blanks. The user may be empty or quoted; the
// password may be quoted on its own ("u":"p", u:'p').
func userPasswordAt(s string, j int, short bool) (match, bool) {
	k := j
	switch {
	case k < len(s) && (s[k] == ' ' || s[k] == '\t'):
		for k < len(s) && k < j+6 && (s[k] == ' ' || s[k] == '\t') {
			k++
		}
	case k < len(s) && s[k] == '=' && !short:
		k++
	case short && class[s[k]]&cWord != 0:
		// -uUSER:PW (optionAt saw a byte after -u)
	default:
		return match{}, false
	}
	if k >= len(s) {
		return match{}, false
	}
	// The user, up to the colon.
	var colon int
	if q := s[k]; q == '"' || q == '\'' {
		e := strings.IndexByte(s[k+1:min(len(s), k+1+256)], q)
		if e < 0 {
			return match{}, false
		}
		inner := s[k+1 : k+1+e]
		if c := strings.IndexByte(inner, ':'); c >= 0 {
			// "user:password" quoted as a whole.
			start := k + 1 + c + 1
			return passwordMatch(s, start, k+1+e)
		}
		colon = k + 1 + e + 1
	} else {
		colon = k
		for colon < len(s) && colon < k+256 && s[colon] != ':' && !stop(s[colon]) {
			colon++
		}
	}
	if colon >= len(s)-1 || s[colon] != ':' {
		return match{}, false
	}
	start, end, _ := valueSpan(s, colon+1)
	return passwordMatch(s, start, end)
}

// passwordMatch matches s[start:end] as the password of user:password
// when credible accepts it as an unquoted value: a quoted "test" or
// "token" is a placeholder here, not a password.
func passwordMatch(s string, start, end int) (match, bool) {
	if end <= start || !credible(s[start:end], false) {
		return match{}, false
	}
	return match{start, end, KindCommandLine}, true
}

// attachedPasswordAt matches the password of -pPASSWORD, whose first byte
// is at s[k]. An attached -p is also a port (-p8080, -p127.0.0.1:80:80),
// a plugin (-p no:cacheprovider) or a word (-pthread, -print0): the value
// must hold no ':', '/', '.', '=' or ',' and be credible, which a word or
// a number is not.
func attachedPasswordAt(s string, k int) (match, bool) {
	start, end, _ := valueSpan(s, k)
	if start != k {
		return match{}, false // -p"…": a quote right after -p is rare, and ambiguous
	}
	v := s[start:end]
	if strings.ContainsAny(v, ":/.=,") || allDigits(v) || !credible(v, false) {
		return match{}, false
	}
	return match{start, end, KindCommandLine}, true
}

// netrcAt matches, at s[i], a word start, the password of a netrc entry:
// "password X" or "passwd X" with blanks between them, after "login" in
// the 256 bytes before (".netrc", and the ftp and git
// credential files that share its format). Without that context the
// words are prose ("Change your password immediately:"); even "machine"
// is ("when the machine powers off").
func netrcAt(s string, i int) (match, bool) {
	before := s[max(0, i-256):i]
	if !strings.Contains(before, "login ") {
		return match{}, false
	}
	t := s[i:]
	var n int
	switch {
	case strings.HasPrefix(t, "password"):
		n = len("password")
	case strings.HasPrefix(t, "passwd"):
		n = len("passwd")
	default:
		return match{}, false
	}
	if i+n >= len(s) || s[i+n] != ' ' && s[i+n] != '\t' {
		return match{}, false
	}
	return blankValueAt(s, i+n, KindCommandLine)
}

func allDigits(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// JoinOptionValues returns argv, a command line split into words, with
// each credential that an option passes in the next word joined to its
// option as getopt also reads it: "-u", "user:pw" becomes "-uuser:pw";
// "--user", "user:pw" becomes "--user=user:pw"; "--password", "pw"
// becomes "--password=pw". Secret then finds the credential in one word,
// with the option that makes it one, wherever the words go one by one
// (a workflow's arguments). Other words are returned as they are; argv is
// not modified.
func JoinOptionValues(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		w := argv[i]
		if i+1 < len(argv) && strings.HasPrefix(w, "-") && !strings.ContainsAny(w, "= \t") {
			text := w + " " + argv[i+1]
			if m, ok := optionAt(text, 0); ok && m.end == len(text) {
				if out == nil {
					out = append(make([]string, 0, len(argv)), argv[:i]...)
				}
				if w == "-u" {
					out = append(out, w+argv[i+1])
				} else {
					out = append(out, w+"="+argv[i+1])
				}
				i++
				continue
			}
		}
		if out != nil {
			out = append(out, w)
		}
	}
	if out == nil {
		return argv
	}
	return out
}
