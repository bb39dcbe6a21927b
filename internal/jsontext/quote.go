package jsontext

import (
	"strings"
	"unicode/utf8"
)

// AppendQuote appends s as a JSON string, escaped as encoding/json
// escapes with SetEscapeHTML(false): '"', '\\' and control bytes, U+2028
// and U+2029, and each invalid UTF-8 byte as \ufffd.
func AppendQuote(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendString appends s as canonical JSON writes a string: as
// AppendQuote, except that an invalid UTF-8 byte becomes U+FFFD itself
// rather than its escape, since canonical JSON is the encoding of the
// decoded text, in which the byte already is U+FFFD.
func AppendString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		// strings.ToValidUTF8 would replace a run of invalid bytes
		// with one U+FFFD; a decoder replaces each byte.
		s = strings.Map(func(r rune) rune { return r }, s)
	}
	return AppendQuote(dst, s)
}

// QuoteChar quotes one byte of input for an error message as
// encoding/json's syntax errors do: a printable byte in single quotes, any
// other as "byte 0x01". It names at most one byte, never a value, so a
// message cannot leak a secret.
func QuoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if 0x20 <= c && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	const hex = "0123456789abcdef"
	return "byte 0x" + string([]byte{hex[c>>4], hex[c&0xf]})
}
