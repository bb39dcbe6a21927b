package stepvalue

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// Canonical encodes v as compact JSON with object keys sorted (which
// encoding/json does for maps) and without HTML escaping
// (jsontext.AppendCompact): every call digests its arguments and result.
func Canonical(v any) []byte {
	return AppendCanonical(make([]byte, 0, 256), v)
}

// AppendCanonical is Canonical(v) appended to dst: with dst a buffer
// on the caller's stack, a value that fits is encoded without growing
// a slice from nothing a few bytes at a time.
func AppendCanonical(dst []byte, v any) []byte {
	out, err := jsontext.AppendCompact(dst, v)
	if err != nil {
		// Values come from toGo or JSON decoding and always encode;
		// a failure is still recorded rather than hidden.
		return fmt.Appendf(dst, "%q", err.Error())
	}
	return out
}

// Digest is "sha256:" and the hex SHA-256 of v's canonical JSON.
func Digest(v any) string {
	var buf [512]byte
	return DigestJSON(AppendCanonical(buf[:0], v))
}

// DigestJSON is Digest of a value whose canonical JSON is data.
func DigestJSON(data []byte) string {
	sum := sha256.Sum256(data)
	var out [len("sha256:") + 2*sha256.Size]byte
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:])
}

// ParseOutput returns out decoded as JSON when it is a JSON document, else
// out as a string with one trailing newline removed.
func ParseOutput(out []byte) any {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && json.Valid(trimmed) {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err == nil {
			return v
		}
	}
	return strings.TrimSuffix(string(out), "\n")
}

// ArgString renders an argument for a command line: strings as they are,
// None as "", everything else as its canonical JSON.
func ArgString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return string(v)
	}
	return string(Canonical(v))
}

// OneLine joins the words of s with single spaces. Most text is already
// one line with single spaces between ASCII words, and is returned as it
// is; anything else goes through strings.Fields.
func OneLine(s string) string {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r',
			c == ' ' && (i == 0 || i == len(s)-1 || s[i+1] == ' '):
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return s
}

// Clip shortens s to at most n bytes and an ellipsis, cutting between
// characters, never inside one: what it returns goes into session.md,
// which must be valid UTF-8.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 { // a continuation byte: inside a character
		n--
	}
	return s[:n] + "…"
}
