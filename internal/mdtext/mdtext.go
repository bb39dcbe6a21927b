// Package mdtext writes text into markdown so that markdown does not
// apply to it: the code spans of session logs (session.md) and of
// SKILL.md. It is the one place that knows how a code span is fenced.
package mdtext

import "strings"

// Fence is the backtick fence of a code span holding s: one backtick more
// than the longest run of backticks in s, so that none of them ends the
// span.
func Fence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", longest+1)
}

// CodeSpan renders s as a code span fenced by Fence(s), padded with a
// space inside the fences when s holds a backtick (CommonMark strips one
// space on each side, and the padding is needed when s starts or ends
// with a backtick). s should be one line.
func CodeSpan(s string) string {
	fence := Fence(s)
	if len(fence) > 1 {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}
