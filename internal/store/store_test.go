package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	row := Session{Path: "a.md", SHA256: "h", SessionID: "s-a", Status: "active", Started: "2026-01-01T00:00:00Z"}
	if err := db.Put(ctx, row, []Callout{{Position: 0, Type: "error", Title: "boom"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Opening again keeps the data and the version.
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.db.QueryRow(`SELECT version FROM schema_version`).Scan(&v); err != nil || v != Version {
		t.Errorf("schema version = %d, %v, want %d", v, err, Version)
	}
	got, err := db.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Session{row}, got); diff != "" {
		t.Errorf("Sessions (-want +got):\n%s", diff)
	}
}

func TestOpenNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.db.Exec(`UPDATE schema_version SET version = ?`, Version+1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := Open(ctx, path); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("Open(newer schema) = %v, want ErrNewerSchema", err)
	}
}

func TestDeleteCascades(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, p := range []string{"a.md", "b.md"} {
		if err := db.Put(ctx, Session{Path: p, SessionID: p}, []Callout{{Type: "error", Title: p}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Delete(ctx, "a.md"); err != nil {
		t.Fatal(err)
	}
	items, err := db.Callouts(ctx, []string{"error"})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Callout.Title != "b.md" {
		t.Errorf("Callouts after Delete(a.md) = %+v, want only b.md's", items)
	}
}

func TestSearchEscapesLike(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Put(ctx, Session{Path: "a.md", SessionID: "a", Title: "100% done"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, Session{Path: "b.md", SessionID: "b", Title: "1000 done"}, nil); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]int{"100%": 1, "100": 2, "_": 0, "DONE": 2} {
		got, err := db.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want {
			t.Errorf("Search(%q) = %d sessions, want %d", q, len(got), want)
		}
	}
}

// TestOpenConcurrentFresh opens one new database from many connections at
// once, as runs started together do with a new state directory: each must
// wait for the others rather than fail with "database is locked".
func TestOpenConcurrentFresh(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "state.db")
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() {
				db, err := Open(t.Context(), path)
				if err != nil {
					errs <- err
					return
				}
				db.Close()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}
