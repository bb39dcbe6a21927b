package tracestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// TestOpenStore: a reader finds no store rather than creating one; an
// import refuses a store made read-only; a reader opens such a store
// read-only; and no error names a flag (the cli adds how to make one).
func TestOpenStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")

	_, err := OpenStore(ctx, path, false)
	var ns *NoStoreError
	if !errors.As(err, &ns) || ns.Path != path || strings.Contains(err.Error(), "--") {
		t.Fatalf("OpenStore(missing) = %v, want a *NoStoreError for %s naming no flag", err, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("OpenStore(missing) left %s behind: %v", path, err)
	}

	db, err := OpenStore(ctx, path, true)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if err := os.Chmod(filepath.Join(dir, e.Name()), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })

	if _, err := OpenStore(ctx, path, true); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("OpenStore(read-only, create) = %v, want store.ErrReadOnly", err)
	}
	db, err = OpenStore(ctx, path, false)
	if err != nil {
		t.Fatalf("OpenStore(read-only) = %v, want it opened read-only", err)
	}
	defer db.Close()
	if !db.ReadOnly() {
		t.Error("a store made read-only was opened for writing")
	}
}
