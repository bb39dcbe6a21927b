package runrecord

import (
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/session"
)

// TestSessionLooseFallsBack checks that a phase restored as lines, and a
// phase whose lines its blocks do not render, make session.md be read
// from the markdown, and that a block the format refuses does too.
func TestSessionLooseFallsBack(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var p Phase
	p.Title = "Step 1 · noop"
	p.ToolCall(session.ToolCall{Tool: "noop", Result: "ok"})
	p.Paragraph("Receipt `r-01`: arguments sha256:a, result sha256:b.")
	r := &Run{
		ID: "run-test", Workflow: "wf", File: "wf.star", SHA256: "abc", Status: "completed",
		Started: start, Ended: start, Steps: 1, ToolCalls: 1, Phases: []Phase{p},
		ResumePoint: session.NoResumePoint,
	}
	if _, ok := r.FromBlocks(); !ok {
		t.Fatal("a plain run's log was not built from blocks")
	}
	r.Phases = append(r.Phases, Phase{Title: "Restored", Lines: []string{"", "From a journal."}, Loose: true})
	if _, ok := r.FromBlocks(); ok {
		t.Fatal("built a log from a phase without blocks")
	}
	r.Phases[len(r.Phases)-1] = Phase{Title: "Drifted", Lines: []string{"", "One thing."}, Blocks: []session.Block{session.Prose{Text: "Another."}}}
	if _, ok := r.FromBlocks(); ok {
		t.Fatal("built a log from blocks that are not its lines")
	}
	p = Phase{Title: "Empty line"}
	p.Callout("info", "", "")
	r.Phases[len(r.Phases)-1] = p
	if _, ok := r.FromBlocks(); ok {
		t.Fatalf("built a log whose callout line %q is not what the format writes", "> ")
	}
	md, err := r.Session()
	if err != nil {
		t.Fatal(err)
	}
	if parsed, _ := r.FromMarkdown(); string(md) != string(parsed) || !strings.Contains(string(md), "## Empty line\n\n> [!info]\n>\n") {
		t.Fatalf("Session() = %s, want the log read from the markdown", md)
	}
}
