package redact

import (
	"encoding/base64"
	"strings"
)

// MinTransformed is the shortest secret value ReplaceTransformed looks for
// in transformed forms: shorter values, reversed or case-folded, match
// ordinary text too often.
const MinTransformed = 8

// ReplaceTransformed replaces, in s, the forms a known secret value
// commonly takes when a program or a workflow changes it before printing
// it, and returns the result. Each occurrence is replaced by repl(form),
// form naming the transform:
//
//   - "reversed": the value's bytes in reverse order;
//   - "case": the value or its reverse with ASCII letters in another case
//     (upper-cased, lower-cased, or mixed);
//   - "base64": the value encoded with the standard or the URL alphabet,
//     padded or not, alone or inside a longer encoded text (such as
//     "user:secret" in a Basic authorization header): the characters of
//     the encoding that depend on the value alone are found at each of the
//     three alignments a value can have in the encoded bytes;
//   - "split": the value (in any case) with white space inside it, as a
//     value cut in two and joined with a space, or wrapped across lines.
//
// The value as it is is not replaced here: the caller replaces it first.
// Values shorter than MinTransformed bytes are left alone. What it does
// not find: other encodings (hex, URL-escaping, JSON \u escapes beyond
// ASCII), a value split into separate strings (a list of its
// characters), or a value transformed twice in other ways.
func ReplaceTransformed(s, value string, repl func(form string) string) string {
	if len(value) < MinTransformed || s == "" {
		return s
	}
	rev := reverse(value)
	if rev != value {
		s = strings.ReplaceAll(s, rev, repl("reversed"))
	}
	for _, v := range []string{value, rev} {
		s = replaceFold(s, v, repl("case"))
	}
	// Whole encodings first, so that their last characters (which the
	// cores leave out, as they mix in the bytes after the value) go too.
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		s = strings.ReplaceAll(s, enc.EncodeToString([]byte(value)), repl("base64"))
	}
	for _, core := range base64Cores(value) {
		s = strings.ReplaceAll(s, core, repl("base64"))
	}
	return replaceSplit(s, value, repl("split"))
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// lowerASCII lower-cases ASCII letters only, so that byte offsets in the
// result are those of s.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// replaceFold replaces every ASCII-case-insensitive occurrence of pat in s.
func replaceFold(s, pat, with string) string {
	lp := lowerASCII(pat)
	if lp == strings.ToUpper(pat) { // no letters: nothing to fold
		return s
	}
	ls := lowerASCII(s)
	if !strings.Contains(ls, lp) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; ; {
		j := strings.Index(ls[i:], lp)
		if j < 0 {
			break
		}
		b.WriteString(s[last : i+j])
		b.WriteString(with)
		i += j + len(lp)
		last = i
	}
	b.WriteString(s[last:])
	return b.String()
}

// base64Cores returns, for each alphabet and each of the three alignments
// of value in the encoded bytes, the run of encoded characters determined
// by value's bytes alone, when at least MinTransformed long. Padding is
// never part of a core, so padded and unpadded encodings both match.
func base64Cores(value string) []string {
	var cores []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			e := enc.EncodeToString(append(make([]byte, k), value...))
			// Characters before start mix in the k leading bytes; from
			// end on they would mix in the bytes after value.
			start := (k*8 + 5) / 6
			end := (k + len(value)) * 8 / 6
			if end-start >= MinTransformed && end <= len(e) {
				c := e[start:end]
				if !strings.Contains(strings.Join(cores, "\x00"), c) {
					cores = append(cores, c)
				}
			}
		}
	}
	return cores
}

// replaceSplit replaces every occurrence of value, ignoring ASCII case,
// with at least one run of white space between two of its bytes.
func replaceSplit(s, value, with string) string {
	if !strings.ContainsAny(s, " \t\r\n") {
		return s
	}
	lv := lowerASCII(value)
	ls := lowerASCII(s)
	var b strings.Builder
	last := 0
	for i := 0; i < len(ls); i++ {
		if ls[i] != lv[0] {
			continue
		}
		end, spaced := matchSpaced(ls, i, lv)
		if end < 0 || !spaced {
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(with)
		last = end
		i = end - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchSpaced matches v at s[i:], allowing white space between its bytes.
// It returns the end of the match (-1 for none) and whether any white
// space was skipped.
func matchSpaced(s string, i int, v string) (end int, spaced bool) {
	j := 0
	for i < len(s) && j < len(v) {
		switch {
		case s[i] == v[j]:
			i++
			j++
		case j > 0 && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'):
			i++
			spaced = true
		default:
			return -1, false
		}
	}
	if j < len(v) {
		return -1, false
	}
	return i, spaced
}
