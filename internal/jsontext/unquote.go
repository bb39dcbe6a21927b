package jsontext

import (
	"unicode/utf16"
	"unicode/utf8"
)

// A SyntaxError is malformed JSON text: the offset of the offending byte
// (the length of the input for an unexpected end) and what is wrong, in
// encoding/json's words. It names at most one byte of the input.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return e.Msg }

// errEOF is the error of input that ends inside a token.
func errEOF(n int) *SyntaxError {
	return &SyntaxError{Offset: n, Msg: "unexpected end of JSON input"}
}

// AppendUnquote decodes the JSON string token whose opening quote is
// src[i], appends its value to dst and returns the index after its
// closing quote. It decodes as encoding/json does: an invalid UTF-8 byte
// and a lone or malformed surrogate escape each become U+FFFD; a control
// character, an unknown escape or a short \u escape is a *SyntaxError at
// the offending byte.
//
// Callers scan for the common string, printable text without escapes,
// themselves and use it in place; this is the road of the rest, the one
// string decoder of the module.
func AppendUnquote[T ~string | ~[]byte](dst []byte, src T, i int) ([]byte, int, error) {
	for i++; i < len(src); {
		c := src[i]
		switch {
		case c == '"':
			return dst, i + 1, nil
		case c == '\\':
			if i+1 >= len(src) {
				return dst, 0, errEOF(len(src))
			}
			switch e := src[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r, ok := hex4(src, i)
				if !ok {
					j := i + 2
					for j < len(src) && j < i+6 && isHex(src[j]) {
						j++
					}
					if j >= len(src) {
						return dst, 0, errEOF(len(src))
					}
					return dst, 0, &SyntaxError{Offset: j, Msg: "invalid character " + QuoteChar(src[j]) + ` in \u hexadecimal character escape`}
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A high surrogate followed by a low one is one
					// character; anything else is U+FFFD, and the next
					// escape is read on its own.
					if r2, ok := hex4(src, i); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							dst = utf8.AppendRune(dst, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				return dst, 0, &SyntaxError{Offset: i + 1, Msg: "invalid character " + QuoteChar(e) + " in string escape code"}
			}
			i += 2
		case c < 0x20:
			return dst, 0, &SyntaxError{Offset: i, Msg: "invalid character " + QuoteChar(c) + " in string literal"}
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			// At most four bytes are converted, on the stack.
			r, size := utf8.DecodeRune([]byte(src[i:min(i+utf8.UTFMax, len(src))]))
			dst = utf8.AppendRune(dst, r) // U+FFFD for an invalid byte
			i += size
		}
	}
	return dst, 0, errEOF(len(src))
}

// hex4 decodes the escape \uXXXX at s[i:].
func hex4[T ~string | ~[]byte](s T, i int) (rune, bool) {
	if len(s)-i < 6 || s[i] != '\\' || s[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for k := i + 2; k < i+6; k++ {
		c := s[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
