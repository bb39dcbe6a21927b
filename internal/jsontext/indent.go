package jsontext

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// AppendIndent appends the canonical form of the JSON text src, as
// written at nesting depth depth: its inner lines are indented by two
// spaces per level below depth, and no newline follows it. src is text
// encoding/json or a parser has already accepted: it is rewritten as it
// is read, each object's members sorted by their decoded names (of a
// name given twice, the last value kept), strings re-escaped as
// AppendString escapes them, numbers and literals copied as written.
// Text that is not JSON after all is an error, never a panic.
func AppendIndent(dst, src []byte, depth int) ([]byte, error) {
	var x indenter
	return x.append(dst, src, depth)
}

// An indenter rewrites compact JSON text canonically, keeping its
// scratch space between values.
type indenter struct {
	// members holds, per nesting depth, the member slice of the object
	// being written at that depth, reused between objects.
	members [][]member
	// dec is a buffer for decoding a string, reused between strings.
	dec []byte
}

// member is one member of an object: its decoded name and where its
// value starts in the text.
type member struct {
	name  []byte
	value int
}

func (x *indenter) append(dst, src []byte, depth int) ([]byte, error) {
	dst, i, err := x.value(dst, src, SkipSpace(src, 0), depth)
	if err != nil {
		return nil, err
	}
	if SkipSpace(src, i) != len(src) {
		return nil, errTrusted
	}
	return dst, nil
}

// AppendNewline appends a newline and the indentation of depth.
func AppendNewline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, "  "...)
	}
	return dst
}

// value appends the value at src[i:] and returns the index after it.
func (x *indenter) value(dst, src []byte, i, depth int) ([]byte, int, error) {
	if i >= len(src) {
		return nil, 0, errTrusted
	}
	switch src[i] {
	case '{':
		return x.object(dst, src, i, depth)
	case '[':
		return x.array(dst, src, i, depth)
	case '"':
		end, err := StringEnd(src, i)
		if err != nil {
			return nil, 0, err
		}
		if plain(src[i+1 : end-1]) {
			return append(dst, src[i:end]...), end, nil
		}
		// Decoded first, as a decoder would: that also turns an
		// invalid UTF-8 byte into U+FFFD itself, where escaping one
		// would write \ufffd.
		if x.dec, _, err = AppendUnquote(x.dec[:0], src, i); err != nil {
			return nil, 0, err
		}
		return AppendQuote(dst, string(x.dec)), end, nil
	default:
		end, err := SkipValue(src, i)
		if err != nil {
			return nil, 0, err
		}
		return append(dst, src[i:end]...), end, nil
	}
}

func (x *indenter) array(dst, src []byte, i, depth int) ([]byte, int, error) {
	i = SkipSpace(src, i+1)
	if i < len(src) && src[i] == ']' {
		return append(dst, "[]"...), i + 1, nil
	}
	dst = append(dst, '[')
	for first := true; ; first = false {
		if !first {
			dst = append(dst, ',')
		}
		dst = AppendNewline(dst, depth+1)
		var err error
		if dst, i, err = x.value(dst, src, i, depth+1); err != nil {
			return nil, 0, err
		}
		i = SkipSpace(src, i)
		if i >= len(src) {
			return nil, 0, errTrusted
		}
		if src[i] == ']' {
			break
		}
		if src[i] != ',' {
			return nil, 0, errTrusted
		}
		i = SkipSpace(src, i+1)
	}
	return append(AppendNewline(dst, depth), ']'), i + 1, nil
}

func (x *indenter) object(dst, src []byte, i, depth int) ([]byte, int, error) {
	for len(x.members) <= depth {
		x.members = append(x.members, nil)
	}
	ms := x.members[depth][:0]
	after, err := Members(src, i, func(name []byte, value int) error {
		ms = append(ms, member{name: name, value: value})
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(ms) == 0 {
		return append(dst, "{}"...), after, nil
	}
	// Stable, so that of two members with one name the later one comes
	// last and wins below.
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(a.name, b.name) })
	x.members[depth] = ms
	dst = append(dst, '{')
	written := false
	for k := range ms {
		if k+1 < len(ms) && bytes.Equal(ms[k].name, ms[k+1].name) {
			continue
		}
		if written {
			dst = append(dst, ',')
		}
		written = true
		dst = AppendNewline(dst, depth+1)
		dst = AppendQuote(dst, string(ms[k].name))
		dst = append(dst, ": "...)
		// The slice may be reused by a nested object at depth+1 only,
		// never at this depth, so ms stays valid.
		if dst, _, err = x.value(dst, src, ms[k].value, depth+1); err != nil {
			return nil, 0, err
		}
	}
	return append(AppendNewline(dst, depth), '}'), after, nil
}

// plain reports whether the body of a string token is written unchanged:
// no escape, no control character, valid UTF-8 without U+2028 or U+2029.
func plain(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '\\' || c == '"' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}
