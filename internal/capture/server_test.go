package capture

import (
	"errors"
	"os"
	"testing"
)

// TestNewHTTPUpstream: only absolute http and https URLs with a host are
// relayed, and the session is named by the host.
func TestNewHTTPUpstream(t *testing.T) {
	for _, tc := range []struct{ endpoint, name string }{
		{"http://127.0.0.1:8931/mcp", "127.0.0.1"},
		{"https://notes.example.com/mcp", "notes.example.com"},
	} {
		up, name, err := NewHTTPUpstream(tc.endpoint, nil)
		if err != nil || up.Endpoint != tc.endpoint || name != tc.name {
			t.Errorf("NewHTTPUpstream(%q) = %v, %q, %v; want endpoint kept, %q", tc.endpoint, up, name, err, tc.name)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "127.0.0.1:8931", "http://", "/mcp", "http://[::1"} {
		if _, _, err := NewHTTPUpstream(bad, nil); !errors.Is(err, ErrNotHTTPURL) {
			t.Errorf("NewHTTPUpstream(%q) error = %v, want ErrNotHTTPURL", bad, err)
		}
	}
}

// TestNewCommand: the server is started as given, its stderr passed
// through, and the session named by the command's base name.
func TestNewCommand(t *testing.T) {
	tr, name := NewCommand([]string{"/usr/local/bin/notes-server", "--root", "/tmp"}, os.Stderr, nil)
	ct, ok := tr.(*Command)
	if !ok {
		t.Fatalf("NewCommand returned %T, want *Command", tr)
	}
	if name != "notes-server" {
		t.Errorf("name = %q, want notes-server", name)
	}
	if got := ct.Cmd.Args; len(got) != 3 || got[0] != "/usr/local/bin/notes-server" || got[2] != "/tmp" {
		t.Errorf("args = %q", got)
	}
	if ct.Cmd.Stderr != os.Stderr {
		t.Error("the server's stderr is not passed through")
	}
}
