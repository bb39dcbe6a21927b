package redact

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPrivateKeyEscaped checks that a PEM private key is redacted whole,
// to its footer, however the text around it escapes its line breaks: raw,
// JSON-escaped once (\n) or twice (JSON inside a JSON string, \\n), with
// \r\n, with JSON's escaped slash (\/), and in the legacy encrypted form
// whose header lines hold ':' and ','. The short last line of the body is
// what a scan that stopped early left behind.
func TestPrivateKeyEscaped(t *testing.T) {
	const last = "Zq7w=="
	lines := []string{
		"-----BEGIN RSA PRIVATE KEY-----",
		"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
		"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
		last,
		"-----END RSA PRIVATE KEY-----",
	}
	raw := strings.Join(lines, "\n")
	encrypted := strings.Join(append([]string{lines[0], "Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,3F2A9C1D4E5B6A79", ""}, lines[1:]...), "\n")
	quote := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	}
	for name, text := range map[string]string{
		"raw":                     "key: " + raw + "\nnext",
		"escaped":                 quote(raw),
		"escaped twice":           quote(quote(raw)),
		"crlf escaped":            quote(strings.ReplaceAll(raw, "\n", "\r\n")),
		"slash escaped":           strings.ReplaceAll(quote(raw), "/", `\/`),
		"encrypted":               encrypted,
		"encrypted escaped twice": quote(quote(encrypted)),
	} {
		out, n := Text(text)
		if n == 0 || strings.Contains(out, last) || strings.Contains(out, "END RSA") || strings.Contains(out, "MIIE") {
			t.Errorf("%s: Text(key) = %q, want the key redacted to its footer", name, out)
		}
	}
}
