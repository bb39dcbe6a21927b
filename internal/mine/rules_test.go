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

// TestContainsRun checks the exact miner's containment: needle as a
// contiguous run of hay, anywhere in it.
func TestContainsRun(t *testing.T) {
	for _, tt := range []struct {
		hay, needle []int32
		want        bool
	}{
		{[]int32{1, 2, 3}, []int32{2, 3}, true},
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, true},
		{[]int32{1, 2, 3}, nil, true},
		{[]int32{1, 2, 3}, []int32{4, 5}, false},
		{[]int32{1, 2, 3}, []int32{1, 3}, false},
		{[]int32{1, 2}, []int32{1, 2, 3}, false},
		{[]int32{5, 1, 5, 1, 2}, []int32{1, 2}, true},
	} {
		if got := containsRun(tt.hay, tt.needle); got != tt.want {
			t.Errorf("containsRun(%v, %v) = %v, want %v", tt.hay, tt.needle, got, tt.want)
		}
	}
}
