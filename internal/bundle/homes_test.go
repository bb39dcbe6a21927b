package bundle

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAnonymizeHomes(t *testing.T) {
	in := map[string]any{
		"repo":   "/Users/alice/projects/harn",
		"linux":  "cd /home/bob/src && make",
		"win":    `C:\Users\carol\work\app`,
		"escape": `C:\\Users\\dave\\app`,
		"keep":   "/srv/checkout/payments",
		"list":   []any{"/home/erin", "relative/path"},
	}
	want := map[string]any{
		"repo":   "~/projects/harn",
		"linux":  "cd ~/src && make",
		"win":    `~\work\app`,
		"escape": `~\\app`,
		"keep":   "/srv/checkout/payments",
		"list":   []any{"~", "relative/path"},
	}
	got, n := anonymizeHomes(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("anonymizeHomes (-want +got):\n%s", diff)
	}
	if n != 5 {
		t.Errorf("replacements = %d, want 5", n)
	}
}
