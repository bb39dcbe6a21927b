package redact

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
)

// Redacted replaces a whole value: a value under a sensitive key, or a
// string that is a secret and nothing else.
const Redacted = "[redacted]"

// Value returns a deep copy of v, a value as encoding/json decodes it
// (map[string]any, []any, string, json.Number or float64, bool, nil), with
// every private payload replaced, and the number of replacements. v is not
// modified; values of other types are returned as they are.
//
//   - Under a sensitive key (SensitiveKey), at any depth, the value becomes
//     Redacted, whatever its type, except null, false, true and "", which
//     hold nothing, and a redaction marker (Redacted, "[redacted:<kind>]")
//     that holds no secret itself.
//   - A string that is a secret becomes Redacted; a secret inside other
//     text becomes "[redacted:<kind>]" and the text around it stays.
//   - An object key that contains a secret is redacted like a string. Keys
//     that then collide get the suffix "~2", "~3", … in the order of the
//     original keys, so the result does not depend on map order.
func Value(v any) (out any, n int) {
	out = value(v, &n)
	return out, n
}

func value(v any, n *int) any {
	switch v := v.(type) {
	case string:
		s, k := redactString(v)
		*n += k
		return s
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = value(e, n)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		var renamed []string
		for k := range v {
			if _, ok := Secret(k); ok {
				renamed = append(renamed, k)
				continue
			}
			out[k] = field(k, v[k], n)
		}
		slices.Sort(renamed)
		for _, k := range renamed {
			rk, c := redactString(k)
			*n += c
			for i := 2; ; i++ {
				if _, taken := out[rk]; !taken {
					break
				}
				rk, _ = redactString(k)
				rk += "~" + strconv.Itoa(i)
			}
			out[rk] = field(rk, v[k], n)
		}
		return out
	}
	return v
}

// field redacts the value of the object member named key.
func field(key string, v any, n *int) any {
	if !SensitiveKey(key) {
		return value(v, n)
	}
	switch v := v.(type) {
	case nil, bool:
		return v
	case string:
		if v == "" || isMarker(v) {
			return v
		}
	case json.Number:
		// A number under a sensitive key may be a PIN or a numeric secret.
	}
	*n++
	return Redacted
}

// redactString returns s with each secret in it replaced, and the number
// of replacements. A secret that is all of s makes Redacted.
func redactString(s string) (string, int) {
	var b []byte
	last, n := 0, 0
	scan(s, func(m match) bool {
		if m.start == 0 && m.end == len(s) {
			n = -1
			return false
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[last:m.start]...)
		b = append(b, "[redacted:"...)
		b = append(b, m.kind...)
		b = append(b, ']')
		last = m.end
		n++
		return true
	})
	switch n {
	case -1:
		return Redacted, 1
	case 0:
		return s, 0
	}
	b = append(b, s[last:]...)
	return string(b), n
}

// isMarker reports whether s is one redaction marker and nothing else:
// Redacted, or "[redacted:<name>]" as redactString and the runtime's
// secret scrubber write them. It holds nothing private, and keeping it
// keeps the name of what was there. A name that is itself a credential
// ("[redacted:ghp_…]") makes no marker, or dressing a token as one would
// carry it past a sensitive key.
func isMarker(s string) bool {
	if s == Redacted {
		return true
	}
	name, ok := strings.CutPrefix(s, "[redacted:")
	if !ok || !strings.HasSuffix(name, "]") {
		return false
	}
	name = name[:len(name)-1]
	if name == "" || strings.ContainsAny(name, "[] \t\n") {
		return false
	}
	_, secret := Secret(s)
	return !secret
}

// quotedMarker reports whether q, a JSON string literal in canonical form,
// is a marker (isMarker).
func quotedMarker(q string) bool {
	if !strings.HasPrefix(q, `"[redacted`) {
		return false
	}
	s, _, err := jsontext.AppendUnquote(nil, q, 0)
	return err == nil && isMarker(string(s))
}
