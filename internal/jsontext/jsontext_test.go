package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// stdQuote is the definition AppendQuote must agree with: encoding/json
// without HTML escaping.
func stdQuote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err) // a string always encodes
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// roundTrip is the definition Canonical must agree with: encode, decode
// into generic values with numbers kept as written, and encode again
// with sorted keys, two-space indentation and no HTML escaping.
func roundTrip(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var hostile = []string{"", "a", "<b>&'", "\"\\/", "\x00\x01\x08\x0c\n\r\t\x1f\x7f", "\u2028\u2029", "é✓😀", "\xff", "a\xc3", "\xed\xa0\x80", "x y"}

func TestAppendQuote(t *testing.T) {
	for _, a := range hostile {
		for _, b := range hostile {
			s := a + b
			if got, want := string(AppendQuote(nil, s)), stdQuote(s); got != want {
				t.Errorf("AppendQuote(%q) = %s, want %s", s, got, want)
			}
		}
	}
	// The one escaping of the module leaves HTML alone.
	if got := string(AppendQuote(nil, "a < b && c > d")); got != `"a < b && c > d"` {
		t.Errorf("AppendQuote escapes HTML: %s", got)
	}
}

// TestAppendString: canonical JSON differs from encoding/json in one
// place: an invalid byte is written as U+FFFD itself, one for each byte,
// as decoding the JSON first would leave it.
func TestAppendString(t *testing.T) {
	got := string(AppendString(nil, "a\xffb\xe2\x80c\u2028\n"))
	want := "\"a\uFFFDb\uFFFD\uFFFDc\\u2028\\n\""
	if got != want {
		t.Errorf("AppendString = %q, want %q", got, want)
	}
}

func TestAppendUnquote(t *testing.T) {
	for _, tc := range []struct {
		token, want string
	}{
		{`""`, ""},
		{`"plain"`, "plain"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
		{`"\u0041\u00e9\u2028"`, "Aé\u2028"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\ud83d"`, "\uFFFD"},
		{`"\ud83d\u0041"`, "\uFFFDA"},
		{`"\ude00\ud83d\ude00"`, "\uFFFD😀"},
		{"\"bad\xff\xfeutf8\"", "bad\uFFFD\uFFFDutf8"},
		{"\"é\"", "é"},
	} {
		got, end, err := AppendUnquote([]byte("x:"), tc.token+",", 0)
		if err != nil || string(got) != "x:"+tc.want || end != len(tc.token) {
			t.Errorf("AppendUnquote(%s) = %q, %d, %v; want %q, %d", tc.token, got, end, err, "x:"+tc.want, len(tc.token))
		}
	}
}

// TestAppendUnquoteErrors: each malformed token is an error at the byte
// encoding/json names, worded as it words it.
func TestAppendUnquoteErrors(t *testing.T) {
	for _, tc := range []struct {
		token string
		off   int
		msg   string
	}{
		{`"abc`, 4, "unexpected end of JSON input"},
		{`"ab\`, 4, "unexpected end of JSON input"},
		{`"\u12`, 5, "unexpected end of JSON input"},
		{`"\u12x4"`, 5, `invalid character 'x' in \u hexadecimal character escape`},
		{`"\q"`, 2, "invalid character 'q' in string escape code"},
		{"\"a\x01\"", 2, "invalid character byte 0x01 in string literal"},
		{"\"a\n\"", 2, "invalid character byte 0x0a in string literal"},
	} {
		_, _, err := AppendUnquote(nil, []byte(tc.token), 0)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tc.off || se.Msg != tc.msg {
			t.Errorf("AppendUnquote(%q) = %v, want %q at %d", tc.token, err, tc.msg, tc.off)
		}
		var v string
		if json.Unmarshal([]byte(tc.token), &v) == nil {
			t.Errorf("encoding/json accepts %q", tc.token)
		}
	}
}

// FuzzQuoteUnquote: quoting agrees with encoding/json and unquoting
// gives back what encoding/json decodes, for any string; and of any
// token, AppendUnquote accepts exactly what encoding/json accepts, with
// the same value.
func FuzzQuoteUnquote(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Add(`\ud83d\ude00\ud800 \u00e9 \/`)
	f.Add(`\u12x4`)
	f.Fuzz(func(t *testing.T, s string) {
		q := AppendQuote(nil, s)
		if want := stdQuote(s); string(q) != want {
			t.Fatalf("AppendQuote(%q) = %s, encoding/json writes %s", s, q, want)
		}
		var want string
		if err := json.Unmarshal(q, &want); err != nil {
			t.Fatal(err)
		}
		got, end, err := AppendUnquote(nil, q, 0)
		if err != nil || string(got) != want || end != len(q) {
			t.Fatalf("AppendUnquote(%s) = %q, %d, %v; want %q", q, got, end, err, want)
		}

		token := `"` + s + `"`
		got, end, err = AppendUnquote(nil, token, 0)
		var std string
		stdErr := json.Unmarshal([]byte(token), &std)
		switch {
		case err == nil && end == len(token):
			if stdErr != nil || string(got) != std {
				t.Fatalf("AppendUnquote(%q) = %q; encoding/json: %q, %v", token, got, std, stdErr)
			}
		case err == nil: // the token ends early: a quote inside s
			if stdErr == nil {
				t.Fatalf("AppendUnquote(%q) stopped at %d, encoding/json decoded %q", token, end, std)
			}
		default:
			if stdErr == nil {
				t.Fatalf("AppendUnquote(%q): %v; encoding/json decodes %q", token, err, std)
			}
		}
	})
}

func TestNumberEnd(t *testing.T) {
	for _, s := range []string{"0", "-0", "12", "-3.5", "1e10", "1E+2", "2.5e-3"} {
		if !IsNumber(s) || !json.Valid([]byte(s)) {
			t.Errorf("IsNumber(%q) = false", s)
		}
	}
	for _, s := range []string{"", "01", "1.", ".5", "+1", "1e", "-", "0x10", "NaN", "1 "} {
		if IsNumber(s) {
			t.Errorf("IsNumber(%q) = true", s)
		}
	}
}

// TestCanonical: Canonical writes what the round trip through generic
// values writes, for values chosen to reach every escape and road, and
// for random ones.
func TestCanonical(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A any    `json:"a,omitempty"`
	}
	type embedded struct{ E int }
	type sample struct {
		*embedded
		Zed     string          `json:"zed"`
		Alpha   []int           `json:"alpha"`
		Empty   []string        `json:"empty"`
		Nil     []string        `json:"nil"`
		Omitted string          `json:"omitted,omitempty"`
		Raw     json.RawMessage `json:"raw"`
		Map     map[string]any  `json:"map"`
		Number  json.Number     `json:"number"`
		Ptr     *float64        `json:"ptr"`
		Str     int             `json:"str,string"`
		Named   map[string]int  `json:"named"`
		Arr     [2]bool         `json:"arr"`
	}
	half := 0.5
	cases := []any{
		nil, true, 0, -1.5, 1e21, 1e-7, json.Number("1.50"), "", "plain", []any{}, map[string]any{},
		"<a href=\"x\">&amp;</a>", "tab\tnew\nline\rcr\bbs\fff\x00\x1f\x7f", "\u2028\u2029", "bad \xff\xfe utf8", "é ☃ 😀",
		`back\slash \u0041 "quoted"`,
		map[string]any{"b": 1, "a": []any{map[string]any{}, []any{}, "x"}, "<k>": "&", "\u2028": nil, "é": "e", "\xff": 1, "\xfe": 2},
		[]any{[]any{[]any{}}, map[string]any{"z": map[string]any{"y": []any{1, 2}}}},
		inner{Z: "z", A: map[string]any{"c": 3, "b": inner{Z: "<>"}}},
		[]any(nil), map[string]any(nil), map[string]any{"l": []any(nil), "m": map[string]any(nil), "s": []string{"x"}},
		sample{Zed: "z", Alpha: []int{3, 1}, Empty: []string{}, Raw: json.RawMessage(`{"b": 1, "a": [ {}, [] ], "a": "dup", "k\u0041y":"\ud83d\ude00 \ud800 lone"}`),
			Map: map[string]any{"html": "<script>&</script>", "ctl\x01": "x\u2029"}, Number: "-0.000", Ptr: &half, Str: 7,
			Named: map[string]int{"b": 2, "a": 1}},
		&sample{embedded: &embedded{E: 4}},
		map[int]string{2: "b", 1: "a"},
		[]byte("bytes"),
		map[string]string{"bad\xffkey": "v\xfe\xffw"},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		cases = append(cases, randomValue(r, 4))
	}
	for i, v := range cases {
		want, werr := roundTrip(v)
		got, gerr := Canonical(v)
		if werr != nil || gerr != nil {
			t.Fatalf("case %d: %v, %v", i, werr, gerr)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("case %d: %#v\n got %q\nwant %q", i, v, got, want)
		}
		var buf bytes.Buffer
		if err := WriteCanonical(&buf, v); err != nil || !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("case %d: WriteCanonical = %q, %v", i, buf.Bytes(), err)
		}
		raw, _ := json.Marshal(v)
		indented, err := AppendIndent([]byte("x"), raw, 0)
		if err != nil || string(indented) != "x"+strings.TrimSuffix(string(want), "\n") {
			t.Errorf("case %d: AppendIndent = %q, %v", i, indented, err)
		}
	}
	if _, err := Canonical(map[string]any{"nan": []any{1, nanValue()}}); err == nil {
		t.Error("a NaN encoded")
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

// TestWriteCanonicalLarge: a value larger than the buffer WriteCanonical
// holds is written in pieces that add up to Canonical's bytes.
func TestWriteCanonicalLarge(t *testing.T) {
	l := make([]any, 20000)
	for i := range l {
		l[i] = map[string]any{"i": i, "s": strings.Repeat("<x>", i%7)}
	}
	want, err := Canonical(l)
	if err != nil {
		t.Fatal(err)
	}
	w := &countingWriter{}
	if err := WriteCanonical(w, l); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.buf.Bytes(), want) || w.writes < 2 {
		t.Errorf("WriteCanonical wrote %d bytes in %d writes, want %d bytes in several", w.buf.Len(), w.writes, len(want))
	}
}

type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}

// TestAppendIndentRejects: malformed input is an error, never a panic.
func TestAppendIndentRejects(t *testing.T) {
	for _, src := range []string{``, `{`, `[1,`, `{"a"}`, `{"a":1,}`, `"abc`, `{"a":1 "b":2}`, `[1 2]`, `{1:2}`, `]`, `1 2`, `"\q"`, `{"\q":1}`} {
		if out, err := AppendIndent(nil, []byte(src), 0); err == nil {
			t.Errorf("AppendIndent(%q) = %q, want an error", src, out)
		}
	}
}

// TestAppendCompact holds AppendCompact's direct encoder to encoding/json,
// whose bytes every recorded digest is of, on random generic values with
// hostile strings and keys, numbers of every form and types it leaves to
// encoding/json.
func TestAppendCompact(t *testing.T) {
	nums := []json.Number{"", "0", "-0", "12", "-3.5", "1e10", "1E+2", "2.5e-3", "01", "1.", ".5", "+1", "1e", "-", "0x10", "NaN"}
	r := rand.New(rand.NewPCG(3, 4))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch n := r.IntN(13); {
		case n == 0:
			return nil
		case n == 1:
			return r.IntN(2) == 0
		case n == 2:
			return r.IntN(2000) - 1000
		case n == 3:
			return int64(r.Int64())
		case n == 4:
			return nums[r.IntN(len(nums))]
		case n == 5:
			return []float64{0, -0.5, 1e-7, 1e21, 123456.789, 1e20}[r.IntN(6)] * r.Float64()
		case n == 6 && r.IntN(2) == 0:
			return []string{"x", "<y>"}
		case n == 7 && r.IntN(4) == 0:
			return uint8(7) // left to encoding/json
		case n == 8 && depth < 4:
			if r.IntN(5) == 0 {
				return []any(nil)
			}
			l := make([]any, r.IntN(4))
			for i := range l {
				l[i] = gen(depth + 1)
			}
			return l
		case n >= 9 && depth < 4:
			if r.IntN(6) == 0 {
				return map[string]any(nil)
			}
			m := map[string]any{}
			for range r.IntN(5) {
				m[hostile[r.IntN(len(hostile))]+hostile[r.IntN(len(hostile))]] = gen(depth + 1)
			}
			return m
		}
		return hostile[r.IntN(len(hostile))] + hostile[r.IntN(len(hostile))]
	}
	direct := 0
	for range 20000 {
		v := gen(0)
		if _, ok := appendCompact(nil, v); ok {
			direct++
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		werr := enc.Encode(v)
		got, err := AppendCompact([]byte("x"), v)
		if (err != nil) != (werr != nil) {
			t.Fatalf("AppendCompact(%#v): %v, encoding/json: %v", v, err, werr)
		}
		if err == nil && string(got) != "x"+strings.TrimSuffix(buf.String(), "\n") {
			t.Fatalf("AppendCompact(%#v) = %s, encoding/json writes %s", v, got, buf.Bytes())
		}
	}
	if direct < 10000 {
		t.Fatalf("only %d of 20000 values were written directly; the test checks too little", direct)
	}
}

func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(8); {
	case depth == 0 || n < 3:
		switch r.IntN(5) {
		case 0:
			return randomString(r)
		case 1:
			return r.Float64() * 1e6
		case 2:
			return r.IntN(2) == 0
		case 3:
			return nil
		}
		return json.Number(fmt.Sprint(r.IntN(1000) - 500))
	case n < 5:
		l := make([]any, r.IntN(4))
		for i := range l {
			l[i] = randomValue(r, depth-1)
		}
		return l
	default:
		m := map[string]any{}
		for range r.IntN(5) {
			m[randomString(r)] = randomValue(r, depth-1)
		}
		return m
	}
}

func randomString(r *rand.Rand) string {
	const alphabet = "ab<>&\"\\\n\t\x01\x7f é☃\u2028\xff/"
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// Every file written by hand quotes its strings through AppendQuote and
// is compared byte for byte with encoding/json's, so it must agree with
// encoding/json (HTML escaping off) on every class of byte.
func TestAppendQuoteTable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"\x00\x1f\x7f", `"\u0000\u001f` + "\x7f" + `"`},
		{"<&>", `"<&>"`},
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"é😀", `"é😀"`},
		{"x\xffy\xe2\x80z", `"x\ufffdy\ufffd\ufffdz"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
	}
	for _, tt := range tests {
		got := string(AppendQuote([]byte("pre:"), tt.in))
		if got != "pre:"+tt.want {
			t.Errorf("AppendQuote(%q) = %s, want pre:%s", tt.in, got, tt.want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(tt.in); err != nil {
			t.Fatal(err)
		}
		if std := string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); std != tt.want {
			t.Errorf("encoding/json(%q) = %s, want %s", tt.in, std, tt.want)
		}
	}
}

// TestHex4 checks the \uXXXX escape in every digit case.
func TestHex4(t *testing.T) {
	for s, want := range map[string]rune{`\u00e9`: 'é', `\u00E9`: 'é', `\u20AC`: '€', `\uFFFD`: '\uFFFD', `\u0041`: 'A'} {
		if r, ok := hex4(s, 0); !ok || r != want {
			t.Errorf("hex4(%q) = %q, %v; want %q", s, r, ok, want)
		}
	}
	for _, s := range []string{`\u00G9`, `\u00`, `\x0041`, `\u00@9`, `\u00[9`, "\\u00`9", `\u00g9`} {
		if _, ok := hex4(s, 0); ok {
			t.Errorf("hex4(%q) ok, want not an escape", s)
		}
	}
	for c, want := range map[byte]bool{'0': true, '9': true, 'a': true, 'f': true, 'A': true, 'F': true, 'g': false, 'G': false, '@': false, '`': false, '/': false, ':': false} {
		if isHex(c) != want {
			t.Errorf("isHex(%q) = %v, want %v", c, !want, want)
		}
	}
}
