// Package textdiff writes the unified diff a person reads before a file
// is changed for them: a kit's files (harness), an agent's configuration
// and skill (install).
package textdiff

import (
	"fmt"
	"strings"
)

// Unified is a unified diff of one file, from the text old (named from)
// to new (named to), as a single hunk over the whole file: the files it
// is used for are small, and a person reads the hunk top to bottom. Lines
// are matched by a longest common subsequence. Name a side that does not
// exist /dev/null.
func Unified(from, to string, old, new []byte) string {
	a, b := lines(old), lines(new)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n@@ -%s +%s @@\n", from, to, span(len(a)), span(len(b)))
	// lcs[i][j] is the length of a longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			sb.WriteString(" " + a[i] + "\n")
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+" + b[j] + "\n")
			j++
		default:
			sb.WriteString("-" + a[i] + "\n")
			i++
		}
	}
	return sb.String()
}

// span is a hunk's range of n lines from the first: an empty one is 0,0.
func span(n int) string {
	if n == 0 {
		return "0,0"
	}
	return fmt.Sprintf("1,%d", n)
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
