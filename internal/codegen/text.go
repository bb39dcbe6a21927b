package codegen

import (
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// comment writes text as one comment line indented by depth levels. Every
// piece of text that came from input must already have passed through
// candidate.OneLine.
func comment(b *strings.Builder, depth int, text string) {
	b.WriteString(strings.Repeat(indentUnit, depth))
	b.WriteString("#")
	if text != "" {
		b.WriteString(" ")
		b.WriteString(text)
	}
	b.WriteByte('\n')
}

// docstring returns a triple-quoted Starlark string holding
// candidate.OneLine(s).
// Backslashes and every double quote are escaped, so neither `"""` in the
// text nor a quote at its end can close the literal early.
func docstring(s string) string {
	s = candidate.OneLine(s)
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `"`, `\"`)
	return `"""` + s + `"""`
}
