package candidate

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/trace"
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

// compactRoad is how WriteJSON encoded before it walked values: the
// whole value through encoding/json, then that text rewritten.
func compactRoad(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out, err := jsontext.AppendIndent(nil, raw, 0)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// TestEncodeJSONTypedMatchesCompact: walking a report gives the bytes
// encoding it whole gave, with embedded structs, types that encode
// themselves, omitted and empty fields, numbers of every kind inside
// interface values, strings that need escaping or repair, and an error
// where encoding/json has one.
func TestEncodeJSONTypedMatchesCompact(t *testing.T) {
	conf := 0.75
	r := &Report{Version: ReportVersion, GeneratedAt: "2026-01-01T00:00:00Z", ExcludedTraces: []Exclusion{}, SkippedFiles: nil,
		Warnings: []Problem{{Code: "x", Message: "a <b> & \"c\" \u2028 \x01 bad\xff\xfe end"}}}
	c := Candidate{
		ID: "candidate_1", Name: "deploy", Confidence: 0.1 + 0.2, Support: 3,
		ConfidenceFactors: ConfidenceFactors{Support: 1e-7, Determinism: 1e21, ShadowPassRate: &conf},
		SequenceSignature: []string{"tool_call:a", "tool_call:b"},
		Parameters:        []Parameter{{Name: "p", Key: "k", Examples: []any{"x", json.Number("1.50"), 2.5, 3, int64(-4), nil, true, map[string]any{"z": 1.0, "a": []any{}, "é": "<"}, []string{"s"}}, Type: "string"}},
		DerivedParameters: []DerivedParameter{{Parameter: Parameter{Name: "d", Key: "k2"}, Expression: "p.lower()", Refs: []string{"p"}, Evidence: []DerivationEvidence{{Inputs: map[string]string{"p": "X", "a\x00b": "y"}}}}},
		Steps: []Step{{Index: 1, Kind: trace.KindToolCall, Name: "fs.write", Segment: Deterministic,
			Arguments:      []Argument{{Key: "mode", Kind: ArgConstant, Value: "0644"}, {Key: "b", Kind: ArgBinding, Binding: &Binding{Step: 1, FromStep: 0}}},
			SideEffects:    []trace.SideEffect{{Kind: "file_write", Target: "a", Metadata: map[string]any{"n": 1}, Extra: map[string]any{"zz": "extra", "aa": []any{1}}}},
			Approval:       &trace.Approval{Required: true, Boundary: "b", Extra: map[string]any{"note": "<x>"}},
			ExpectedOutput: map[string]any{"ok": true},
		}},
		Examples:         []Example{{TraceID: "t1", SourceHash: "h", ActionIDs: []string{"a"}, Positions: []int{}}},
		ExpectedReceipts: []any{},
		Shadow:           &ShadowReport{Traces: []ShadowTrace{{TraceID: "t1", ReplayOracle: &OracleReport{FirstRunCounts: map[string]int{"b": 2, "a": 1}}}}},
	}
	r.Candidates = []Candidate{c, {}}
	got, err := EncodeJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := compactRoad(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("walked:\n%s\nwhole:\n%s", got, want)
	}
	if rt, err := roundTrip(r); err != nil || !bytes.Equal(got, rt) {
		t.Errorf("walked report differs from the round trip (%v)", err)
	}
	r.Candidates[1].Confidence = math.NaN()
	if _, err := EncodeJSON(r); err == nil {
		t.Error("a NaN confidence encoded")
	}
}
