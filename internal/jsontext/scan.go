package jsontext

import (
	"bytes"
	"errors"
	"strings"
)

// IsSpace reports whether c is JSON white space: space, tab, CR or LF.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first byte at or after i in src
// that is not white space.
func SkipSpace[T ~string | ~[]byte](src T, i int) int {
	for i < len(src) && IsSpace(src[i]) {
		i++
	}
	return i
}

// IsNumber reports whether s is exactly one JSON number literal,
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?: no leading zeros, no
// hex, no underscores, no white space.
func IsNumber(s string) bool {
	end, ok := NumberEnd(s, 0)
	return ok && end == len(s)
}

// NumberEnd returns the index after the JSON number that starts at i in
// src, and whether there is one there; when there is not, the index is
// that of the offending byte (len(src) when the number is cut short).
func NumberEnd[T ~string | ~[]byte](src T, i int) (int, bool) {
	if i < len(src) && src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && '1' <= src[i] && src[i] <= '9':
		i = digits(src, i)
	default:
		return i, false
	}
	if i < len(src) && src[i] == '.' {
		i++
		if i >= len(src) || !isDigit(src[i]) {
			return i, false
		}
		i = digits(src, i)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) || !isDigit(src[i]) {
			return i, false
		}
		i = digits(src, i)
	}
	return i, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits[T ~string | ~[]byte](src T, i int) int {
	for i < len(src) && isDigit(src[i]) {
		i++
	}
	return i
}

// errTrusted is what the skippers of trusted text report when it is not
// JSON after all.
var errTrusted = errors.New("canonical json: malformed json")

// StringEnd returns the index after the string token whose opening quote
// is src[i]. It finds the closing quote only, and is for text already
// known to be valid (what encoding/json wrote, what a parser accepted).
func StringEnd[T ~string | ~[]byte](src T, i int) (int, error) {
	for j := i + 1; ; {
		q := indexQuote(src[j:])
		if q < 0 {
			return 0, errTrusted
		}
		j += q
		// The quote ends the string unless an odd number of
		// backslashes escapes it.
		k := j
		for k > i && src[k-1] == '\\' {
			k--
		}
		j++
		if (j-1-k)%2 == 0 {
			return j, nil
		}
	}
}

// indexQuote is bytes.IndexByte or strings.IndexByte, whichever src is.
func indexQuote[T ~string | ~[]byte](src T) int {
	switch s := any(src).(type) {
	case []byte:
		return bytes.IndexByte(s, '"')
	case string:
		return strings.IndexByte(s, '"')
	}
	for i := range len(src) {
		if src[i] == '"' {
			return i
		}
	}
	return -1
}

// SkipValue returns the index after the value that starts at src[i], of
// text known to be valid JSON, as StringEnd: brackets are counted and
// strings jumped over, nothing else is checked.
func SkipValue[T ~string | ~[]byte](src T, i int) (int, error) {
	if i >= len(src) {
		return 0, errTrusted
	}
	switch src[i] {
	case '"':
		return StringEnd(src, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(src); j++ {
			switch src[j] {
			case '"':
				end, err := StringEnd(src, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errTrusted
	}
	// A number or a literal ends where white space or punctuation does.
	j := i
	for j < len(src) && !IsSpace(src[j]) && src[j] != ',' && src[j] != '}' && src[j] != ']' {
		j++
	}
	if j == i {
		return 0, errTrusted
	}
	return j, nil
}

// Members calls member with the decoded name of each member of the
// object whose '{' is src[i], in order, and the index where its value
// starts, and returns the index after the object. Like SkipValue, it is
// for text known to be valid: the values are skipped, not checked, and
// text that is not JSON after all is an error, never a panic. The name
// is a slice of src, or a copy when it has escapes: member may keep it.
func Members(src []byte, i int, member func(name []byte, value int) error) (int, error) {
	i = SkipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(src) || src[i] != '"' {
			return 0, errTrusted
		}
		end, err := StringEnd(src, i)
		if err != nil {
			return 0, err
		}
		name := src[i+1 : end-1]
		if !plain(name) {
			if name, _, err = AppendUnquote(nil, src, i); err != nil {
				return 0, err
			}
		}
		i = SkipSpace(src, end)
		if i >= len(src) || src[i] != ':' {
			return 0, errTrusted
		}
		if i = SkipSpace(src, i+1); i >= len(src) {
			return 0, errTrusted
		}
		if err := member(name, i); err != nil {
			return 0, err
		}
		if i, err = SkipValue(src, i); err != nil {
			return 0, err
		}
		i = SkipSpace(src, i)
		if i >= len(src) {
			return 0, errTrusted
		}
		if src[i] == '}' {
			return i + 1, nil
		}
		if src[i] != ',' {
			return 0, errTrusted
		}
		i = SkipSpace(src, i+1)
	}
}

// Position returns the line and the column, both from 1, of byte offset
// off of src (clamped to src), for an error about the byte there.
// Columns count bytes, as the Go toolchain's do, so that they are exact
// for any encoding.
func Position[T ~string | ~[]byte](src T, off int) (line, col int) {
	off = max(0, min(off, len(src)))
	line, start := 1, 0
	for i := range off {
		if src[i] == '\n' {
			line, start = line+1, i+1
		}
	}
	return line, off - start + 1
}
