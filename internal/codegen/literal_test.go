package codegen

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// eval evaluates a Starlark expression with the real interpreter, so the
// tests check what a literal means, not only how it looks.
func eval(t *testing.T, expr string) starlark.Value {
	t.Helper()
	thread := &starlark.Thread{Name: "test"}
	v, err := starlark.EvalOptions(fileOptions(), thread, "lit.star", expr, nil)
	if err != nil {
		t.Fatalf("eval(%s): %v", expr, err)
	}
	return v
}

func TestLiteral(t *testing.T) {
	tests := []struct {
		in   any
		want string
		// repr is the Starlark value's repr when it differs from want.
		repr string
	}{
		{nil, "None", ""},
		{true, "True", ""},
		{false, "False", ""},
		{"", `""`, ""},
		{"plain", `"plain"`, ""},
		{`say "hi"`, `"say \"hi\""`, ""},
		{`back\slash`, `"back\\slash"`, ""},
		{"it's", `"it's"`, ""},
		{"a\nb\r\tc", `"a\nb\r\tc"`, ""},
		{"nul\x00bell\a esc\x1b del\x7f", `"nul\x00bell\a esc\x1b del\x7f"`, ""},
		{`"""`, `"\"\"\""`, ""},
		{"é 日本 🚀", `"é 日本 🚀"`, ""},
		{"rtl\u202eoverride\u2028sep", `"rtl\u202eoverride\u2028sep"`, ""},
		{"bad\xffutf8", `"bad�utf8"`, ""},
		{json.Number("0"), "0", ""},
		{json.Number("-0"), "-0", "0"},
		{json.Number("42"), "42", ""},
		{json.Number("-17"), "-17", ""},
		{json.Number("123456789012345678901234567890"), "123456789012345678901234567890", ""},
		{json.Number("1.5"), "1.5", ""},
		{json.Number("1.10"), "1.1", ""},
		{json.Number("2.0"), "2.0", ""},
		{json.Number("1e21"), "1e+21", ""},
		{json.Number("1E-7"), "1e-07", ""},
		{json.Number("-2.5e3"), "-2500.0", ""},
		{json.Number("1e999"), `float("inf")`, "+inf"},
		{json.Number("-1e999"), `float("-inf")`, "-inf"},
		{3, "3", ""},
		{int64(-9), "-9", ""},
		{uint64(math.MaxUint64), "18446744073709551615", ""},
		{0.5, "0.5", ""},
		{float64(3), "3.0", ""},
		{float32(0.25), "0.25", ""},
		{math.NaN(), `float("nan")`, "nan"},
		{math.Inf(1), `float("inf")`, "+inf"},
		{[]any{}, "[]", ""},
		{map[string]any{}, "{}", ""},
		{[]any{json.Number("1"), "a", nil}, `[1, "a", None]`, ""},
		{map[string]any{"b": json.Number("2"), "a": []any{true}, "": "empty"}, `{"": "empty", "a": [True], "b": 2}`, ""},
		{[]string{"x", "y"}, `["x", "y"]`, ""},
		{map[string]int{"z": 1, "a": 2}, `{"a": 2, "z": 1}`, ""},
		{struct {
			Name string `json:"name"`
		}{"n"}, `{"name": "n"}`, ""},
	}
	for _, tt := range tests {
		n, err := literal(tt.in)
		if err != nil {
			t.Errorf("literal(%#v): %v", tt.in, err)
			continue
		}
		var b strings.Builder
		n.flat(&b)
		got := b.String()
		if got != tt.want {
			t.Errorf("literal(%#v) = %s, want %s", tt.in, got, tt.want)
			continue
		}
		repr := tt.repr
		if repr == "" {
			repr = tt.want
		}
		if v := eval(t, got); v.String() != repr && !strings.HasPrefix(repr, `"`) {
			t.Errorf("eval(%s) = %s, want %s", got, v, repr)
		}
	}
}

