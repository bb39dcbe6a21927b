package stepvalue

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Canonical encodes v as compact JSON with object keys sorted (which
// encoding/json does for maps) and without HTML escaping. The generic
// values a run passes around are written directly, as encoding/json
// writes them (TestCanonicalMatchesEncodingJSON): every call digests its
// arguments and result, and the encoder's reflection cost a step more
// than the digest.
func Canonical(v any) []byte {
	return AppendCanonical(make([]byte, 0, 256), v)
}

// AppendCanonical is Canonical(v) appended to dst: with dst a buffer
// on the caller's stack, a value that fits is encoded without growing
// a slice from nothing a few bytes at a time.
func AppendCanonical(dst []byte, v any) []byte {
	if out, ok := appendCompact(dst, v); ok {
		return out
	}
	return append(dst, canonicalJSON(v)...)
}

// appendCompact appends v as Canonical writes it, or reports false for a
// value holding a type it leaves to encoding/json.
func appendCompact(dst []byte, v any) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), true
	case bool:
		return strconv.AppendBool(dst, v), true
	case string:
		return redact.AppendJSONString(dst, v), true
	case int:
		return strconv.AppendInt(dst, int64(v), 10), true
	case int64:
		return strconv.AppendInt(dst, v, 10), true
	case json.Number:
		if v == "" {
			return append(dst, '0'), true
		}
		if !trace.IsNumber(string(v)) {
			return dst, false
		}
		return append(dst, v...), true
	case []any:
		if v == nil {
			return append(dst, "null"...), true
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var ok bool
			if dst, ok = appendCompact(dst, e); !ok {
				return dst, false
			}
		}
		return append(dst, ']'), true
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), true
		}
		var small [8]string // most objects are small: their keys stay off the heap
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json sorts string keys by their bytes
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = redact.AppendJSONString(dst, k)
			dst = append(dst, ':')
			var ok bool
			if dst, ok = appendCompact(dst, v[k]); !ok {
				return dst, false
			}
		}
		return append(dst, '}'), true
	}
	return dst, false
}

// canonicalJSON is Canonical through encoding/json.
func canonicalJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Values come from toGo or JSON decoding and always encode;
		// a failure is still recorded rather than hidden.
		return []byte(fmt.Sprintf("%q", err.Error()))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
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
