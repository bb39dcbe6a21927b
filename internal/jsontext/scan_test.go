package jsontext

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{`{}`, ``},
		{` { } `, ``},
		{`{"a": 1, "b" : [1, {"c": 2}], "a":"x"}`, `a@6 b@15 a@34`},
		{`{"\u00e9\n": null, "plain": {"in": true}}`, "é\n@13 plain@28"},
		{`{"k": "v\"}"}`, `k@6`},
	} {
		var got []string
		end, err := Members([]byte(tc.src), strings.IndexByte(tc.src, '{'), func(name []byte, value int) error {
			got = append(got, fmt.Sprintf("%s@%d", name, value))
			return nil
		})
		if err != nil || end != strings.LastIndexByte(tc.src, '}')+1 || strings.Join(got, " ") != tc.want {
			t.Errorf("Members(%s) = %q, %d, %v, want %q, %d", tc.src, got, end, err, tc.want, strings.LastIndexByte(tc.src, '}')+1)
		}
	}
	// Text that is not JSON after all is an error, never a panic.
	for _, src := range []string{`{`, `{"a"`, `{"a":`, `{"a" 1}`, `{"a": 1`, `{"a": 1 "b": 2}`, `{1: 2}`, `{"a`} {
		if _, err := Members([]byte(src), 0, func([]byte, int) error { return nil }); err == nil {
			t.Errorf("Members(%s) = nil error, want one", src)
		}
	}
}

func TestPosition(t *testing.T) {
	src := "ab\ncd\n\nxé"
	for _, tc := range []struct{ off, line, col int }{
		{-1, 1, 1}, {0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {7, 4, 1}, {8, 4, 2}, {10, 4, 4}, {99, 4, 4},
	} {
		if line, col := Position(src, tc.off); line != tc.line || col != tc.col {
			t.Errorf("Position(%q, %d) = %d:%d, want %d:%d", src, tc.off, line, col, tc.line, tc.col)
		}
		if line, col := Position([]byte(src), tc.off); line != tc.line || col != tc.col {
			t.Errorf("Position([]byte(%q), %d) = %d:%d, want %d:%d", src, tc.off, line, col, tc.line, tc.col)
		}
	}
}

// FuzzMembers: on any text Members returns or errs, never panics; on an
// object encoding/json accepts it gives the names a decoder reads, in
// order, each with the start of the value that follows it.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"b":[{"c":"}"}]}`, `{"\u00e9":null, "a\"b" : "x"}`, `{"a":`, `{"a" 1}`, `{"\ud800":0}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		i := SkipSpace(src, 0)
		if i >= len(src) || src[i] != '{' {
			return
		}
		var names []string
		var values []int
		end, err := Members([]byte(src), i, func(name []byte, value int) error {
			names, values = append(names, string(name)), append(values, value)
			return nil
		})
		if !json.Valid([]byte(src)) {
			return
		}
		if err != nil || SkipSpace(src, end) != len(src) {
			t.Fatalf("Members(%q) = %d, %v on valid JSON", src, end, err)
		}
		for _, v := range values {
			if end, err := SkipValue(src, v); err != nil || !json.Valid([]byte(src[v:end])) {
				t.Fatalf("Members(%q) gave value %d, where no value starts", src, v)
			}
		}
		dec := json.NewDecoder(strings.NewReader(src))
		var want []string
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("Members(%q) names = %q, want %q", src, names, want)
		}
	})
}
