package redact

import (
	"errors"
	"strings"
	"testing"
)

// TestBytesUnterminated: a document cut anywhere inside a container is a
// syntax error at its end, never a shorter document: Bytes must not write
// a fixture from half a trace.
func TestBytesUnterminated(t *testing.T) {
	for _, in := range []string{`[1`, `[1,`, `["a"`, `[[]`, `{"a":[1`, `{"a":1,`, `{"a"`, `{"a":`, `{`, `[`, `tr`, `{"a":"b"`} {
		out, _, err := Bytes([]byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Bytes(%s) = %s, %v; want a *SyntaxError", in, out, err)
			continue
		}
		if se.Msg != "unexpected end of JSON input" || se.Offset != len(in) {
			t.Errorf("Bytes(%s): %v at %d, want the end of input at %d", in, err, se.Offset, len(in))
		}
	}
}

// TestBytesInvalidValue: a byte that starts no JSON value is a syntax
// error where it stands, at the top level, in an array or in an object.
func TestBytesInvalidValue(t *testing.T) {
	for _, tc := range []struct {
		in  string
		off int
	}{
		{`x`, 0},
		{`[1,x]`, 3},
		{`{"a":'b'}`, 5},
	} {
		_, _, err := Bytes([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tc.off || !strings.Contains(se.Msg, "looking for beginning of value") {
			t.Errorf("Bytes(%s) error = %v, want an invalid character at %d", tc.in, err, tc.off)
		}
	}
}
