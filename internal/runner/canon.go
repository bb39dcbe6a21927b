package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Canonical JSON without a generic round trip.
//
// A run's records are canonical JSON (candidate.EncodeJSON: keys sorted,
// two-space indentation, no HTML escaping, numbers as written). That
// function marshals, decodes into maps and encodes again, which for a
// long run cost more than running it: at 1,000 steps the trace took
// 35 ms to encode, most of it in the decode and re-encode. indentJSON
// produces the same bytes from the marshalled JSON in one pass over its
// tokens, sorting each object's members by their decoded keys. The bulk
// of a trace, its actions and receipts, is not marshalled at all: each is
// written straight from its fields and maps (appendAction,
// appendCanonical) and spliced into the encoding of the rest, so no
// nesting level re-validates the levels below it. Tests hold all of
// these to candidate.EncodeJSON's bytes.

// encodeCanonical is candidate.EncodeJSON(v), byte for byte.
func encodeCanonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out, err := indentJSON(make([]byte, 0, len(raw)+len(raw)/2), raw, 0)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// encodeTrace is encodeCanonical(t) for a run's trace, with each action
// and each receipt of its replay_run encoded on its own.
func encodeTrace(t *trace.Trace, typed []Receipt) ([]byte, error) {
	shell := *t
	shell.Actions = nil // encoded as []
	var receipts []any
	if rr := t.ReplayRun; rr != nil {
		if l, ok := rr["effect_receipts"].([]any); ok && len(l) > 0 {
			receipts = l
			shell.ReplayRun = maps.Clone(rr)
			shell.ReplayRun["effect_receipts"] = []any{}
		}
	}
	generic := len(receipts)
	head, err := encodeCanonical(&shell)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(head)+len(t.Actions)*1024+(generic+len(typed))*512)
	// "actions" is a top-level member and "effect_receipts" the first
	// member of one, so their lines are indented by exactly two and four
	// spaces: a deeper line has more, and a string cannot hold a raw
	// newline.
	out, rest, err := splice(out, head, "\n  \"actions\": []", 1, len(t.Actions), func(dst []byte, i int) ([]byte, error) {
		return appendAction(dst, &t.Actions[i], 2)
	})
	if err != nil {
		return nil, err
	}
	out, rest, err = splice(out, rest, "\n  \"replay_run\": {\n    \"effect_receipts\": []", 2, generic+len(typed), func(dst []byte, i int) ([]byte, error) {
		if i < generic {
			return appendCanonical(dst, receipts[i], 3)
		}
		return appendReceipt(dst, &typed[i-generic], 3)
	})
	if err != nil {
		return nil, err
	}
	return append(out, rest...), nil
}

// appendReceipt appends the canonical form of rc as replay_run holds it
// (receiptValue), written from its fields; a receipt with usage, whose
// cost is a float, is written from its value.
func appendReceipt(dst []byte, rc *Receipt, depth int) ([]byte, error) {
	if rc.Usage != nil {
		return appendCanonical(dst, receiptValue(rc), depth)
	}
	str := func(key, v string, first bool) {
		if !first {
			dst = append(dst, ',')
		}
		dst = newline(dst, depth+1)
		dst = append(dst, key...)
		dst = appendJSONString(dst, v)
	}
	dst = append(dst, '{')
	str(`"arguments_sha256": `, rc.ArgumentsSHA256, true)
	dst = append(newline(append(dst, ','), depth+1), `"duration_ms": `...)
	dst = strconv.AppendInt(dst, rc.DurationMS, 10)
	str(`"kind": `, rc.Kind, false)
	str(`"receipt_id": `, rc.ID, false)
	str(`"result_sha256": `, rc.ResultSHA256, false)
	dst = append(newline(append(dst, ','), depth+1), `"side_effects": `...)
	if len(rc.SideEffects) == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, '[')
		for i, se := range rc.SideEffects {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(newline(dst, depth+2), '{')
			first := true
			field := func(key, v string) {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(newline(dst, depth+3), key...)
				dst = appendJSONString(dst, v)
			}
			if se.Capability != "" {
				field(`"capability": `, se.Capability)
			}
			field(`"kind": `, se.Kind)
			if se.Mutation != "" {
				field(`"mutation": `, se.Mutation)
			}
			field(`"target": `, se.Target)
			dst = append(newline(dst, depth+2), '}')
		}
		dst = append(newline(dst, depth+1), ']')
	}
	str(`"status": `, rc.Status, false)
	dst = append(newline(append(dst, ','), depth+1), `"step": `...)
	dst = strconv.AppendInt(dst, int64(rc.Step), 10)
	str(`"tool": `, rc.Tool, false)
	return append(newline(dst, depth), '}'), nil
}

