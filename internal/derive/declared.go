package derive

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// Substitute returns s as an expression over declared parameters: the
// concatenation of literals and references that reads s left to right,
// taking at each position the longest declared value that starts there
// and stands on its own (see standsAlone), else one literal character.
// It reports false when no value occurs in s. A bare reference means s
// is the value of that parameter.
//
// It is the one-example counterpart of Parameter. Parameter searches for
// an expression that several examples agree on, and refuses fewer than
// MinValues, since two values fit many expressions by accident; here the
// run itself says which values are its parameters (a release manifest
// names its versions and branch), so an occurrence of one of them is read
// as that parameter and nothing else is guessed: no split, no case
// change, only the values as they are. Of two parameters with the same
// value the first by name is taken, so the result does not depend on map
// order. Values shorter than minPiece are never substituted: one
// character occurs everywhere by coincidence.
//
// The result evaluates to s on values, which the caller may check with
// Eval like any expression of this package.
func Substitute(s string, values map[string]string) (Expr, bool) {
	names := make([]string, 0, len(values))
	for k, v := range values {
		if utf8.RuneCountInString(v) >= minPiece {
			names = append(names, k)
		}
	}
	// Longest value first, then by name: the first match at a position
	// is the one taken.
	sort.Slice(names, func(i, j int) bool {
		if a, b := len(values[names[i]]), len(values[names[j]]); a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	var parts []Expr
	lit := 0 // start of the pending literal
	refs := 0
	for i := 0; i < len(s); {
		found := ""
		for _, k := range names {
			v := values[k]
			if len(s)-i >= len(v) && s[i:i+len(v)] == v && standsAlone(s, i, i+len(v)) {
				found = k
				break
			}
		}
		if found == "" {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			continue
		}
		if lit < i {
			parts = append(parts, litExpr{s[lit:i]})
		}
		parts = append(parts, refExpr{found})
		refs++
		i += len(values[found])
		lit = i
	}
	if refs == 0 {
		return nil, false
	}
	if lit < len(s) {
		parts = append(parts, litExpr{s[lit:]})
	}
	var e Expr = concatExpr{parts}
	if len(parts) == 1 {
		e = parts[0]
	}
	if got, ok := e.Eval(values); !ok || got != s {
		return nil, false
	}
	return e, true
}

// standsAlone reports whether s[i:j] is a whole token of s and not part
// of a longer one: a value that begins (ends) with a letter does not
// follow (precede) a letter or digit, and one that begins (ends) with a
// digit does not follow (precede) a digit, or a dot next to a digit. So
// version 1.0.1 stands alone in release/v1.0.1 and in "Release 1.0.1."
// but not in 11.0.1 or 1.0.10, and branch main not in domain.
func standsAlone(s string, i, j int) bool {
	first, _ := utf8.DecodeRuneInString(s[i:j])
	last, _ := utf8.DecodeLastRuneInString(s[i:j])
	if i > 0 {
		before, n := utf8.DecodeLastRuneInString(s[:i])
		if joins(first, before) {
			return false
		}
		if unicode.IsDigit(first) && before == '.' && i-n > 0 {
			if b2, _ := utf8.DecodeLastRuneInString(s[:i-n]); unicode.IsDigit(b2) {
				return false
			}
		}
	}
	if j < len(s) {
		after, n := utf8.DecodeRuneInString(s[j:])
		if joins(last, after) {
			return false
		}
		if unicode.IsDigit(last) && after == '.' && j+n < len(s) {
			if a2, _ := utf8.DecodeRuneInString(s[j+n:]); unicode.IsDigit(a2) {
				return false
			}
		}
	}
	return true
}

// joins reports whether neighbour, next to edge, continues edge's token.
func joins(edge, neighbour rune) bool {
	word := func(r rune) bool { return unicode.IsLetter(r) || r == '_' }
	switch {
	case word(edge):
		return word(neighbour) || unicode.IsDigit(neighbour)
	case unicode.IsDigit(edge):
		return unicode.IsDigit(neighbour)
	}
	return false
}
