package candidate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestArgvPlaceholders(t *testing.T) {
	tests := []struct {
		elem string
		want []string
	}{
		{"get", nil},
		{"{b}", []string{"b"}},
		{"{module}@{version}", []string{"module", "version"}},
		{"--title={title}", []string{"title"}},
		{"{{b}}", nil},             // escaped braces are literal
		{"{{{b}}}", []string{"b"}}, // "{{", then {b}, then "}}"
		{"{a b}", nil},             // not an identifier: literal
		{"{x{y}", []string{"y"}},   // the first brace is literal
		{"{1x}", nil},              // identifiers do not start with a digit
		{"{for}", []string{"for"}}, // keywords are placeholders too
		{"{secret:GH_TOKEN}", []string{"secret:GH_TOKEN"}},
		{"{secret:}", nil},
		{"{", nil},
		{"}", nil},
		{"{}", nil},
		{"héllo {é}", nil},
	}
	for _, tt := range tests {
		if got := ArgvPlaceholders(tt.elem); !cmp.Equal(got, tt.want) {
			t.Errorf("ArgvPlaceholders(%q) = %q, want %q", tt.elem, got, tt.want)
		}
	}
}

func TestArgvProgram(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"git", "checkout"}, "git"},
		{[]string{"/usr/local/bin/go", "get"}, "go"},
		{[]string{"./scripts/release.sh"}, "release.sh"},
		{nil, ""},
		{[]string{""}, ""},
	}
	for _, tt := range tests {
		if got := ArgvProgram(tt.argv); got != tt.want {
			t.Errorf("ArgvProgram(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}