// appendAction appends the canonical form of a, as Action.MarshalJSON
// and indentJSON would write it, its members in sorted key order and its
// generic values written directly. An action with members beyond its
// fields (Extra) takes the marshalling path. TestAppendActionFields
// fails when trace.Action gains a field this does not know.
func appendAction(dst []byte, a *trace.Action, depth int) ([]byte, error) {
	if len(a.Extra) > 0 {
		raw, err := a.MarshalJSON()
		if err != nil {
			return nil, err
		}
		return indentJSON(dst, raw, depth)
	}
	first := true
	var err error
	member := func(key string) {
		if first {
			dst = append(dst, '{')
			first = false
		} else {
			dst = append(dst, ',')
		}
		dst = newline(dst, depth+1)
		dst = appendJSONString(dst, key)
		dst = append(dst, ": "...)
	}
	value := func(v any) {
		if err == nil {
			dst, err = appendCanonical(dst, v, depth+1)
		}
	}
	marshalled := func(v any) {
		if err == nil {
			dst, err = appendMarshalled(dst, v, depth+1)
		}
	}
	strs := func(l []string) {
		if len(l) == 0 {
			dst = append(dst, "[]"...)
			return
		}
		dst = append(dst, '[')
		for i, s := range l {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+2)
			dst = appendJSONString(dst, s)
		}
		dst = append(newline(dst, depth+1), ']')
	}
	if a.Approval != nil {
		member("approval")
		marshalled(*a.Approval)
	}
	if a.Capabilities != nil {
		member("capabilities")
		strs(a.Capabilities)
	}
	if a.Cost != nil {
		member("cost")
		marshalled(*a.Cost)
	}
	if a.Deterministic != nil {
		member("deterministic")
		dst = strconv.AppendBool(dst, *a.Deterministic)
	}
	if a.DurationMS != nil {
		member("duration_ms")
		dst = strconv.AppendInt(dst, *a.DurationMS, 10)
	}
	if a.Fuzzy != nil {
		member("fuzzy")
		dst = strconv.AppendBool(dst, *a.Fuzzy)
	}
	member("id")
	dst = appendJSONString(dst, a.ID)
	if a.Inputs != nil {
		member("inputs")
		value(a.Inputs)
	}
	member("kind")
	dst = appendJSONString(dst, string(a.Kind))
	if a.Metadata != nil {
		member("metadata")
		value(a.Metadata)
	}
	member("name")
	dst = appendJSONString(dst, a.Name)
	if a.ObservedOutput != nil {
		member("observed_output")
		value(a.ObservedOutput)
	}
	if a.Output != nil {
		member("output")
		value(a.Output)
	}
	if a.Parameters != nil {
		member("parameters")
		value(a.Parameters)
	}
	if a.RequiredSecrets != nil {
		member("required_secrets")
		strs(a.RequiredSecrets)
	}
	if a.SideEffects != nil {
		member("side_effects")
		marshalled(a.SideEffects)
	}
	if a.Timestamp != "" {
		member("timestamp")
		dst = appendJSONString(dst, a.Timestamp)
	}
	if err != nil {
		return nil, err
	}
	return append(newline(dst, depth), '}'), nil
}

