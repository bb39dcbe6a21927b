package redact

import "strings"

// A Finding is a secret found by Scan.
type Finding struct {
	Offset  int    // byte offset of the secret's first byte, from 0
	Line    int    // line of that byte, from 1
	Kind    string // one of the Kind constants
	Excerpt string // the secret masked, as masked describes
}

// Scan returns the secrets in b, which may be any text (JSON, JSON Lines,
// markdown, a log), in order, without changing b. It finds what Secret
// finds, at every offset; run on the output of Bytes it finds nothing in
// practice (TestScanRedacted), since Bytes removed what the same scanner
// found in each decoded string.
//
// Scan does not decode JSON. It reads \n, \r, \t, \b and \f as the
// white space they stand for, so a token after an escaped newline is found,
// and a private key block is matched through its escaped newlines; a secret
// written with \u escapes is not found.
func Scan(b []byte) []Finding {
	s := string(b)
	var fs []Finding
	line, last := 1, 0
	scan(s, func(m match) bool {
		line += strings.Count(s[last:m.start], "\n")
		last = m.start
		fs = append(fs, Finding{
			Offset:  m.start,
			Line:    line,
			Kind:    m.kind,
			Excerpt: masked(s[m.start:m.end], m.kind),
		})
		return true
	})
	return fs
}

// prefixes are the public prefixes of the credential families, longest
// first; masked keeps them because they say what leaked without saying
// anything of the secret.
var prefixes = [...]string{
	"hooks.slack.com/services/", "github_pat_", "sk-ant-api03-", "sk-proj-", "sk_live_", "sk_test_",
	"rk_live_", "rk_test_", "sk-ant-", "glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-",
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "AKIA", "ASIA", "AIza", "npm_", "eyJ", "hf_", "sk-",
}

// masked returns an excerpt of the secret v that identifies it for a
// reviewer without revealing it: the family prefix (or, for a private key,
// its header line), four asterisks, and the last two bytes when at least
// 12 bytes are hidden, as "ghp_****9f". Two bytes of a long random secret
// leave its strength intact and let a reviewer tell two findings apart.
func masked(v, kind string) string {
	p := ""
	if kind == KindPrivateKey {
		if i := strings.Index(v[5:], "-----"); i >= 0 {
			p = v[:5+i+5]
		}
	} else {
		for _, q := range prefixes {
			if strings.HasPrefix(v, q) {
				p = q
				break
			}
		}
	}
	if kind == KindPrivateKey || len(v)-len(p) < 14 {
		return p + "****"
	}
	return p + "****" + v[len(v)-2:]
}
