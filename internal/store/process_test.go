package store

import (
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/proc"
)

// TestStaleImportReusedPid: an import recorded with this process's id but
// another process's start is of a process that ended, its id since given
// to this one: it is interrupted, not left running while this process
// lives. The same id with this process's start stays running.
func TestStaleImportReusedPid(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("a process's start is read from /proc, on Linux only; elsewhere the process id alone is recorded")
	}
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	live, err := db.BeginTraceImport(ctx, "/live", "")
	if err != nil {
		t.Fatal(err)
	}
	reused, err := db.BeginTraceImport(ctx, "/reused", "")
	if err != nil {
		t.Fatal(err)
	}
	var start string
	if err := db.db.QueryRowContext(ctx, `SELECT process_start FROM trace_imports WHERE id = ?`, live).Scan(&start); err != nil {
		t.Fatal(err)
	}
	if start == "" || start != proc.Start(os.Getpid()) {
		t.Fatalf("recorded process start %q, want this process's %q", start, proc.Start(os.Getpid()))
	}
	if _, err := db.db.ExecContext(ctx, `UPDATE trace_imports SET process_start = ? WHERE id = ?`, start+"0", reused); err != nil {
		t.Fatal(err)
	}
	n, err := db.InterruptStaleTraceImports(ctx, "2026-01-02T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	list, err := db.TraceImports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, im := range list {
		got[im.Root] = im.Status
	}
	if n != 1 || got["/live"] != ImportRunning || got["/reused"] != ImportInterrupted {
		t.Errorf("marked %d, statuses %v: want 1, /live running and /reused interrupted", n, got)
	}
}
