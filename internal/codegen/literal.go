package codegen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// maxDepth bounds the nesting of a constant written as a literal. The
// Starlark scanner and parser refuse input nested about a thousand
// brackets deep, counting several parser levels per bracket; 64 levels
// stay far from that and far beyond any field a trace carries in
// practice. Deeper values are an error rather than a file that fails
// to load.
const maxDepth = 64

// errTooDeep reports a constant nested deeper than maxDepth.
var errTooDeep = fmt.Errorf("value nested deeper than %d levels", maxDepth)

// quote returns a Starlark string literal for s. syntax.Quote escapes
// quotes, backslashes and every non-printing rune (control characters,
// line and paragraph separators, bidirectional overrides), so the literal
// is one line and reads as what it holds. Invalid UTF-8 is replaced by
// U+FFFD first: Quote would write such bytes as \x escapes, which Starlark
// accepts only in byte literals. Values decoded from JSON are always valid
// UTF-8, so only strings built in Go can lose bytes here.
func quote(s string) string {
	return syntax.Quote(strings.ToValidUTF8(s, "\uFFFD"), false)
}

// textBlock returns a triple-quoted Starlark literal for s, a file's
// text, written as its lines are, when s is several lines of printable
// text: a file a workflow writes reads as the file, not as one line of
// \n escapes. The literal opens with an escaped line break, so the
// text starts at the beginning of the next line; only backslashes, and
// a quote that would end the literal (one before another quote, or the
// text's last character), are escaped. It reports false for text of one
// line, or holding a character quote would escape (a control character
// other than tab, a carriage return, a bidirectional override, a line
// separator): those keep the one-line form, which shows them.
func textBlock(s string) (string, bool) {
	if !strings.Contains(strings.TrimSuffix(s, "\n"), "\n") || !utf8.ValidString(s) {
		return "", false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && !unicode.IsPrint(r) {
			return "", false
		}
	}
	var b strings.Builder
	b.WriteString(`"""\` + "\n")
	for i, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"' && (i == len(s)-1 || s[i+1] == '"'):
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(`"""`)
	return b.String(), true
}

// literal returns the Starlark expression for a JSON value. It accepts the
// values encoding/json produces with UseNumber (nil, bool, string,
// json.Number, []any, map[string]any), Go numbers, and, through a JSON
// round trip, any other value encoding/json can marshal. Object keys are
// sorted so the output is deterministic.
func literal(v any) (*node, error) {
	return literalDepth(v, 0, true)
}

func literalDepth(v any, depth int, roundTrip bool) (*node, error) {
	if depth > maxDepth {
		return nil, errTooDeep
	}
	switch x := v.(type) {
	case nil:
		return atom("None"), nil
	case bool:
		if x {
			return atom("True"), nil
		}
		return atom("False"), nil
	case string:
		return atom(quote(x)), nil
	case json.Number:
		s, err := number(string(x))
		if err != nil {
			return nil, err
		}
		return atom(s), nil
	case float64:
		return atom(float(x)), nil
	case float32:
		return atom(float(float64(x))), nil
	case int, int8, int16, int32, int64:
		return atom(strconv.FormatInt(reflect.ValueOf(x).Int(), 10)), nil
	case uint, uint8, uint16, uint32, uint64, uintptr:
		return atom(strconv.FormatUint(reflect.ValueOf(x).Uint(), 10)), nil
	case []any:
		items := make([]*node, len(x))
		for i, e := range x {
			n, err := literalDepth(e, depth+1, roundTrip)
			if err != nil {
				return nil, err
			}
			items[i] = n
		}
		return group("[", items, "]"), nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		items := make([]*node, len(keys))
		seen := make(map[string]bool, len(keys))
		for i, k := range keys {
			n, err := literalDepth(x[k], depth+1, roundTrip)
			if err != nil {
				return nil, err
			}
			q := quote(k)
			if seen[q] {
				// Two keys that differ only in invalid UTF-8 would make
				// a dict literal that fails at run time.
				return nil, fmt.Errorf("object keys %s collide once invalid UTF-8 is replaced", q)
			}
			seen[q] = true
			items[i] = n.withPrefix(q + ": ")
		}
		return group("{", items, "}"), nil
	}
	if !roundTrip {
		return nil, fmt.Errorf("value of type %T is not JSON", v)
	}
	// Typed values such as []string or a struct: write what their JSON
	// encoding holds. Decoding with UseNumber yields only the cases above,
	// so this recurses once.
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("value of type %T: %w", v, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("value of type %T: %w", v, err)
	}
	return literalDepth(generic, depth, false)
}

// number returns the Starlark literal for a JSON number. Integers keep
// their digits (Starlark integers are unbounded); other numbers become
// floats, written in Go's shortest round-trip form.
func number(s string) (string, error) {
	// The JSON number grammar also rules out the forms Starlark reads
	// differently (leading zeros, hex, underscores).
	if !trace.IsNumber(s) {
		return "", fmt.Errorf("invalid number %q", s)
	}
	if !strings.ContainsAny(s, ".eE") {
		return s, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", fmt.Errorf("invalid number %q", s)
	}
	// On overflow ParseFloat returns ±Inf with ErrRange, which float
	// writes as float("inf"): the value a JSON decoder would produce.
	return float(f), nil
}

// float returns the Starlark expression for f. Starlark has no literals for
// infinities and NaN, so those call the float builtin.
func float(f float64) string {
	switch {
	case math.IsNaN(f):
		return `float("nan")`
	case math.IsInf(f, 1):
		return `float("inf")`
	case math.IsInf(f, -1):
		return `float("-inf")`
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		// "3" would be an int literal.
		s += ".0"
	}
	return s
}

// selector returns the Starlark index expression suffix for a JSON path
// into a step result: "$" is "", "$.a.b" is `["a"]["b"]`, "$.a[0]" is
// `["a"][0]`, and `$["odd key"]` or `$['odd key']` is `["odd key"]`.
// Double-quoted keys use JSON string escapes; in single-quoted keys a
// backslash escapes the next character. Indexes may be negative, which in
// Starlark counts from the end. Wildcards and filters are not supported:
// a binding names one value.
func selector(path string) (string, error) {
	if !strings.HasPrefix(path, "$") {
		return "", fmt.Errorf("path %q does not start with $", path)
	}
	var b strings.Builder
	for i := 1; i < len(path); {
		switch path[i] {
		case '.':
			j := i + 1
			for j < len(path) && path[j] != '.' && path[j] != '[' {
				j++
			}
			if j == i+1 {
				return "", fmt.Errorf("path %q: empty key at offset %d", path, i+1)
			}
			b.WriteString("[" + quote(path[i+1:j]) + "]")
			i = j
		case '[':
			key, n, err := bracket(path[i:])
			if err != nil {
				return "", fmt.Errorf("path %q: offset %d: %w", path, i, err)
			}
			b.WriteString("[" + key + "]")
			i += n
		default:
			return "", fmt.Errorf("path %q: unexpected %q at offset %d", path, path[i], i)
		}
	}
	return b.String(), nil
}

// bracket parses the bracketed selector at the start of s and returns its
// Starlark index expression and the number of bytes it spans.
func bracket(s string) (string, int, error) {
	if len(s) < 3 {
		return "", 0, errors.New("unterminated [")
	}
	switch q := s[1]; q {
	case '"', '\'':
		var key strings.Builder
		for i := 2; i < len(s); i++ {
			switch s[i] {
			case '\\':
				if q == '\'' && i+1 < len(s) {
					i++
					key.WriteByte(s[i])
					continue
				}
				i++ // in JSON, skip the escaped byte; Unmarshal decodes it
			case q:
				if i+1 >= len(s) || s[i+1] != ']' {
					return "", 0, errors.New("quoted key not followed by ]")
				}
				if q == '\'' {
					return quote(key.String()), i + 2, nil
				}
				var k string
				if err := json.Unmarshal([]byte(s[1:i+1]), &k); err != nil {
					return "", 0, fmt.Errorf("invalid quoted key: %w", err)
				}
				return quote(k), i + 2, nil
			default:
				key.WriteByte(s[i])
			}
		}
		return "", 0, errors.New("unterminated quoted key")
	default:
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("unterminated [")
		}
		n, err := strconv.ParseInt(s[1:end], 10, 64)
		if err != nil || !trace.IsNumber(s[1:end]) {
			return "", 0, fmt.Errorf("index %q is not an integer", s[1:end])
		}
		return strconv.FormatInt(n, 10), end + 1, nil
	}
}
