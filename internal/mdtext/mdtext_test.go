package mdtext

import "testing"

func TestCodeSpan(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"go test ./...", "`go test ./...`"},
		{"a`b", "`` a`b ``"},
		{"`x`", "`` `x` ``"},
		{"a``b`", "``` a``b` ```"},
		{"", "``"},
	} {
		if got := CodeSpan(tt.in); got != tt.want {
			t.Errorf("CodeSpan(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
