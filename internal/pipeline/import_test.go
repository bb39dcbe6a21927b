package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
	"github.com/google/go-cmp/cmp"
)

func TestTraceFileName(t *testing.T) {
	used := map[string]bool{}
	hash := func(s string) string { return strings.TrimPrefix(candidate.SkillID(s, ""), "skill_")[:12] }
	for _, tt := range []struct{ agent, id, want string }{
		{"claude", "s1", "claude-s1.json"},
		{"claude", "../etc/passwd", "claude-etc-passwd-" + hash("claude-../etc/passwd") + ".json"},
		{"claude", "a/b", "claude-a-b-" + hash("claude-a/b") + ".json"},
		{"claude", "S1", "claude-S1-2.json"}, // same name but for case
		{"codex", "", "codex-.json"},
		{"", "con", "con-" + hash("-con") + ".json"},
	} {
		if got := TraceFileName(tt.agent, tt.id, used); got != tt.want {
			t.Errorf("TraceFileName(%q, %q) = %q, want %q", tt.agent, tt.id, got, tt.want)
		}
	}
	long := TraceFileName("codex", strings.Repeat("x", 300), used)
	if len(long) > 64 || !strings.HasSuffix(long, ".json") {
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
	sum := im.Summary("from", out)
	if sum.From != "from" || sum.Out != out || sum.Traces != len(im.Traces) || len(sum.Files) != len(im.Files) {
		t.Errorf("Summary = %+v, want the import's counts", sum)
	}
	if sum.SkippedSession == nil || sum.SkippedInvalid == nil {
		t.Errorf("Summary lists nil for nothing skipped (%v, %v); JSON would say null", sum.SkippedSession, sum.SkippedInvalid)
	}
}

// The summaries of both imports list what they left out in one shape.
func TestSummarySkipped(t *testing.T) {
	sessions := []source.SkippedSession{{Path: "a.jsonl", Line: 3, Format: "codex", ID: "s1", Reason: "no_tool_calls", Message: "m"}}
	files := []source.Skipped{{Path: "b.json", Errors: []string{"b.json: $.actions: missing"}}}
	im := &Imported{SkippedSessions: sessions, Skipped: files}
	st := SummarizeStoreImport(&tracestore.ImportResult{Added: 2, Known: 1, SkippedSessions: sessions, Skipped: files}, "from", "st/state.db")
	wantS := []SummarySkipped{{Path: "a.jsonl", Line: 3, Format: "codex", ID: "s1", Reason: "no_tool_calls", Message: "m"}}
	wantF := []SummaryInvalidFile{{Path: "b.json", Errors: []string{"b.json: $.actions: missing"}}}
	for name, got := range map[string][2]any{
		"Imported.Summary":     {im.Summary("from", "out").SkippedSession, im.Summary("from", "out").SkippedInvalid},
		"SummarizeStoreImport": {st.SkippedSession, st.SkippedInvalid},
	} {
		if diff := cmp.Diff([2]any{wantS, wantF}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if st.Added != 2 || st.AlreadyStored != 1 || st.Store != "st/state.db" || st.Formats == nil {
		t.Errorf("SummarizeStoreImport = %+v", st)
	}
}

// TestImportRefusesOut: no output directory, or one inside the directory
// read (named directly, through "..", or through a symlink to it), is an
// error naming both, and nothing is written.
func TestImportRefusesOut(t *testing.T) {
	ctx := context.Background()
	if _, err := Import(ctx, ImportOptions{From: "../../examples/traces"}); err == nil || !strings.Contains(err.Error(), "no output directory") {
		t.Errorf("no Out: err = %v, want one saying there is no output directory", err)
	}
	tmp := t.TempDir()
	from := filepath.Join(tmp, "logs")
	if err := os.MkdirAll(from, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../examples/traces/" + firstTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from, "t.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(from, link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{from, filepath.Join(from, "traces"), filepath.Join(tmp, "x", "..", "logs", "out"), filepath.Join(link, "out")} {
		_, err := Import(ctx, ImportOptions{From: from, Out: out})
		if err == nil || !strings.Contains(err.Error(), "output directory "+out+" is inside "+from) {
			t.Errorf("Out %s: err = %v, want it named inside %s", out, err, from)
		}
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries after the refused imports, want its one trace", from, len(entries))
	}
	// Beside it is fine.
	if _, err := Import(ctx, ImportOptions{From: from, Out: filepath.Join(tmp, "logs-out")}); err != nil {
		t.Errorf("Out beside From: %v", err)
	}
}

func firstTrace(t *testing.T) string {
	t.Helper()
	entries, err := os.ReadDir("../../examples/traces")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			return e.Name()
		}
	}
	t.Fatal("no trace in ../../examples/traces")
	return ""
}
