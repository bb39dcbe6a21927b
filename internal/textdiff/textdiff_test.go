package textdiff

import "testing"

func TestUnified(t *testing.T) {
	for _, tt := range []struct {
		name, from, to string
		old, new       []byte
		want           string
	}{
		{"a line changed", "a/f", "b/f", []byte("x\ny\nz\n"), []byte("x\nY\nz\n"),
			"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\n+Y\n-y\n z\n"},
		{"a new file", "/dev/null", "b/f", nil, []byte("x\n"),
			"--- /dev/null\n+++ b/f\n@@ -0,0 +1,1 @@\n+x\n"},
		{"a removed file", "a/f", "/dev/null", []byte("x\ny\n"), nil,
			"--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"},
		{"a line added in the middle", "a/f", "b/f", []byte("x\nz\n"), []byte("x\ny\nz\n"),
			"--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n x\n+y\n z\n"},
	} {
		if got := Unified(tt.from, tt.to, tt.old, tt.new); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
