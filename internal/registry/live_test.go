package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// TestLive: a run registers when it starts, a run suspended at a plain
// approval ends pending with the approval in the inbox, and a registry
// that cannot be written is reported, never fatal.
func TestLive(t *testing.T) {
	state := t.TempDir()
	var errs []error
	l := NewLive(state, TypeWorkflow, "wf", func(err error) { errs = append(errs, err) })
	l.End(nil) // never started: records nothing
	if _, err := os.Stat(Path(state)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a run that never started created the registry: %v", err)
	}
	l.As("claude", "claude-opus").Start("run-1")
	l.End(&runstate.Outcome{Status: runstate.StatusPendingApproval, Pending: &runstate.Pending{Step: 2, Boundary: "merge"}})
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, Path(state))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	list, err := List(ctx, db, true, Options{})
	if err != nil || len(list) != 1 || list[0].SessionID != "run-1" || list[0].State != StatusPending || list[0].Name != "wf" ||
		list[0].Agent != "claude" || list[0].Model != "claude-opus" {
		t.Fatalf("List = %+v, %v; want run-1 pending", list, err)
	}
	items, err := db.Items(ctx, "run-1", true)
	if err != nil || len(items) != 1 || items[0].Boundary != "merge" || items[0].Text != "Approve merge" || items[0].Step != 2 {
		t.Fatalf("inbox = %+v, %v; want the pending approval of merge at step 2", items, err)
	}

	blocked := filepath.Join(state, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := NewLive(blocked, TypeWorkflow, "wf", func(err error) { errs = append(errs, err) })
	bad.Start("run-2")
	bad.End(&runstate.Outcome{Status: runstate.StatusCompleted})
	if len(errs) != 1 {
		t.Errorf("an unwritable registry reported %d errors, want 1", len(errs))
	}
}

func TestRunStatus(t *testing.T) {
	for run, want := range map[string]string{
		runstate.StatusCompleted: StatusCompleted, runstate.StatusFailed: StatusFailed, runstate.StatusCancelled: StatusCancelled,
		runstate.StatusRejected: StatusRejected, runstate.StatusPendingApproval: StatusPending, "unknown": StatusFailed,
	} {
		if got := RunStatus(run); got != want {
			t.Errorf("RunStatus(%q) = %q, want %q", run, got, want)
		}
	}
}

// TestShow: --next and --prev walk the sessions from the one shown last,
// which Show remembers in the state directory; a registry that does not
// exist is not created by listing it.
func TestShow(t *testing.T) {
	state := t.TempDir()
	if list, err := ListDir(context.Background(), state, true); err != nil || len(list) != 0 {
		t.Fatalf("ListDir of no registry = %v, %v", list, err)
	}
	if _, err := os.Stat(Path(state)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("listing created the registry")
	}
	for _, id := range []string{"run-a", "run-b"} {
		l := NewLive(state, TypeWorkflow, id, func(err error) { t.Error(err) })
		l.Start(id)
		l.End(&runstate.Outcome{Status: runstate.StatusCompleted})
	}
	ctx := context.Background()
	db, ok, err := OpenExisting(ctx, state)
	if err != nil || !ok {
		t.Fatalf("OpenExisting = %v, %v", ok, err)
	}
	defer db.Close()
	var seen []string
	for range 3 {
		s, err := Show(ctx, db, state, "", 1, true)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, s.SessionID)
	}
	if seen[0] == seen[1] || seen[2] != seen[0] {
		t.Errorf("--next three times showed %v; want the two sessions in turn", seen)
	}
	s, err := Show(ctx, db, state, "run-b", 0, true)
	if err != nil || s.SessionID != "run-b" {
		t.Fatalf("Show(run-b) = %v, %v", s.SessionID, err)
	}
	last, _ := os.ReadFile(filepath.Join(state, LastShownFile))
	if string(last) != "run-b\n" {
		t.Errorf("%s = %q, want run-b", LastShownFile, last)
	}
}

// TestResumeAnswer checks that only the boundary the run waits at counts
// as approved or rejected.
func TestResumeAnswer(t *testing.T) {
	a := ResumeAnswer(&runstate.Pending{Boundary: "merge"}, []string{"deploy", "merge"}, []string{"tag"}, "", "ok")
	if !a.Approve || a.Reject || a.Reason != "ok" || a.String() != "approve" {
		t.Errorf("ResumeAnswer = %+v", a)
	}
	a = ResumeAnswer(nil, []string{"merge"}, nil, "JWT", "")
	if a.Approve || a.String() != "decide JWT" {
		t.Errorf("ResumeAnswer without a pending step = %+v", a)
	}
}

// TestLogTail reads the last lines of a run's session log, and names the
// log a run has not written yet.
func TestLogTail(t *testing.T) {
	state := t.TempDir()
	e := Entry{LiveSession: store.LiveSession{SessionID: "run-1", StateDir: state}}
	file, _, err := LogTail(e, 2)
	if !errors.Is(err, os.ErrNotExist) || file != filepath.Join(state, "runs", "run-1", runstate.SessionFile) {
		t.Fatalf("LogTail before the log = %s, %v", file, err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, lines, err := LogTail(e, 2); err != nil || len(lines) != 2 || lines[0] != "b" || lines[1] != "c" {
		t.Errorf("LogTail = %q, %v; want b, c", lines, err)
	}
	if _, lines, err := LogTail(e, 0); err != nil || len(lines) != 0 {
		t.Errorf("LogTail(0) = %q, %v; want none", lines, err)
	}
}

// TestAsKeepsOneWord: an agent's name comes from outside (an MCP client
// names itself) and is shown on a terminal: control characters are
// dropped, spaces joined, and the length bounded.
func TestAsKeepsOneWord(t *testing.T) {
	l := NewLive(t.TempDir(), TypeAgent, "w", nil).As("claude code\x1b[31m\n"+strings.Repeat("x", 80), "gpt\t5")
	if want := ("claude-code[31m-" + strings.Repeat("x", 80))[:maxWho]; l.agent != want {
		t.Errorf("agent = %q, want %q", l.agent, want)
	}
	if l.model != "gpt-5" {
		t.Errorf("model = %q, want gpt-5", l.model)
	}
}
