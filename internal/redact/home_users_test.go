package redact

import "testing"

// TestUsersCountsStrings: Users returns the number of strings it changed,
// each counted once whether its home directory, its bare user names or
// both were replaced, and none it left alone.
func TestUsersCountsStrings(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []any
		want []any
		n    int
	}{
		{"a path and a name in one string", []any{"/home/alice/src by alice"}, []any{"~/src by ~"}, 1},
		{"names only", []any{"/home/alice", "whoami: alice", "ls: alice staff", "nothing here"},
			[]any{"~", "whoami: ~", "ls: ~ staff", "nothing here"}, 3},
		{"unchanged strings count nothing", []any{"/Users/bob", "a", "b", "c"}, []any{"~", "a", "b", "c"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := Users(tc.in)
			for i := range tc.want {
				if got.([]any)[i] != tc.want[i] {
					t.Errorf("Users: [%d] = %q, want %q", i, got.([]any)[i], tc.want[i])
				}
			}
			if n != tc.n {
				t.Errorf("Users: %d strings changed, want %d", n, tc.n)
			}
		})
	}
}
