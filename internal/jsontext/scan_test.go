package jsontext

import (
	"fmt"
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