// splice appends src up to the empty list that ends slot, at nesting
// depth depth, then the n elements elem writes, and returns src from the
// list's closing bracket on.
func splice(dst, src []byte, slot string, depth, n int, elem func(dst []byte, i int) ([]byte, error)) (out, rest []byte, err error) {
	if n == 0 {
		return dst, src, nil
	}
	at := bytes.Index(src, []byte(slot))
	if at < 0 {
		return nil, nil, fmt.Errorf("encoding trace: no %q", strings.TrimSpace(slot))
	}
	at += len(slot) - 1 // the ']'
	dst = append(dst, src[:at]...)
	for i := range n {
		dst = newline(dst, depth+1)
		if dst, err = elem(dst, i); err != nil {
			return nil, nil, err
		}
		if i < n-1 {
			dst = append(dst, ',')
		}
	}
	return newline(dst, depth), src[at:], nil
}

// appendCanonical appends the canonical form of v at nesting depth depth
// (see indentJSON), writing the generic values a run builds (maps,
// lists, strings, integers, booleans) directly and marshalling the rest.
func appendCanonical(dst []byte, v any, depth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return appendJSONString(dst, v), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		if len(v) == 0 {
			return append(dst, "[]"...), nil
		}
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			var err error
			if dst, err = appendCanonical(dst, e, depth+1); err != nil {
				return nil, err
			}
		}
		return append(newline(dst, depth), ']'), nil
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		if len(v) == 0 {
			return append(dst, "{}"...), nil
		}
		var small [8]string // most objects are small: their keys stay off the heap
		keys := small[:0]
		for k := range v {
			if !utf8.ValidString(k) {
				return appendMarshalled(dst, v, depth) // sorted by the decoded key
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, depth+1)
			dst = appendJSONString(dst, k)
			dst = append(dst, ": "...)
			var err error
			if dst, err = appendCanonical(dst, v[k], depth+1); err != nil {
				return nil, err
			}
		}
		return append(newline(dst, depth), '}'), nil
	}
	return appendMarshalled(dst, v, depth)
}

func appendMarshalled(dst []byte, v any, depth int) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return indentJSON(dst, raw, depth)
}

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, "  "...)
	}
	return dst
}

var errSyntax = errors.New("canonical json: invalid input")

// indentJSON appends the canonical form of the JSON value src, as
// written at nesting depth depth (its inner lines indented by two spaces
// per level below it).
func indentJSON(dst, src []byte, depth int) ([]byte, error) {
	c := canonWriter{src: src, out: dst}
	c.space()
	if err := c.value(depth); err != nil {
		return nil, err
	}
	c.space()
	if c.pos != len(c.src) {
		return nil, errSyntax
	}
	return c.out, nil
}

type canonWriter struct {
	src []byte
	pos int
	out []byte
}

