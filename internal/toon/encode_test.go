package toon

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeJSON(t *testing.T) {
	tests := []struct {
		name string
		json string
		opts EncodeOptions
		want string
	}{
		// §5 root forms.
		{"empty object", `{}`, EncodeOptions{}, ""},
		{"empty root array", `[]`, EncodeOptions{}, "[]"},
		{"root primitive", `"hello"`, EncodeOptions{}, "hello"},
		{"root number", `42`, EncodeOptions{}, "42"},
		{"root quoted", `"a: b"`, EncodeOptions{}, `"a: b"`},
		{"root inline array", `[1,"a",true,null]`, EncodeOptions{}, "[4]: 1,a,true,null"},
		{"root tabular", `[{"a":1},{"a":2}]`, EncodeOptions{}, "[2]{a}:\n  1\n  2"},
		{"root keyed", `{"x":{"a":1},"y":{"a":2}}`, EncodeOptions{}, "[2:]{a}:\n  x: 1\n  y: 2"},
		// §8 objects keep encounter order; empty objects stay key:.
		{"object order", `{"b":1,"a":2}`, EncodeOptions{}, "b: 1\na: 2"},
		{"nested", `{"u":{"id":1,"e":{}}}`, EncodeOptions{}, "u:\n  id: 1\n  e:"},
		{"single entry object nests", `{"u":{"x":{"a":1}}}`, EncodeOptions{}, "u:\n  x:\n    a: 1"},
		{"indent 4", `{"u":{"id":1}}`, EncodeOptions{Indent: 4}, "u:\n    id: 1"},
		// §7.2 quoting.
		{"quoting", `{"a":"","b":" x","c":"x ","d":"true","e":"null","f":"42","g":"-3.14","h":"05","i":"+1","j":"1e-6","k":"a:b","l":"a\"b","m":"a\\b","n":"[x]","o":"{x}","p":"a,b","q":"-","r":"-x","s":"#","t":"#x","u":"a b","v":"héllo 👋","w":"a|b","x":"1.5.2","y":"tab\tin"}`, EncodeOptions{},
			`a: ""` + "\n" + `b: " x"` + "\n" + `c: "x "` + "\n" + `d: "true"` + "\n" + `e: "null"` + "\n" + `f: "42"` + "\n" + `g: "-3.14"` + "\n" + `h: "05"` + "\n" + `i: "+1"` + "\n" + `j: "1e-6"` + "\n" + `k: "a:b"` + "\n" + `l: "a\"b"` + "\n" + `m: "a\\b"` + "\n" + `n: "[x]"` + "\n" + `o: "{x}"` + "\n" + `p: "a,b"` + "\n" + `q: "-"` + "\n" + `r: "-x"` + "\n" + `s: "#"` + "\n" + `t: "#x"` + "\n" + "u: a b\nv: héllo 👋\nw: a|b\nx: 1.5.2\n" + `y: "tab\tin"`},
		// §7.1 escapes.
		{"escapes", `{"a":"l1\nl2\r\u0001\u001f"}`, EncodeOptions{}, `a: "l1\nl2\r\u0001\u001f"`},
		// §7.3 keys.
		{"keys", `{"my-key":1,"a.b":2,"_x9":3,"9a":4,"":5,"a b":6}`, EncodeOptions{}, "\"my-key\": 1\na.b: 2\n_x9: 3\n\"9a\": 4\n\"\": 5\n\"a b\": 6"},
		{"quoted key header", `{"my-key":[1,2,3]}`, EncodeOptions{}, `"my-key"[3]: 1,2,3`},
		// §2 numbers.
		{"numbers", `[1.0,1.5000,-0,1e6,1e-6,1e-7,1e21,123456789012345678901234567890,0.000001234,-2.5E+3,9007199254740993]`, EncodeOptions{},
			"[11]: 1,1.5,0,1000000,0.000001,1e-7,1e+21,1.2345678901234567890123456789e+29,0.000001234,-2500,9007199254740993"},
		// §9.1 arrays.
		{"empty field array", `{"t":[]}`, EncodeOptions{}, "t: []"},
		{"inline quoting per active delimiter", `{"t":["a,b","c|d"]}`, EncodeOptions{Delimiter: Pipe}, `t[2|]: a,b|"c|d"`},
		{"inline tab", `{"t":["a b","c\td"]}`, EncodeOptions{Delimiter: Tab}, "t[2\t]: a b\t\"c\\td\""},
		// §9.2 arrays of arrays.
		{"arrays of arrays", `{"p":[[1,2],[],["a"]]}`, EncodeOptions{}, "p[3]:\n  - [2]: 1,2\n  - [0]:\n  - [1]: a"},
		{"nested non-primitive arrays", `[[[1]],[{"a":1},{"a":2}]]`, EncodeOptions{},
			"[2]:\n  - [1]:\n    - [1]: 1\n  - [2]:\n    - a: 1\n    - a: 2"},
		// §9.3 tabular, key order from the first element.
		{"tabular", `{"items":[{"sku":"A1","qty":2},{"qty":1,"sku":"B,2"}]}`, EncodeOptions{}, "items[2]{sku,qty}:\n  A1,2\n  \"B,2\",1"},
		{"nested field groups", `{"o":[{"id":1,"c":{"n":"Ada","k":{"x":1}},"t":99},{"id":2,"c":{"k":{"x":2},"n":"Bob"},"t":149}]}`, EncodeOptions{},
			"o[2]{id,c{n,k{x}},t}:\n  1,Ada,1,99\n  2,Bob,2,149"},
		{"tabular disqualified by empty object", `{"a":[{"x":1},{}]}`, EncodeOptions{}, "a[2]:\n  - x: 1\n  -"},
		{"tabular disqualified by key sets", `{"a":[{"x":1},{"y":1}]}`, EncodeOptions{}, "a[2]:\n  - x: 1\n  - y: 1"},
		{"tabular disqualified by null vs object", `{"a":[{"x":null},{"x":{"y":1}}]}`, EncodeOptions{}, "a[2]:\n  - x: null\n  - x:\n      y: 1"},
		{"tabular disqualified by array", `{"a":[{"x":[1]},{"x":[2]}]}`, EncodeOptions{}, "a[2]:\n  - x[1]: 1\n  - x[1]: 2"},
		{"tab tabular", `{"i":[{"a":"x y","b":"p,q"}]}`, EncodeOptions{Delimiter: Tab}, "i[1\t]{a\tb}:\n  x y\tp,q"},
		// §9.4 and §10 list items.
		{"mixed", `{"items":[1,{"a":1},"text",[]]}`, EncodeOptions{}, "items[4]:\n  - 1\n  - a: 1\n  - text\n  - [0]:"},
		{"list item first field nested object", `{"l":[{"u":{"a":1},"b":2},1]}`, EncodeOptions{}, "l[2]:\n  - u:\n      a: 1\n    b: 2\n  - 1"},
		{"list item first field tabular", `{"items":[{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"status":"active"}]}`, EncodeOptions{},
			"items[1]:\n  - users[2]{id,name}:\n      1,Ada\n      2,Bob\n    status: active"},
		{"list item first field keyed", `{"l":[{"m":{"x":{"a":1},"y":{"a":2}},"s":1},2]}`, EncodeOptions{}, "l[2]:\n  - m[2:]{a}:\n      x: 1\n      y: 2\n    s: 1\n  - 2"},
		{"list item first field list", `{"l":[{"k":[1,{"a":1}]},2]}`, EncodeOptions{}, "l[2]:\n  - k[2]:\n      - 1\n      - a: 1\n  - 2"},
		{"list item primitive quoted per active delimiter", `{"l":["a|b",{"n":"a,b"},"a,b"]}`, EncodeOptions{Delimiter: Pipe}, "l[3|]:\n  - \"a|b\"\n  - n: \"a,b\"\n  - a,b"},
		{"list item empty field array", `{"l":[{"k":[]},1]}`, EncodeOptions{}, "l[2]:\n  - k: []\n  - 1"},
		// §11.1 document delimiter governs object field values.
		{"document delimiter", `{"a":"x|y","b":"x,y","t":[{"n":"p|q"},1]}`, EncodeOptions{Delimiter: Pipe, DocumentDelimiter: Pipe},
			"a: \"x|y\"\nb: x,y\nt[2|]:\n  - n: \"p|q\"\n  - 1"},
		// §9.5 keyed tabular.
		{"keyed", `{"users":{"alice":{"age":30,"city":"Berlin"},"bob":{"city":"Oslo","age":25}}}`, EncodeOptions{},
			"users[2:]{age,city}:\n  alice: 30,Berlin\n  bob: 25,Oslo"},
		{"keyed pipe with quoted entry key", `{"m":{"a-b":{"x":"p|q"},"c":{"x":"r,s"}}}`, EncodeOptions{Delimiter: Pipe}, "m[2:|]{x}:\n  \"a-b\": \"p|q\"\n  c: r,s"},
		{"keyed nested groups", `{"m":{"a":{"p":{"q":1}},"b":{"p":{"q":2}}}}`, EncodeOptions{}, "m[2:]{p{q}}:\n  a: 1\n  b: 2"},
		// §6, §8: dotted keys are literal; nothing is folded.
		{"no key folding", `{"a":{"b":{"c":1}},"d.e":2}`, EncodeOptions{}, "a:\n  b:\n    c: 1\nd.e: 2"},
		{"prototype keys", `{"__proto__":1,"constructor":{"prototype":2}}`, EncodeOptions{}, "__proto__: 1\nconstructor:\n  prototype: 2"},
		{"duplicate JSON keys", `{"a":1,"b":2,"a":3}`, EncodeOptions{}, "a: 3\nb: 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeJSON([]byte(tt.json), tt.opts)
			if err != nil {
				t.Fatalf("EncodeJSON(%s) error: %v", tt.json, err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("EncodeJSON(%s) (-want +got):\n%s", tt.json, diff)
			}
			// Every encoding decodes, strictly, back to the same JSON
			// up to the tabular key reordering §2 allows.
			back, err := Decode(got, DecodeOptions{Indent: tt.opts.Indent})
			if err != nil {
				t.Fatalf("Decode(%q) error: %v", got, err)
			}
			v, _ := ReadJSON([]byte(tt.json))
			if !sameValue(v, back) {
				t.Errorf("Decode(Encode(%s)) = %s", tt.json, mustJSON(t, back))
			}
		})
	}
}

