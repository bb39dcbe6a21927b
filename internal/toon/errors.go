package toon

import (
	"fmt"
	"slices"
)

// Error is a problem in a TOON (or JSON) document at a 1-based line.
type Error struct {
	Line int
	Msg  string // lowercase, without trailing punctuation
	err  error  // a sentinel the problem is, such as ErrTooDeep
}

// Error formats e as "line N: message".
func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Unwrap returns the sentinel the problem is, if any.
func (e *Error) Unwrap() error { return e.err }

// ErrorList is every problem Decode found in a document, in line order.
// Decode keeps going after problems that leave the structure readable
// (counts, widths, duplicate keys, escapes, blank lines) and stops at the
// first one that does not, since what follows a broken header or a bad
// indentation could only produce consequential noise.
type ErrorList []*Error

// Error returns the first error and how many more there are.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Unwrap lets errors.As find the first *Error in the list.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// sorted returns l ordered by line, keeping the order of equal lines.
func (l ErrorList) sorted() ErrorList {
	slices.SortStableFunc(l, func(a, b *Error) int { return a.Line - b.Line })
	return l
}
