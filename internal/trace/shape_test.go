package trace

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// testShapes are the shapes FuzzParseShaped parses every input with.
var testShapes = []*Shape{
	{Only: true},
	{Stub: true},
	{Elems: &Shape{Stub: true}},
	{Only: true, Members: map[string]*Shape{
		"a": nil,
		"b": {Stub: true},
		"c": {Elems: &Shape{Only: true, Members: map[string]*Shape{"x": nil, "y": {Stub: true}}}},
		"d": {Members: map[string]*Shape{"z": {Only: true}}},
		"e": {Unique: true},
		"f": {Unique: true, Elems: &Shape{Unique: true}},
	}},
}

// shapeCases are documents that exercise the shapes above, valid and not.
var shapeCases = []string{
	`{"a": 1, "b": "text", "c": [{"x": 1, "y": "long", "w": {"deep": [1, 2, {"k": null}]}}], "d": {"z": {"q": 1}, "r": 2}, "e": [1, "2", true]}`,
	`{"a": [1], "b": {"k": 1}, "c": "not an array", "d": [], "e": {"e": 1, "e": 2}}`,
	`{"a": 1, "e": {"f": 1, "\u0066": 2}}`,
	`{"e": 1, "e": 2}`,
	`{"a": 1, "a": 2}`,
	`{"b": [1, 2], "c": [{"x": {"x": 1, "x": 1}}]}`,
	`{"e": {"a": -1.5e+3, "b": [true, false, null, "\ud83d\ude00"]}}`,
	`{"e": {"a": 01}}`,
	`{"e": [1, 2,]}`,
	`{"e": "unterminated}`,
	`{"e": tru}`,
	`{"a": 1,}`,
	`["x", {"b": 1}, [1]]`,
	`"text"`,
	`{"e": {}, "f": [], "b": {}, "c": []}`,
	`{"\u0065": 1, "e": 2}`,
	`{"e": "id-1", "f": ["t", 2, -3.5e1, {"x": 1}]}`,
	`{"e": 12, "f": "\u00e9t\u00e9"}`,
	`{"e": -, "f": 1}`,
	`{"e": "unterminated, "f": 1}`,
}

// FuzzParseShaped checks ParseShaped against Parse: the same errors for
// every document, and for a valid one Parse's value with the shape applied.
func FuzzParseShaped(f *testing.F) {
	for _, c := range shapeCases {
		f.Add([]byte(c))
	}
	for _, c := range parserCases {
		f.Add([]byte(c))
	}
	var p, ref Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		full, wantErr := ref.Parse(data, "f.json", 3)
		for _, s := range testShapes {
			got, err := p.ParseShaped(data, "f.json", 3, s)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("ParseShaped(%q, %v) error = %v, want %v", data, s, err, wantErr)
			}
			if wantErr != nil {
				if got != nil {
					t.Fatalf("ParseShaped(%q, %v) = %#v with error %v", data, s, got, err)
				}
				continue
			}
			if want := applyShape(full, s); !reflect.DeepEqual(got, want) {
				t.Fatalf("ParseShaped(%q, %v) = %#v, want %#v", data, s, got, want)
			}
		}
	})
}

func TestParseShaped(t *testing.T) {
	for _, c := range shapeCases {
		var p, ref Parser
		full, wantErr := ref.Parse([]byte(c), "f.json", 0)
		for _, s := range testShapes {
			got, err := p.ParseShaped([]byte(c), "f.json", 0, s)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("ParseShaped(%s, %v) error = %v, want %v", c, s, err, wantErr)
				continue
			}
			if want := applyShape(full, s); wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("ParseShaped(%s, %v) = %#v, want %#v", c, s, got, want)
			}
		}
	}
	// The document of the first case with the fourth shape, spelled out.
	var p Parser
	got, err := p.ParseShaped([]byte(shapeCases[0]), "f.json", 0, testShapes[3])
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": json.Number("1"),
		"b": "",
		"c": []any{map[string]any{"x": json.Number("1"), "y": ""}},
		"d": map[string]any{"z": map[string]any{}, "r": json.Number("2")},
		"e": []any{json.Number("1"), "2", true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseShaped(%s) = %#v, want %#v", shapeCases[0], got, want)
	}
}

// applyShape is the definition of a Shape, on a value Parse built.
func applyShape(v any, s *Shape) any {
	if s == nil {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		if s.Stub {
			return map[string]any{}
		}
		m := make(map[string]any)
		for k, e := range v {
			child, named := s.Members[k]
			if !named && s.Only {
				continue
			}
			m[k] = applyShape(e, child)
		}
		return m
	case []any:
		if s.Stub {
			return []any{}
		}
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = applyShape(e, s.Elems)
		}
		return a
	case string:
		if s.Stub {
			return ""
		}
	}
	return v
}
