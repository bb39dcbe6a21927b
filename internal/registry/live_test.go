package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runtime"
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
	l.Start("run-1")
	l.End(&runtime.Result{Status: runtime.StatusPendingApproval, Pending: &runtime.Pending{Step: 2, Boundary: "merge"}})
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
	if err != nil || len(list) != 1 || list[0].SessionID != "run-1" || list[0].State != StatusPending || list[0].Name != "wf" {
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
	bad.End(&runtime.Result{Status: runtime.StatusCompleted})
	if len(errs) != 1 {
		t.Errorf("an unwritable registry reported %d errors, want 1", len(errs))
	}
}

func TestRunStatus(t *testing.T) {
	for run, want := range map[string]string{
		runtime.StatusCompleted: StatusCompleted, runtime.StatusFailed: StatusFailed, runtime.StatusCancelled: StatusCancelled,
		runtime.StatusRejected: StatusRejected, runtime.StatusPendingApproval: StatusPending, "unknown": StatusFailed,
	} {
		if got := RunStatus(run); got != want {
			t.Errorf("RunStatus(%q) = %q, want %q", run, got, want)
		}
	}
}
