package candidate

import (
	"slices"
	"strings"
	"unicode"
)

// MaxTextRunes caps each piece of trace-derived text OneLine keeps. Names
// and messages are short in practice; the cap keeps a hostile or runaway
// value from burying the code or the skill it annotates.
const MaxTextRunes = 240

// OneLine reduces untrusted text from a candidate (a name, an id, a
// message) to one printable line, as the workflow's comments and
// docstring and a skill's SKILL.md hold it: line breaks, tabs and other
// white space become a space (a newline would end a comment and start
// code), other non-printing runes are dropped (control characters, and
// format characters such as bidirectional overrides that would make the
// text render differently from what it is), invalid UTF-8 becomes
// U+FFFD, runs of spaces collapse, and text beyond MaxTextRunes is cut
// with "…".
func OneLine(s string) string {
	var b strings.Builder
	space := false
	n := 0
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case !unicode.IsPrint(r):
			continue
		}
		if n == MaxTextRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
			n++
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// JoinNames joins names as the workflow's comments list them: each
// reduced to OneLine, sorted, without duplicates, separated by ", ", or
// "none" when there are none.
func JoinNames(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = OneLine(n)
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ", ")
}