func (c *canonWriter) space() {
	for c.pos < len(c.src) {
		switch c.src[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonWriter) newline(depth int) { c.out = newline(c.out, depth) }

// member is one object member: its decoded key and where its value is.
type member struct {
	key        string
	start, end int
}

func (c *canonWriter) value(depth int) error {
	if c.pos >= len(c.src) {
		return errSyntax
	}
	switch c.src[c.pos] {
	case '{':
		c.pos++
		var members []member
		c.space()
		if c.pos < len(c.src) && c.src[c.pos] == '}' {
			c.pos++
			c.out = append(c.out, "{}"...)
			return nil
		}
		for {
			c.space()
			start := c.pos
			if err := c.skipString(); err != nil {
				return err
			}
			key, err := decodeKey(c.src[start:c.pos])
			if err != nil {
				return err
			}
			c.space()
			if c.pos >= len(c.src) || c.src[c.pos] != ':' {
				return errSyntax
			}
			c.pos++
			c.space()
			vs := c.pos
			if err := c.skip(); err != nil {
				return err
			}
			members = append(members, member{key: key, start: vs, end: c.pos})
			c.space()
			if c.pos >= len(c.src) {
				return errSyntax
			}
			if c.src[c.pos] == '}' {
				c.pos++
				break
			}
			if c.src[c.pos] != ',' {
				return errSyntax
			}
			c.pos++
		}
		// Sorted by key; of duplicates the last wins, as when decoding
		// into a map.
		slices.SortStableFunc(members, func(a, b member) int {
			switch {
			case a.key < b.key:
				return -1
			case a.key > b.key:
				return 1
			}
			return 0
		})
		end := c.pos
		c.out = append(c.out, '{')
		wrote := false
		for i, m := range members {
			if i+1 < len(members) && members[i+1].key == m.key {
				continue
			}
			if wrote {
				c.out = append(c.out, ',')
			}
			wrote = true
			c.newline(depth + 1)
			c.out = appendJSONString(c.out, m.key)
			c.out = append(c.out, ": "...)
			c.pos = m.start
			if err := c.value(depth + 1); err != nil {
				return err
			}
		}
		c.newline(depth)
		c.out = append(c.out, '}')
		c.pos = end
		return nil
	case '[':
		c.pos++
		c.space()
		if c.pos < len(c.src) && c.src[c.pos] == ']' {
			c.pos++
			c.out = append(c.out, "[]"...)
			return nil
		}
		c.out = append(c.out, '[')
		for n := 0; ; n++ {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			c.newline(depth + 1)
			c.space()
			if err := c.value(depth + 1); err != nil {
				return err
			}
			c.space()
			if c.pos >= len(c.src) {
				return errSyntax
			}
			if c.src[c.pos] == ']' {
				c.pos++
				break
			}
			if c.src[c.pos] != ',' {
				return errSyntax
			}
			c.pos++
		}
		c.newline(depth)
		c.out = append(c.out, ']')
		return nil
	case '"':
		start := c.pos
		if err := c.skipString(); err != nil {
			return err
		}
		raw := c.src[start:c.pos]
		if plainString(raw) {
			c.out = append(c.out, raw...)
			return nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return errSyntax
		}
		c.out = appendJSONString(c.out, s)
		return nil
	default:
		// A number or a literal, copied as written.
		start := c.pos
		if err := c.skip(); err != nil {
			return err
		}
		c.out = append(c.out, c.src[start:c.pos]...)
		return nil
	}
}

// skip moves past one value.
func (c *canonWriter) skip() error {
	if c.pos >= len(c.src) {
		return errSyntax
	}
	switch c.src[c.pos] {
	case '"':
		return c.skipString()
	case '{', '[':
		level := 0
		for c.pos < len(c.src) {
			switch c.src[c.pos] {
			case '"':
				if err := c.skipString(); err != nil {
					return err
				}
				continue
			case '{', '[':
				level++
			case '}', ']':
				level--
				if level == 0 {
					c.pos++
					return nil
				}
			}
			c.pos++
		}
		return errSyntax
	default:
		start := c.pos
		for c.pos < len(c.src) {
			switch b := c.src[c.pos]; {
			case b >= '0' && b <= '9', b >= 'a' && b <= 'z', b == '-', b == '+', b == '.', b == 'E':
				c.pos++
				continue
			}
			break
		}
		if c.pos == start {
			return errSyntax
		}
		return nil
	}
}

// skipString moves past the string at c.pos, quotes included.
func (c *canonWriter) skipString() error {
	if c.pos >= len(c.src) || c.src[c.pos] != '"' {
		return errSyntax
	}
	for i := c.pos + 1; i < len(c.src); i++ {
		switch c.src[i] {
		case '\\':
			i++
		case '"':
			c.pos = i + 1
			return nil
		}
	}
	return errSyntax
}

// plainString reports whether a quoted string is already canonical: no
// escapes, valid UTF-8, and no U+2028 or U+2029 (which are written
// escaped).
func plainString(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		return false
	}
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] == 0xe2 && raw[i+1] == 0x80 && (raw[i+2] == 0xa8 || raw[i+2] == 0xa9) {
			return false
		}
	}
	for _, b := range raw {
		if b < 0x20 {
			return false
		}
	}
	return true
}

func decodeKey(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errSyntax
	}
	return s, nil
}

// appendJSONString appends s quoted as the canonical encoding writes it:
// as encoding/json does without HTML escaping, except that an invalid
// byte becomes U+FFFD itself rather than its escape, since the canonical
// form is re-encoded from decoded JSON.
func appendJSONString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		// strings.Map replaces each invalid byte with U+FFFD, one for
		// one, as a JSON decoder does.
		s = strings.Map(func(r rune) rune { return r }, s)
	}
	return redact.AppendJSONString(dst, s)
}
