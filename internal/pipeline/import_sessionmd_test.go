package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sessionlog "github.com/crystallize-dev/crystallize/internal/session"
)

// realAgentsDir holds session logs people published, as their agents
// wrote them; they are read in place, never copied into the project.
const realAgentsDir = "../../../shared/fixtures/real-agents"

// homePath is a user's home directory that redaction should have turned
// into ~.
var homePath = regexp.MustCompile(`(/home/|/Users/|-home-|-Users-)[A-Za-z]`)

// TestConformanceImportSessionMD imports every real agent session as a
// session log and holds each to what session lint, resume and learn
// require: it parses without a problem, has a phase per cycle of work
// with every action of its trace as a tool call, links the subagents it
// has logs of, resumes, and shows no home directory.
func TestConformanceImportSessionMD(t *testing.T) {
	if _, err := os.Stat(realAgentsDir); err != nil {
		if os.Getenv("CRYSTALLIZE_REQUIRE_CONFORMANCE") == "1" {
			t.Fatalf("real agent logs %s are required (CRYSTALLIZE_REQUIRE_CONFORMANCE=1): %v", realAgentsDir, err)
		}
		t.Skipf("real agent logs %s not found; set CRYSTALLIZE_REQUIRE_CONFORMANCE=1 to require them", realAgentsDir)
	}
	out := t.TempDir()
	im, err := Import(context.Background(), ImportOptions{From: realAgentsDir, Out: out, Format: FormatSessionMD})
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Files) < 30 {
		t.Fatalf("imported %d sessions, want the 30 and more of the corpus", len(im.Files))
	}
	nested := 0
	for i, f := range im.Files {
		if filepath.Ext(f.Path) != ".md" {
			t.Errorf("%s: want a .md session log", f.Path)
			continue
		}
		problems, err := sessionlog.Lint(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("session lint %s (from %s): %v", filepath.Base(f.Path), f.Source, p)
		}
		if len(problems) > 0 {
			continue
		}
		s, err := sessionlog.Open(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		for _, p := range s.Phases {
			for _, b := range p.Blocks {
				if tc, ok := b.(sessionlog.ToolCalls); ok {
					calls += len(tc.Calls)
				}
			}
		}
		if want := len(im.Traces[i].Actions); calls != want {
			t.Errorf("%s: %d tool calls, want one per action of its trace (%d)", filepath.Base(f.Path), calls, want)
		}
		if s.Title == "" || s.Meta.Status != "paused" || len(s.Meta.Participants) != 1 {
			t.Errorf("%s: title %q, status %q, participants %q", filepath.Base(f.Path), s.Title, s.Meta.Status, s.Meta.Participants)
		}
		pack, err := sessionlog.Resume(s, sessionlog.ResumeOptions{Load: sessionlog.DirLoader(out)})
		if err != nil {
			t.Errorf("resume %s: %v", filepath.Base(f.Path), err)
			continue
		}
		for _, sa := range pack.Subagents {
			nested++
			if sa.LoadError != "" || sa.Status != "paused" {
				t.Errorf("%s: subagent [[%s]] does not resolve to its log: %+v", filepath.Base(f.Path), sa.Session, sa)
			}
		}
		data, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if loc := homePath.FindIndex(data); loc != nil {
			t.Errorf("%s: a home directory is left at byte %d", filepath.Base(f.Path), loc[0])
		}
		if strings.Contains(string(data), "sk-ant-") {
			t.Errorf("%s: an API key is left", filepath.Base(f.Path))
		}
	}
	if nested == 0 {
		t.Errorf("no session links a subagent log; the corpus has Claude Code subagents")
	}
}
