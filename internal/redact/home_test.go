package redact

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHomeDirs(t *testing.T) {
	tests := []struct {
		in, want string
		n        int
	}{
		{"/home/alice/src/repo", "~/src/repo", 1},
		{"/var/home/alice/src", "~/src", 1},
		{"cd /Users/alice/shop && make", "cd ~/shop && make", 1},
		{`C:\Users\alice\work\app`, `~\work\app`, 1},
		{`C:/Users/alice/work`, `~/work`, 1},
		{`"C:\\Users\\alice\\app"`, `"~\\app"`, 1},
		// Claude Code's project directories: the working directory with
		// its separators turned into "-".
		{"-home-alice-src-repo/5b0c.jsonl:3", "~-src-repo/5b0c.jsonl:3", 1},
		{"projects/-Users-alice/5b0c.jsonl", "projects/~/5b0c.jsonl", 1},
		{`C--Users-alice-src`, `~-src`, 1},
		{"/home/alice/a /home/bob/b", "~/a ~/b", 2},
		{"file:///Users/alice/x", "file://~/x", 1},
		{"cd /c/Users/alice/app && ls /mnt/d/Users/alice", "cd ~/app && ls ~", 2},
		{"Read(//c/Users/...)", "Read(/~)", 1},
		{"(see /home/alice), /Users/alice: no such file", "(see ~), ~: no such file", 2},
		{"PATH=/home/alice/bin:/home/alice/go/bin", "PATH=~/bin:~/go/bin", 2},
		{`{"cwd":"/home/alice"}`, `{"cwd":"~"}`, 1},
		// Nothing names a user here.
		{"https://example.com/home/about", "https://example.com/home/about", 0},
		{"/srv/www/home/alice", "/srv/www/home/alice", 0},
		{"/root/.cache", "/root/.cache", 0},
		{"~/src/repo", "~/src/repo", 0},
		{"/srv/checkout/home", "/srv/checkout/home", 0},
		{"make --home-dir=x", "make --home-dir=x", 0},
		{"Users and homes", "Users and homes", 0},
	}
	for _, tt := range tests {
		got, n := HomeDirs(tt.in)
		if got != tt.want || n != tt.n {
			t.Errorf("HomeDirs(%q) = %q, %d, want %q, %d", tt.in, got, n, tt.want, tt.n)
		}
		// A fixed point: what was replaced names nobody any more.
		if again, k := HomeDirs(got); again != got || k != 0 {
			t.Errorf("HomeDirs(%q) = %q, %d, want it unchanged", got, again, k)
		}
	}
}

func TestHomes(t *testing.T) {
	in := map[string]any{
		"repo":            "/Users/alice/projects/harn",
		"keep":            "/srv/checkout/payments",
		"list":            []any{"/home/erin", "relative/path"},
		"/home/alice/key": "object keys name fields and stay",
	}
	want := map[string]any{
		"repo":            "~/projects/harn",
		"keep":            "/srv/checkout/payments",
		"list":            []any{"~", "relative/path"},
		"/home/alice/key": "object keys name fields and stay",
	}
	got, n := Homes(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Homes (-want +got):\n%s", diff)
	}
	if n != 2 {
		t.Errorf("Homes: %d strings changed, want 2", n)
	}
}

func TestUsers(t *testing.T) {
	in := map[string]any{
		"cwd":    "/Users/alice/shop",
		"source": "-home-carol-api/s.jsonl",
		"ls":     "drwx------  9 alice  staff  288 .\n-rw-r--r--  1 carol  staff  10 x",
		"author": "Author: alice <alice@example.com>",
		// Words that only contain a name, and generic accounts, stay.
		"keep": "malice aliceful carolina /home/dev/x npm run dev",
		"list": []any{"whoami: alice", 3},
	}
	want := map[string]any{
		"cwd":    "~/shop",
		"source": "~-api/s.jsonl",
		"ls":     "drwx------  9 ~  staff  288 .\n-rw-r--r--  1 ~  staff  10 x",
		"author": "Author: ~ <~@example.com>",
		"keep":   "malice aliceful carolina ~/x npm run dev",
		"list":   []any{"whoami: ~", 3},
	}
	got, n := Users(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Users (-want +got):\n%s", diff)
	}
	if n != 6 {
		t.Errorf("Users: %d strings changed, want 6", n)
	}
}
