package trace

import (
	"fmt"
	"strings"
)

// Pattern is a compiled replay allowlist path: a JSON Pointer (RFC 6901)
// in which a segment that is exactly "*" matches any one segment, that is
// any one array index or object member. "/effect_receipts/*/receipt_id"
// matches "/effect_receipts/0/receipt_id" and "/effect_receipts/7/receipt_id"
// but neither "/effect_receipts/receipt_id" nor
// "/effect_receipts/0/nested/receipt_id": a pattern matches pointers with
// exactly as many segments as it has, so an allowlist entry never allows
// more of a document than it spells out.
//
// Segments are compared after unescaping ("~1" is "/", "~0" is "~"), in the
// pattern and in the pointer alike, so "/files/a~1b" matches a member named
// "a/b" however the pointer was escaped. A member literally named "*"
// cannot be singled out; "*" always matches every member.
type Pattern struct {
	text string
	segs []string // unescaped; "*" is the wildcard
}

// CompilePattern parses an allowlist path. A pattern must start with "/":
// the empty pointer (the whole document) is refused, since allowing the
// whole run to differ would turn replay comparison off.
func CompilePattern(pattern string) (Pattern, error) {
	if !strings.HasPrefix(pattern, "/") {
		return Pattern{}, fmt.Errorf("invalid pattern %q: must start with \"/\"", pattern)
	}
	segs, ok := splitPointer(pattern)
	if !ok {
		return Pattern{}, fmt.Errorf("invalid pattern %q: \"~\" must be followed by \"0\" or \"1\"", pattern)
	}
	return Pattern{text: pattern, segs: segs}, nil
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.text }

// Match reports whether the JSON pointer matches the pattern. A malformed
// pointer matches nothing.
func (p Pattern) Match(pointer string) bool {
	if p.segs == nil || !strings.HasPrefix(pointer, "/") {
		return false
	}
	segs, ok := splitPointer(pointer)
	if !ok || len(segs) != len(p.segs) {
		return false
	}
	for i, s := range p.segs {
		if s != "*" && s != segs[i] {
			return false
		}
	}
	return true
}

// Match reports whether the JSON pointer matches the rule's path. A rule
// with a malformed path matches nothing; Decode reports such paths, so a
// rule from a decoded trace is always well formed. Callers matching many
// pointers against one rule should compile it once with CompilePattern.
func (r AllowlistRule) Match(pointer string) bool {
	p, err := CompilePattern(r.Path)
	if err != nil {
		return false
	}
	return p.Match(pointer)
}

// splitPointer splits a pointer that starts with "/" into its unescaped
// segments. It reports false for a "~" not followed by "0" or "1".
func splitPointer(s string) ([]string, bool) {
	parts := strings.Split(s[1:], "/")
	for i, part := range parts {
		if !strings.Contains(part, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(part); j++ {
			c := part[j]
			if c != '~' {
				b.WriteByte(c)
				continue
			}
			if j+1 == len(part) {
				return nil, false
			}
			switch part[j+1] {
			case '0':
				b.WriteByte('~')
			case '1':
				b.WriteByte('/')
			default:
				return nil, false
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, true
}