func TestEncodeHostValues(t *testing.T) {
	type rec struct {
		Z int    `json:"z"`
		A string `json:"a"`
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"map sorted", map[string]any{"b": 1, "a": 2}, "a: 2\nb: 1"},
		{"NaN and Inf are null", []any{math.NaN(), math.Inf(1), math.Inf(-1)}, "[3]: null,null,null"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"floats", []any{0.1, 1e21, 1.5e-7, float32(0.25)}, "[4]: 0.1,1e+21,1.5e-7,0.25"},
		{"ints", []any{int8(-8), uint64(math.MaxUint64), int64(math.MinInt64)}, "[3]: -8,18446744073709551615,-9223372036854775808"},
		{"struct in field order", rec{Z: 1, A: "x"}, "z: 1\na: x"},
		{"nil pointer", (*rec)(nil), "null"},
		{"json number", json.Number("1.50"), "1.5"},
		{"invalid utf8", "a\xffb", "a\uFFFDb"},
		{"object duplicates", Object{{"a", 1}, {"a", 2}}, "a: 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Encode(tt.v, EncodeOptions{})
			if err != nil {
				t.Fatalf("Encode(%#v) error: %v", tt.v, err)
			}
			if string(got) != tt.want {
				t.Errorf("Encode(%#v) = %q, want %q", tt.v, got, tt.want)
			}
		})
	}
	for _, bad := range []any{json.Number("0x10"), make(chan int)} {
		if _, err := Encode(bad, EncodeOptions{}); err == nil {
			t.Errorf("Encode(%#v) = nil error, want one", bad)
		}
	}
}

func TestCanonicalNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"0.0", "0"}, {"-0e10", "0"},
		{"1.0", "1"}, {"1.5000", "1.5"}, {"-1E+03", "-1000"}, {"1e6", "1000000"},
		{"1e-6", "0.000001"}, {"1e-7", "1e-7"}, {"12e-8", "1.2e-7"}, {"12e-7", "0.0000012"}, {"0.0000001", "1e-7"},
		{"1e20", "100000000000000000000"}, {"1e21", "1e+21"}, {"123e19", "1.23e+21"},
		{"99999999999999999999.5", "99999999999999999999.5"},
		{"-0.000123", "-0.000123"}, {"0e1", "0"}, {"1e99999999999999999999", "1e+99999999999999999999"},
		{"0.001e-99999999999999999999", "1e-100000000000000000002"},
	}
	for _, tt := range tests {
		if got := canonicalNumber(tt.in); got != tt.want {
			t.Errorf("canonicalNumber(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// sameValue is JSON-model equality of §2: objects compare as key sets,
// since tabular forms reorder keys to the header's order; numbers compare
// by canonical value.
func sameValue(a, b any) bool {
	na, err1 := normalize(a, 0, 0)
	nb, err2 := normalize(b, 0, 0)
	if err1 != nil || err2 != nil {
		return false
	}
	return cmp.Equal(unordered(na), unordered(nb))
}

func unordered(v any) any {
	switch v := v.(type) {
	case Object:
		m := make(map[string]any, len(v))
		for _, x := range v {
			m[x.Key] = unordered(x.Value)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = unordered(x)
		}
		return out
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := WriteJSON(v, "")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nested returns n arrays, one inside the other, around inner.
func nested(n int, inner any) any {
	v := inner
	for range n {
		v = []any{v}
	}
	return v
}

// TestEncodeDepthLimit: a value nested MaxDepth deep encodes, one level
// more is refused with ErrTooDeep before anything is written, from a
// Go value and from JSON text alike.
func TestEncodeDepthLimit(t *testing.T) {
	if _, err := Encode(nested(DefaultMaxDepth, "x"), EncodeOptions{}); err != nil {
		t.Fatalf("Encode(%d deep) = %v, want no error", DefaultMaxDepth, err)
	}
	var out bytes.Buffer
	if err := EncodeTo(&out, nested(DefaultMaxDepth+1, "x"), EncodeOptions{}); !errors.Is(err, ErrTooDeep) || out.Len() > 0 {
		t.Errorf("EncodeTo(%d deep) = %v, wrote %d bytes, want ErrTooDeep and nothing", DefaultMaxDepth+1, err, out.Len())
	}
	deep := strings.Repeat("[", DefaultMaxDepth+1) + strings.Repeat("]", DefaultMaxDepth+1)
	if _, err := EncodeJSON([]byte(deep), EncodeOptions{}); !errors.Is(err, ErrTooDeep) {
		t.Errorf("EncodeJSON(%d deep) = %v, want ErrTooDeep", DefaultMaxDepth+1, err)
	}
	if _, err := EncodeJSON([]byte(deep), EncodeOptions{MaxDepth: DefaultMaxDepth + 1}); err != nil {
		t.Errorf("EncodeJSON(%d deep, MaxDepth %d) = %v, want no error", DefaultMaxDepth+1, DefaultMaxDepth+1, err)
	}
	obj := strings.Repeat(`{"a":`, 5) + "1" + strings.Repeat("}", 5)
	if _, err := EncodeJSON([]byte(obj), EncodeOptions{MaxDepth: 4}); !errors.Is(err, ErrTooDeep) {
		t.Errorf("EncodeJSON(5 objects deep, MaxDepth 4) = %v, want ErrTooDeep", err)
	}
}

// countingWriter counts what is written to it and keeps nothing.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// TestEncodeToStreams: the text of a deep value is much larger than the
// value (every line is indented to its depth), and EncodeTo does not
// hold it: what it allocates is a fraction of what it writes.
func TestEncodeToStreams(t *testing.T) {
	items := make([]any, 2000)
	for i := range items {
		items[i] = Object{{"a", number("1")}, {"b", []any{Object{{"c", "d"}}}}}
	}
	v, err := normalize(nested(DefaultMaxDepth-5, items), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var w countingWriter
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := EncodeTo(&w, v, EncodeOptions{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if w.n < 2<<20 {
		t.Fatalf("wrote %d bytes; the test wants a text of several MB", w.n)
	}
	if alloc > uint64(w.n)/4 {
		t.Errorf("EncodeTo allocated %d bytes to write %d: the text is held, not streamed", alloc, w.n)
	}
}
