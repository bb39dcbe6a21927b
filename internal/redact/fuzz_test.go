package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzSecret checks that redacting a string removes every secret Secret
// finds in it, and that redaction is a fixed point.
func FuzzSecret(f *testing.F) {
	for _, c := range readCorpus(f) {
		f.Add(c.value)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, ok := Secret(s)
		r, n := redactString(s)
		if ok != (n > 0) {
			t.Fatalf("Secret = %v but redactString made %d replacements", ok, n)
		}
		if kind, ok := Secret(r); ok {
			t.Fatalf("redacted string still holds a secret of kind %q", kind)
		}
		if r2, n2 := redactString(r); r2 != r || n2 != 0 {
			t.Fatalf("redacting twice made %d more replacements", n2)
		}
		if len(Scan([]byte(s))) != n && n != 1 {
			t.Fatalf("Scan found %d secrets, redactString replaced %d", len(Scan([]byte(s))), n)
		}
	})
}

// FuzzBytes checks that Bytes does not panic, agrees with the encoding/json
// path, leaves no string that Secret flags, and is a fixed point.
func FuzzBytes(f *testing.F) {
	for _, c := range readCorpus(f) {
		v, _ := json.Marshal(c.value)
		f.Add([]byte(fmt.Sprintf(`{"parameters":{"command":%s,"token":%s},"metadata":[%s]}`, v, v, v)))
	}
	f.Add(realisticTrace(4 << 10))
	f.Add([]byte(`{"b":1,"a":2,"b":{"x":"\u00e9\ud800"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, n, err := Bytes(b)
		slow, sn, serr := slowBytes(b)
		if (err == nil) != (serr == nil) {
			t.Fatalf("Bytes error %v, encoding/json path error %v", err, serr)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(out, slow) || n != sn {
			t.Fatalf("Bytes = %.200s, %d; encoding/json path = %.200s, %d", out, n, slow, sn)
		}
		if !json.Valid(out) {
			t.Fatalf("Bytes wrote invalid JSON: %.200s", out)
		}
		out2, n2, err := Bytes(out)
		if err != nil || !bytes.Equal(out2, out) || n2 != 0 {
			t.Fatalf("Bytes(Bytes(b)) = %.200s, %d, %v; want %.200s, 0", out2, n2, err, out)
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatal(err)
		}
		walkStrings(v, func(s string) {
			if kind, ok := Secret(s); ok {
				t.Fatalf("Bytes output holds a secret of kind %q", kind)
			}
		})
	})
}

func walkStrings(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			walkStrings(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			walkStrings(e, fn)
		}
	}
}
