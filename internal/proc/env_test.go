package proc

import (
	"slices"
	"testing"
)

// TestEnviron: only the base variables and the named ones pass; a token
// in the environment does not.
func TestEnviron(t *testing.T) {
	environ := []string{"PATH=/bin", "CRYSTALLIZE_JUDGE_API_KEY=sk-secret", "GH_TOKEN=ghp_x", "HOME=/h", "GO_FAIL=vet", "NOEQUALS"}
	if got, want := Environ(environ, nil), []string{"PATH=/bin", "HOME=/h"}; !slices.Equal(got, want) {
		t.Errorf("Environ(no pass) = %q, want %q", got, want)
	}
	if got, want := Environ(environ, []string{"GO_FAIL"}), []string{"PATH=/bin", "HOME=/h", "GO_FAIL=vet"}; !slices.Equal(got, want) {
		t.Errorf("Environ(pass GO_FAIL) = %q, want %q", got, want)
	}
	if got := Environ(nil, nil); got == nil {
		t.Error("Environ(nil) = nil; an exec.Cmd would take the whole environment")
	}
}
