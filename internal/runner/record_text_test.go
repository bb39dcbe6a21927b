package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
)

// TestRecordHostileText checks that what a run records never costs it its
// records: a tool output of multi-byte characters clipped at any byte
// (the log keeps 200 bytes of it) leaves a suspended run with a session.md
// that parses and a journal it resumes from; and a notification nested
// deeper than the session format holds still leaves a session.md that
// parses, saying why it holds no phases.
func TestRecordHostileText(t *testing.T) {
	const src = `# capabilities: notes.write · secrets: none
def wf(ctx, text):
    ctx.tool("notes.append", path = "x", text = text)
    ctx.approve("merge")
    return {"status": "ok"}
`
	b := runconfig.ToolBinding{Command: []string{os.Args[0], "{path}", "{text}"}, Env: map[string]string{"RUNTIME_TEST_HELPER": "argv"}, Capability: "notes.write"}
	for pad := 0; pad < 3; pad++ {
		w := workflow(t, src)
		o := opts(t, &runconfig.Config{Tools: map[string]runconfig.ToolBinding{"notes.append": b}, Grants: runconfig.Grants{Capabilities: []string{"notes.write"}}})
		res, err := Run(context.Background(), w, Params{"text": strings.Repeat("a", pad) + strings.Repeat("é", 150)}, o)
		var pending *PendingApprovalError
		if !errors.As(err, &pending) || res.Status != runstate.StatusPendingApproval {
			t.Fatalf("pad %d: status %s, err %v; want pending_approval", pad, res.Status, err)
		}
		data, err := os.ReadFile(filepath.Join(res.Dir, runstate.SessionFile))
		if err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		if _, err := session.Parse(runstate.SessionFile, data); err != nil {
			t.Errorf("pad %d: session.md does not parse: %v", pad, err)
		}
		if _, err := ReadJournal(o.StateDir, res.RunID); err != nil {
			t.Errorf("pad %d: the suspended run's journal: %v", pad, err)
		}
	}

	const deep = `# capabilities: none · secrets: none
def wf(ctx):
    ctx.notify(">" * 40 + " deep", complete = False)
    return {"status": "ok"}
`
	w := workflow(t, deep)
	o := opts(t, &runconfig.Config{})
	res, err := Run(context.Background(), w, Params{}, o)
	if err != nil || res.Status != runstate.StatusCompleted {
		t.Fatalf("deep notification: status %s, err %v; want completed", res.Status, err)
	}
	data, err := os.ReadFile(filepath.Join(res.Dir, runstate.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Parse(runstate.SessionFile, data); err != nil {
		t.Errorf("session.md does not parse: %v", err)
	}
	if !strings.Contains(string(data), "could not be written in the session format") {
		t.Errorf("session.md does not say why it holds no phases:\n%s", data)
	}
}
