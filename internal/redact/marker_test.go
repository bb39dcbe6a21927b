package redact

import (
	"encoding/json"
	"testing"
)

// A redaction marker under a sensitive key is kept, so that a document
// redacted once (here or by the runtime's scrubber) keeps the name of what
// was there and redacting it again changes nothing. Every path (Bytes,
// Value, Copy) must agree on it, or the fixed point breaks.
func TestMarkerUnderSensitiveKeyIsKept(t *testing.T) {
	for _, marker := range []string{Redacted, "[redacted:github]", "[redacted:0]", `[redacted:a"b]`} {
		doc := map[string]any{"token": marker, "nested": map[string]any{"password": marker}}
		in, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		out, n, err := Bytes(in)
		if err != nil || string(out) != string(in) || n != 0 {
			t.Errorf("Bytes(%s) = %s, %d, %v; want it unchanged", in, out, n, err)
		}
		if v, n := Value(doc); n != 0 || v.(map[string]any)["token"] != marker {
			t.Errorf("Value kept %v of %q, %d replacements; want it unchanged", v, marker, n)
		}
		type record struct{ Token string }
		if c, n, err := Copy(&record{Token: marker}); err != nil || c.Token != marker || n != 0 {
			t.Errorf("Copy of %q = %+v, %d, %v; want it unchanged", marker, c, n, err)
		}
	}
}

// A string shaped like a marker whose name is itself a credential is no
// marker: under a sensitive key it is replaced like any other value, or
// dressing a token as "[redacted:<token>]" would carry it through.
func TestMarkerHoldingSecretIsRedacted(t *testing.T) {
	fake := "[redacted:" + fakeGitHub + "]"
	if _, ok := Secret(fake); !ok {
		t.Fatalf("Secret(%q) finds nothing; the test needs a marker that holds a secret", fake)
	}
	in := `{"token":"` + fake + `"}`
	if out, n, err := Bytes([]byte(in)); err != nil || string(out) != `{"token":"[redacted]"}` || n != 1 {
		t.Errorf("Bytes(%s) = %s, %d, %v; want the value redacted", in, out, n, err)
	}
	if v, n := Value(map[string]any{"token": fake}); n != 1 || v.(map[string]any)["token"] != Redacted {
		t.Errorf("Value = %v, %d; want the value redacted", v, n)
	}
	type record struct {
		Token string
		Any   any `json:"api_key"`
	}
	c, n, err := Copy(&record{Token: fake, Any: fake})
	if err != nil || c.Token != Redacted || c.Any != Redacted || n != 2 {
		t.Errorf("Copy = %+v, %d, %v; want both values redacted", c, n, err)
	}
}

// TestNotAMarkerUnderSensitiveKey: only a whole marker is kept under a
// sensitive key; a value that has only its start or only its end, or an
// empty or blank name, is a value like any other.
func TestNotAMarkerUnderSensitiveKey(t *testing.T) {
	for _, v := range []string{"[redacted:github", "hunter2]", "[redacted:]", "[redacted: x]", "[redacted:a]b]", "x[redacted:github]"} {
		if got, n := Value(map[string]any{"token": v}); got.(map[string]any)["token"] != Redacted || n != 1 {
			t.Errorf("Value of token %q = %v, %d; want it redacted", v, got, n)
		}
		in, _ := json.Marshal(map[string]any{"token": v})
		if out, n, err := Bytes(in); err != nil || string(out) != `{"token":"[redacted]"}` || n != 1 {
			t.Errorf("Bytes(%s) = %s, %d, %v; want it redacted", in, out, n, err)
		}
	}
}
