package redact

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Fake credentials of the right shape, built so that no real key appears in
// the source.
var (
	fakeGitHub = "ghp_" + strings.Repeat("aB3", 12)
	fakeSlack  = "xoxb-1234567890-0987654321-" + strings.Repeat("Zq7", 8)
	fakeAWS    = "AKIA" + strings.Repeat("Q7X2", 4)
	fakeRandom = strings.Repeat("k9Qz", 3) + "Xw2Lm8Rt4Yp6Nv1Bc3Hd5Jf7Gs0Ae9Ku" // 44 bytes, no known prefix
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want any
		n    int
	}{
		{
			name: "plain values",
			in:   map[string]any{"name": "cargo.publish", "count": json.Number("3"), "ok": true, "none": nil},
			want: map[string]any{"name": "cargo.publish", "count": json.Number("3"), "ok": true, "none": nil},
		},
		{
			name: "sensitive keys at every level",
			in: map[string]any{
				"token": "abc",
				"parameters": map[string]any{
					"api_key": "plain-looking",
					"path":    "Cargo.toml",
					"nested":  map[string]any{"Authorization": "Basic dXNlcjpwYXNz", "PIN_password": json.Number("1234")},
				},
				"metadata": map[string]any{"Cookie": "session=1", "token_count": json.Number("1532"), "max_tokens": json.Number("4096")},
			},
			want: map[string]any{
				"token": Redacted,
				"parameters": map[string]any{
					"api_key": Redacted,
					"path":    "Cargo.toml",
					"nested":  map[string]any{"Authorization": Redacted, "PIN_password": Redacted},
				},
				"metadata": map[string]any{"Cookie": Redacted, "token_count": json.Number("1532"), "max_tokens": json.Number("4096")},
			},
			n: 5,
		},
		{
			name: "sensitive key over a structure, and empty values kept",
			in: map[string]any{
				"credentials": map[string]any{"user": "ci", "pass": "x"},
				"secrets":     []any{"CRATES_IO_TOKEN"},
				"password":    nil, "api_key": "", "use_token": true, "token": Redacted,
			},
			want: map[string]any{
				"credentials": Redacted,
				"secrets":     []any{"CRATES_IO_TOKEN"},
				"password":    nil, "api_key": "", "use_token": true, "token": Redacted,
			},
			n: 1,
		},
		{
			name: "arrays",
			in:   []any{fakeGitHub, "ok", map[string]any{"password": json.Number("123456")}, []any{fakeAWS}},
			want: []any{Redacted, "ok", map[string]any{"password": Redacted}, []any{Redacted}},
			n:    3,
		},
		{
			name: "secrets inside text keep the text",
			in: map[string]any{
				"command": "export GITHUB_TOKEN=" + fakeGitHub + " && cargo publish",
				"header":  "curl -H 'Authorization: Bearer " + fakeRandom + "' https://api.example.com",
				"note":    "posted with " + fakeSlack + " and " + fakeAWS,
			},
			want: map[string]any{
				"command": "export GITHUB_TOKEN=[redacted:github] && cargo publish",
				"header":  "curl -H 'Authorization: Bearer [redacted:bearer]' https://api.example.com",
				"note":    "posted with [redacted:slack] and [redacted:aws]",
			},
			n: 4,
		},
		{
			name: "keys holding secrets are renamed in key order",
			in:   map[string]any{fakeGitHub: "a", "ghp_" + strings.Repeat("Zz9", 12): "b", "x": "y"},
			want: map[string]any{"[redacted]~2": "a", Redacted: "b", "x": "y"},
			n:    2,
		},
		{
			name: "numbers as float64",
			in:   map[string]any{"secret": 1.5, "n": 2.0},
			want: map[string]any{"secret": Redacted, "n": 2.0},
			n:    1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := deepCopy(t, tc.in)
			got, n := Value(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Value mismatch (-want +got):\n%s", diff)
			}
			if n != tc.n {
				t.Errorf("Value: n = %d, want %d", n, tc.n)
			}
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("Value modified its input (-before +after):\n%s", diff)
			}
			again, n2 := Value(got)
			if diff := cmp.Diff(got, again); diff != "" || n2 != 0 {
				t.Errorf("Value is not idempotent: n = %d (-once +twice):\n%s", n2, diff)
			}
		})
	}
}

