package codegen

import (
	"strings"
	"unicode"
)

// maxTextRunes caps each piece of trace-derived text in a comment or
// docstring. Names and messages are short in practice; the cap keeps a
// hostile or runaway value from burying the code it annotates.
const maxTextRunes = 240

// oneLine reduces untrusted text to something safe inside a comment or
// docstring: line breaks, tabs and other white space become a space (a
// newline would end the comment and start code), other non-printing
// runes are dropped (control characters, and format characters such as
// bidirectional overrides that would make the code render differently
// from what it is), invalid UTF-8 becomes U+FFFD, runs of spaces collapse,
// and text beyond maxTextRunes is cut with "…".
func oneLine(s string) string {
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
		if n == maxTextRunes {
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

// comment writes text as one comment line indented by depth levels. Every
// piece of text that came from input must already have passed through
// oneLine.
func comment(b *strings.Builder, depth int, text string) {
	b.WriteString(strings.Repeat(indentUnit, depth))
	b.WriteString("#")
	if text != "" {
		b.WriteString(" ")
		b.WriteString(text)
	}
	b.WriteByte('\n')
}

// docstring returns a triple-quoted Starlark string holding oneLine(s).
// Backslashes and every double quote are escaped, so neither `"""` in the
// text nor a quote at its end can close the literal early.
func docstring(s string) string {
	s = oneLine(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"""` + s + `"""`
}
