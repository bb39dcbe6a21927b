package redact

import (
	"errors"
	"testing"
)

// TestBytesRefusesBadKeyString: an object key that is not a valid JSON
// string (a bad escape, a raw control byte, a cut-off \u) is a syntax
// error naming what is wrong in the key and where, never a document
// redacted with the key garbled, nor an error about what follows it.
func TestBytesRefusesBadKeyString(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a\q":1}`:          `line 1, column 5: invalid character 'q' in string escape code`,
		"{\"a\x01\":1}":      `line 1, column 4: invalid character byte 0x01 in string literal`,
		`{"\u12":1}`:         `line 1, column 7: invalid character '"' in \u hexadecimal character escape`,
		`{"ok":{"t\x":"v"}}`: `line 1, column 11: invalid character 'x' in string escape code`,
	} {
		out, _, err := Bytes([]byte(doc))
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("Bytes(%q) error = %v; want the *SyntaxError %q", doc, err, want)
		}
		if out != nil {
			t.Errorf("Bytes(%q) wrote %q beside its error", doc, out)
		}
	}
}
