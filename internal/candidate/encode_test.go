package candidate

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// roundTrip is the definition WriteJSON must agree with: encode, decode
// into generic values with numbers kept as written, and encode again with
// sorted keys, two-space indentation and no HTML escaping.
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

type encodeSample struct {
	Zed     string          `json:"zed"`
	Alpha   []int           `json:"alpha"`
	Empty   []string        `json:"empty"`
	Nil     []string        `json:"nil"`
	Omitted string          `json:"omitted,omitempty"`
	Raw     json.RawMessage `json:"raw"`
	Map     map[string]any  `json:"map"`
	Number  json.Number     `json:"number"`
	Ptr     *float64        `json:"ptr"`
}

func TestEncodeJSONMatchesRoundTrip(t *testing.T) {
	half := 0.5
	cases := []struct {
		name string
		v    any
	}{
		{"scalar string", "a<b>&c"},
		{"number", json.Number("1.50e3")},
		{"null", nil},
		{"empty object", map[string]any{}},
		{"empty array", []any{}},
		{"struct", encodeSample{
			Zed: "z", Alpha: []int{3, 1}, Empty: []string{}, Raw: json.RawMessage(`{"b": 1, "a": [ {}, [] ], "a": "dup"}`),
			Map:    map[string]any{"é": 1, "a\u2028b": "x\u2029y", "ctl\x01": "tab\there\nnewline\b\f\r", "html": "<script>&</script>"},
			Number: "-0.000", Ptr: &half,
		}},
		{"escapes in raw", json.RawMessage(`{"k\u0041y":"\ud83d\ude00 \ud800 lone \u00e9 \/ \"q\" \\","\u00e9":true}`)},
		{"invalid utf8", map[string]string{"bad\xffkey": "v\xfe\xffw"}},
		{"nested", []any{map[string]any{"b": []any{map[string]any{"d": 1, "c": nil}}, "a": false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := roundTrip(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeJSON(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("EncodeJSON:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestEncodeJSONRandom compares with the round trip on random documents
// whose strings mix every class of character the escaping treats apart.
func TestEncodeJSONRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "Z", "<", ">", "&", "\"", "\\", "/", "\n", "\t", "\x00", "\x1f", "é", "日本", "\u2028", "\u2029", "\xff", "😀", " "}
	str := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.IntN(7); {
		case depth > 3 || k == 0:
			return str()
		case k == 1:
			return json.Number([]string{"0", "-1", "2.5", "1e10", "123456789012345678901234567890"}[r.IntN(5)])
		case k == 2:
			return r.IntN(2) == 0
		case k == 3:
			return nil
		case k == 4 || k == 5:
			m := map[string]any{}
			for range r.IntN(5) {
				m[str()] = gen(depth + 1)
			}
			return m
		default:
			var a []any
			for range r.IntN(4) {
				a = append(a, gen(depth+1))
			}
			return a
		}
	}
	for i := range 2000 {
		v := gen(0)
		want, err := roundTrip(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EncodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("document %d: EncodeJSON:\n%q\nwant:\n%q", i, got, want)
		}
	}
}

func FuzzWriteJSON(f *testing.F) {
	f.Add(`{"b":1,"a":[1,{"d":"<\u00e9>","c":null}]}`)
	f.Add(`"\ud83d\ude00\ud800"`)
	f.Fuzz(func(t *testing.T, doc string) {
		if !json.Valid([]byte(doc)) {
			return
		}
		v := json.RawMessage(doc)
		want, err := roundTrip(v)
		if err != nil {
			return
		}
		got, err := EncodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("EncodeJSON(%q):\n%q\nwant:\n%q", doc, got, want)
		}
	})
}

func BenchmarkEncodeJSON(b *testing.B) {
	r := &Report{Version: ReportVersion, Candidates: make([]Candidate, 200)}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		c.ID, c.Name = "candidate_0123456789abcdef", "bump_version"
		for j := range 200 {
			c.Examples = append(c.Examples, Example{TraceID: "trace-000001", Source: "t.json", SourceHash: "sha256:00", ActionIDs: []string{"a1", "a2", "a3"}, StartIndex: j})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}
