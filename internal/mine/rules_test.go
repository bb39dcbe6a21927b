package mine

import "testing"

// TestPathKey checks how a flow binding's JSON path names an object
// member: an identifier as ".name", anything else quoted in brackets,
// with the edges of each letter and digit range.
func TestPathKey(t *testing.T) {
	for k, want := range map[string]string{
		"name": ".name", "Name": ".Name", "a": ".a", "z": ".z", "A": ".A", "Z": ".Z",
		"_x": "._x", "a0": ".a0", "a9": ".a9",
		"": `[""]`, "0a": `["0a"]`, "odd key": `["odd key"]`, "a-b": `["a-b"]`,
		"@": `["@"]`, "[": `["["]`, "`": "[\"`\"]", "{": `["{"]`, "a/": `["a/"]`, "a:": `["a:"]`,
	} {
		if got := pathKey(k); got != want {
			t.Errorf("pathKey(%q) = %s, want %s", k, got, want)
		}
	}
}
