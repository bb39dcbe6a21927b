package candidate

import (
	"strings"

	"github.com/crystallize-dev/crystallize/internal/redact"
)

// Identifier turns any string into a name that generated Starlark code can
// bind and reference: a workflow function name, a parameter, a local. The
// rule, applied in this order, is:
//
//  1. a lower-case letter or digit followed by an upper-case letter, and
//     the last capital of an acronym followed by a lower-case letter, mark
//     a word boundary ("repoPath" and "HTTPServer" become "repo_Path" and
//     "HTTP_Server"), so camelCase keys read as snake_case;
//  2. every run of characters outside [A-Za-z0-9_], and every run of
//     underscores, becomes one "_";
//  3. ASCII letters are lower-cased;
//  4. leading and trailing underscores are trimmed;
//  5. an empty result becomes "value";
//  6. a result that starts with a digit gets a leading "_";
//  7. a result that is a Starlark keyword or reserved word, a universal
//     name (None, len, str, …) or a name the workflow host binds (ctx,
//     json, struct) gets a trailing "_".
//
// Before step 1, every secret in s (redact.Value) is replaced by its
// redaction ("[redacted:github]" becomes "redacted_github"): names are
// built from goals, tool names and keys, which can hold a token, and the
// later steps would split and lower-case the token into a shape no
// scanner recognizes, so it must go first.
//
// Non-ASCII letters are replaced by step 2 although Starlark would accept
// them: an identifier that looks like another is a review hazard, and
// transliteration would need tables this package does not want.
//
// The result always satisfies IsIdentifier, never shadows a name the
// generated code relies on, and Identifier is idempotent. Distinct inputs
// can map to the same identifier ("repo-path", "repo_path", "repoPath");
// callers that need distinct names must disambiguate.
func Identifier(s string) string {
	if r, n := redact.Value(s); n > 0 {
		s = r.(string)
	}
	var b strings.Builder
	b.Grow(len(s) + 1)
	// underscore is true when the last byte written was "_" or a boundary
	// is pending, so runs collapse to one separator.
	underscore := false
	sep := func() {
		if !underscore {
			b.WriteByte('_')
			underscore = true
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUpper(c):
			// Step 1: "aB" and "ABc" split before the B.
			if i > 0 && (isLower(s[i-1]) || isDigit(s[i-1])) {
				sep()
			} else if i > 0 && isUpper(s[i-1]) && i+1 < len(s) && isLower(s[i+1]) {
				sep()
			}
			b.WriteByte(c + ('a' - 'A'))
			underscore = false
		case isLower(c) || isDigit(c):
			b.WriteByte(c)
			underscore = false
		default:
			// "_" and every other byte, including each byte of a
			// multi-byte rune, separate words.
			sep()
		}
	}
	id := strings.Trim(b.String(), "_")
	switch {
	case id == "":
		return "value"
	case isDigit(id[0]):
		// Reserved names never start with a digit, so step 7 cannot
		// apply as well.
		return "_" + id
	case reserved(id) || hostName(id):
		return id + "_"
	}
	return id
}

// IsIdentifier reports whether s can be written as a bare name in generated
// code, for example as a keyword argument: it is an ASCII Starlark
// identifier ([A-Za-z_][A-Za-z0-9_]*) and not a keyword or reserved word.
// Universal and host names such as len or ctx are identifiers: they are
// fine as keyword argument names, though not as names to bind.
//
// Like Identifier it rejects identifiers with non-ASCII letters, which
// Starlark accepts; code generation spells such keys as string literals.
func IsIdentifier(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return !keyword(s)
}

// keyword reports whether s is a Starlark keyword or reserved word: a
// name the scanner would not return as an identifier. "assert" is
// reserved by the specification although go.starlark.net accepts it; it
// is listed so generated code stays valid under either reading.
func keyword(s string) bool {
	switch s {
	case "and", "break", "continue", "def", "elif", "else", "for", "if",
		"in", "lambda", "load", "not", "or", "pass", "return", "while":
		return true
	case "as", "assert", "async", "await", "class", "del", "except",
		"finally", "from", "global", "import", "is", "nonlocal", "raise",
		"try", "with", "yield":
		return true
	}
	return false
}

// reserved reports whether s may not be bound by generated code: a keyword
// or a name of the Starlark universe (go.starlark.net's starlark.Universe;
// a test in internal/codegen keeps the two lists in step).
func reserved(s string) bool {
	if keyword(s) {
		return true
	}
	switch s {
	case "None", "True", "False",
		"abs", "all", "any", "bool", "bytes", "chr", "dict", "dir",
		"enumerate", "fail", "float", "getattr", "hasattr", "hash", "int",
		"len", "list", "max", "min", "ord", "print", "range", "repr",
		"reversed", "set", "sorted", "str", "tuple", "type", "zip":
		return true
	}
	return false
}

// hostName reports whether s is a name the workflow host gives generated
// code: the ctx parameter and the predeclared json and struct modules.
func hostName(s string) bool {
	return s == "ctx" || s == "json" || s == "struct"
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