func deepCopy(t *testing.T, v any) any {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = deepCopy(t, e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = deepCopy(t, e)
		}
		return s
	}
	return v
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		n              int
	}{
		{"scalar", `  "hello"  `, `"hello"`, 0},
		{"numbers kept as written", `[1, -0.5e+10, 1E3, 0]`, `[1,-0.5e+10,1E3,0]`, 0},
		{"white space anywhere JSON allows it", "{ \"a\" : [ 1 , { } ] ,\n\t\"b\" : { \"c\" : true } }", `{"a":[1,{}],"b":{"c":true}}`, 0},
		{"keys sorted, repeated key keeps the last", `{"b":1,"a":{"z":[],"y":{}},"b":2}`, `{"a":{"y":{},"z":[]},"b":2}`, 0},
		{"html not escaped", `{"cmd":"a && b > c <d>"}`, `{"cmd":"a && b > c <d>"}`, 0},
		{"escapes canonical", `"\u0041\/\t\u2028\ud83d\ude00\ud800"`, "\"A/\\t\\u2028\U0001F600\uFFFD\"", 0},
		{"sensitive keys", `{"parameters":{"api_key":"x1","token_count":7},"metadata":{"password":{"a":1},"token":null}}`,
			`{"metadata":{"password":"[redacted]","token":null},"parameters":{"api_key":"[redacted]","token_count":7}}`, 2},
		{"secrets in text", `{"cmd":"GITHUB_TOKEN=` + fakeGitHub + ` make"}`, `{"cmd":"GITHUB_TOKEN=[redacted:github] make"}`, 1},
		{"whole-value secret", `["` + fakeAWS + `"]`, `["[redacted]"]`, 1},
		{"repeated key: only the kept value counts", `{"a":"` + fakeAWS + `","a":"ok"}`, `{"a":"ok"}`, 0},
		{"secret in a key takes the slow path", `{"` + fakeGitHub + `":1,"b":"` + fakeAWS + `"}`, `{"[redacted]":1,"b":"[redacted]"}`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n, err := Bytes([]byte(tc.in))
			if err != nil {
				t.Fatalf("Bytes: %v", err)
			}
			if string(got) != tc.want || n != tc.n {
				t.Errorf("Bytes(%s) = %s, %d, want %s, %d", tc.in, got, n, tc.want, tc.n)
			}
			slow, sn, err := slowBytes([]byte(tc.in))
			if err != nil || string(slow) != string(got) || sn != n {
				t.Errorf("slowBytes(%s) = %s, %d, %v; Bytes gave %s, %d", tc.in, slow, sn, err, got, n)
			}
		})
	}
}

func TestBytesErrors(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{``, "line 1, column 1: unexpected end of JSON input"},
		{`{"a":1,}`, "line 1, column 8: invalid character '}' looking for beginning of object key string"},
		{"{\n  \"a\": tru\n}", "line 2, column 11: invalid character byte 0x0a in literal true"},
		{`[1 2]`, "line 1, column 4: invalid character '2' after array element"},
		{`{"a" 1}`, "line 1, column 6: invalid character '1' after object key"},
		{`"abc`, "line 1, column 5: unexpected end of JSON input"},
		{`"a\qb"`, "line 1, column 4: invalid character 'q' in string escape code"},
		{"\"a\x01\"", "line 1, column 3: invalid character byte 0x01 in string literal"},
		{`01`, "line 1, column 2: invalid character '1' after top-level value"},
		{`-`, "line 1, column 2: unexpected end of JSON input"},
		{`1.e5`, "line 1, column 3: invalid character 'e' in numeric literal"},
		{`{"password":"` + fakeGitHub + `" x`, "line 1, column 56: invalid character 'x' after object key:value pair"},
		{strings.Repeat("[", maxDepth+1), "line 1, column 10001: exceeded max depth"},
		// Objects are bounded and closed as arrays are: a document cut
		// after a member is no document.
		{strings.Repeat(`{"a":`, maxDepth+1), "line 1, column 50001: exceeded max depth"},
		{`{"a":1`, "line 1, column 7: unexpected end of JSON input"},
	} {
		_, _, err := Bytes([]byte(tc.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Bytes(%.40q): error %v, want a *SyntaxError", tc.in, err)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Bytes(%.40q): error %q, want %q", tc.in, err, tc.want)
		}
		if strings.Contains(err.Error(), fakeGitHub[4:]) {
			t.Errorf("Bytes(%.40q): error shows the secret", tc.in)
		}
		if _, _, serr := slowBytes([]byte(tc.in)); serr == nil {
			t.Errorf("slowBytes(%.40q) accepts what Bytes rejects", tc.in)
		}
	}
}