// TestLiteralStringsRoundTrip evaluates string literals and compares the
// value with the input: escaping must be exact, not only well-formed.
func TestLiteralStringsRoundTrip(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"`, `\`, `\"`, `"""`, "'''", "\x00", "\n\r\t\v\f\a\b",
		"\x1b[31m", "\u202e", "\u2028\u2029", "é", "日本", "🚀", "\ufeff", "a\\nb",
	} {
		got := eval(t, quote(s))
		if str, ok := got.(starlark.String); !ok || string(str) != s {
			t.Errorf("eval(quote(%q)) = %v, want %q", s, got, s)
		}
	}
}

func TestLiteralErrors(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{json.Number("01"), `invalid number "01"`},
		{json.Number("0x10"), `invalid number "0x10"`},
		{json.Number("1_000"), `invalid number "1_000"`},
		{json.Number(""), `invalid number ""`},
		{json.Number("1."), `invalid number "1."`},
		{json.Number(".5"), `invalid number ".5"`},
		{json.Number("+1"), `invalid number "+1"`},
		{json.Number("NaN"), `invalid number "NaN"`},
		{make(chan int), "value of type chan int: json: unsupported type: chan int"},
		{nest(maxDepth + 1), "value nested deeper than 64 levels"},
	}
	for _, tt := range tests {
		_, err := literal(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("literal(%#v) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestSelector(t *testing.T) {
	tests := []struct {
		path, want, err string
	}{
		{"$", "", ""},
		{"$.a", `["a"]`, ""},
		{"$.a.b", `["a"]["b"]`, ""},
		{"$.a[0]", `["a"][0]`, ""},
		{"$.items[0].id", `["items"][0]["id"]`, ""},
		{"$[2][-1]", `[2][-1]`, ""},
		{`$["odd key"]`, `["odd key"]`, ""},
		{`$["a.b"]["c[0]"]`, `["a.b"]["c[0]"]`, ""},
		{`$["q\"uote"]`, `["q\"uote"]`, ""},
		{`$["uni\u00e9\n"]`, `["unié\n"]`, ""},
		{`$['single']`, `["single"]`, ""},
		{`$['it\'s']`, `["it's"]`, ""},
		{`$.a-b`, `["a-b"]`, ""},
		{"", "", `path "" does not start with $`},
		{"a.b", "", `path "a.b" does not start with $`},
		{"$.", "", `path "$.": empty key at offset 2`},
		{"$..a", "", `path "$..a": empty key at offset 2`},
		{"$a", "", `path "$a": unexpected 'a' at offset 1`},
		{"$[", "", `path "$[": offset 1: unterminated [`},
		{"$[0", "", `path "$[0": offset 1: unterminated [`},
		{"$[]", "", `path "$[]": offset 1: unterminated [`},
		{"$[01]", "", `path "$[01]": offset 1: index "01" is not an integer`},
		{"$[*]", "", `path "$[*]": offset 1: index "*" is not an integer`},
		{"$[99999999999999999999]", "", `path "$[99999999999999999999]": offset 1: index "99999999999999999999" is not an integer`},
		{`$["open`, "", `path "$[\"open": offset 1: unterminated quoted key`},
		{`$["a"x]`, "", `path "$[\"a\"x]": offset 1: quoted key not followed by ]`},
		{`$["\q"]`, "", `path "$[\"\\q\"]": offset 1: invalid quoted key: invalid character 'q' in string escape code`},
	}
	for _, tt := range tests {
		got, err := selector(tt.path)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.err {
			t.Errorf("selector(%q) = %q, %q; want %q, %q", tt.path, got, gotErr, tt.want, tt.err)
		}
	}
}

func TestDocstring(t *testing.T) {
	for _, s := range []string{"", "plain", `"""`, `ends with "`, `\`, `ends with \`, "a\nb", `"\"`} {
		src := docstring(s)
		got := eval(t, src)
		if str, ok := got.(starlark.String); !ok || string(str) != candidate.OneLine(s) {
			t.Errorf("eval(docstring(%q)) = %v, want %q", s, got, candidate.OneLine(s))
		}
	}
}

// TestTextBlock: a file's text of several printable lines is written as
// a block of its lines that evaluates to exactly the text; anything else
// keeps the one-line form.
func TestTextBlock(t *testing.T) {
	for _, s := range []string{
		"a\nb", "a\nb\n", "\n\n", "x\n\n", `"` + "\n" + `"`, "q\n\"", "q\n\"\"", "q\n\"\"\"\n\"\"\"", `\` + "\n" + `\n`,
		"\ttab\n  indented\n", "日本\n🚀\n", "end\\\nx\\\n", "'''\n'''",
	} {
		block, ok := textBlock(s)
		if !ok {
			t.Errorf("textBlock(%q) refused, want a block", s)
			continue
		}
		if !strings.HasPrefix(block, "\"\"\"\\\n") || strings.Count(block, "\n") != strings.Count(s, "\n")+1 {
			t.Errorf("textBlock(%q) = %s, want the text's lines after an escaped line break", s, block)
		}
		if got := eval(t, block); got != starlark.String(s) {
			t.Errorf("eval(textBlock(%q)) = %v", s, got)
		}
	}
	for _, s := range []string{"", "one line", "one line\n", "cr\r\nlf\n", "bidi\n\u202e\n", "nul\n\x00", "sep\n\u2028\n", "nbsp\n\u00a0\n", "bad\n\xff"} {
		if block, ok := textBlock(s); ok {
			t.Errorf("textBlock(%q) = %s, want the one-line form", s, block)
		}
	}
}
