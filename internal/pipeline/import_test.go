package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTraceFileName(t *testing.T) {
	used := map[string]bool{}
	for _, tt := range []struct{ agent, id, want string }{
		{"claude", "s1", "claude-s1.json"},
		{"claude", "../etc/passwd", "claude-.._etc_passwd.json"},
		{"claude", "a/b", "claude-a_b.json"},
		{"claude", "a:b", "claude-a_b-2.json"}, // same cleaned name
		{"claude", "S1", "claude-S1-2.json"},   // same name but for case
	} {
		if got := TraceFileName(tt.agent, tt.id, used); got != tt.want {
			t.Errorf("TraceFileName(%q, %q) = %q, want %q", tt.agent, tt.id, got, tt.want)
		}
	}
	long := TraceFileName("codex", strings.Repeat("x", 300), used)
	if len(long) > maxNameBytes+len(".json") || !strings.HasSuffix(long, ".json") {
		t.Errorf("a long id gives %q (%d bytes)", long, len(long))
	}
}

// TestImport writes one file per trace of a directory, named after its
// id, all of them or none.
func TestImport(t *testing.T) {
	out := t.TempDir()
	im, err := Import(context.Background(), ImportOptions{From: "../../examples/traces", Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Traces) == 0 || len(im.Files) != len(im.Traces) {
		t.Fatalf("imported %d traces into %d files", len(im.Traces), len(im.Files))
	}
	sessions := 0
	for _, f := range im.Formats {
		sessions += f.Sessions
	}
	if sessions != len(im.Traces) {
		t.Errorf("formats count %d sessions, want %d", sessions, len(im.Traces))
	}
	for i, f := range im.Files {
		if f.TraceID != im.Traces[i].ID || filepath.Dir(f.Path) != out {
			t.Errorf("file %d = %+v, want trace %s in %s", i, f, im.Traces[i].ID, out)
		}
		if _, err := os.Stat(f.Path); err != nil {
			t.Error(err)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != len(im.Files) {
		t.Errorf("%d entries in the output directory, want %d", len(entries), len(im.Files))
	}
}
