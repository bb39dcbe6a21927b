package redact

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The candidate and runtime encoders write strings through
// AppendJSONString and compare files byte for byte, so it must agree with
// encoding/json (HTML escaping off) on every class of byte.
func TestAppendJSONString(t *testing.T) {
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
		got := string(AppendJSONString([]byte("pre:"), tt.in))
		if got != "pre:"+tt.want {
			t.Errorf("AppendJSONString(%q) = %s, want pre:%s", tt.in, got, tt.want)
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
