package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOpenConcurrently: connections that open a new database at the same
// moment must each find it migrated once, in WAL mode, and write to it.
// Goroutines in one process rarely hit the window between reading the
// version and running a step; separate processes do, and
// internal/cli's TestConcurrentRuns starts eight of them.
func TestOpenConcurrently(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := Open(context.Background(), path)
			if err != nil {
				errs[i] = err
				return
			}
			errs[i] = db.PutLive(context.Background(), LiveSession{SessionID: string(rune('a' + i)), Name: "w", AgentType: "workflow", Status: "running"})
			db.Close()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("opener %d: %v", i, err)
		}
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var versions int
	if err := db.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v, want wal", mode, err)
	}
	if err := db.db.QueryRow(`SELECT count(*) FROM schema_version`).Scan(&versions); err != nil || versions != 1 {
		t.Errorf("schema_version has %d rows, %v; want 1", versions, err)
	}
	list, err := db.LiveSessions(context.Background())
	if err != nil || len(list) != n {
		t.Errorf("LiveSessions = %d rows, %v; want %d", len(list), err, n)
	}
}

// TestItemAnswer: an item keeps the default and deadline it was posted
// with, and its answer records who gave it; a second answer finds the
// item answered and changes nothing.
func TestItemAnswer(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := db.AddItem(ctx, InboxItem{SessionID: "s", Type: "decision_needed", Text: "Which?", Options: []string{"a", "b"}, Default: "b", Deadline: 5000, Created: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.AnswerItem(ctx, id, "decide a", "why", "ana", 2000); !ok || err != nil {
		t.Fatalf("AnswerItem = %v, %v; want true, nil", ok, err)
	}
	if ok, err := db.AnswerItem(ctx, id, "decide b", "", "timeout", 6000); ok || err != nil {
		t.Fatalf("second AnswerItem = %v, %v; want false, nil", ok, err)
	}
	it, err := db.Item(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := InboxItem{ID: id, SessionID: "s", Type: "decision_needed", Text: "Which?", Options: []string{"a", "b"}, Created: 1000,
		Answered: true, Answer: "decide a", Reason: "why", AnsweredAt: 2000, AnsweredBy: "ana", Default: "b", Deadline: 5000}
	if diff := cmp.Diff(want, it); diff != "" {
		t.Errorf("Item (-want +got):\n%s", diff)
	}
}
