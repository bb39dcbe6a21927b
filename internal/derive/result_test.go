package derive

import (
	"encoding/json"
	"testing"
)

// TestDerivationJSON pins the --json forms of synth derive: keys in
// sorted order (encoding/json writes a struct's fields in their order),
// a null expression when none is found.
func TestDerivationJSON(t *testing.T) {
	examples := []map[string]string{
		{"module": "text", "version": "v1", "branch": "deps/text-v1", "ticket": "OPS-17"},
		{"module": "cobra", "version": "v2", "branch": "deps/cobra-v2", "ticket": "OPS-4"},
		{"module": "starlark", "version": "v3", "branch": "deps/starlark-v3", "ticket": "OPS-99"},
	}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{Derive(examples, "branch"), `{"expression":"\"deps/\" + module + \"-\" + version","found":true,"target":"branch"}`},
		{Derive(examples, "ticket"), `{"expression":null,"found":false,"target":"ticket"}`},
		{DeriveAll(examples), `{"derived":{"branch":"\"deps/\" + module + \"-\" + version"},"kept":["module","ticket","version"]}`},
	} {
		got, err := json.Marshal(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("json.Marshal(%+v) = %s, want %s", tc.v, got, tc.want)
		}
	}
}
