package tracestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// NoStoreError is a trace store that does not exist where a reader
// looked for one (OpenStore without create).
type NoStoreError struct {
	Path string
}

func (e *NoStoreError) Error() string { return "no trace store at " + e.Path }

// OpenStore opens the trace store, the database at path, under the
// store's read-only policy:
//
//   - With create (an import), a missing store is created; one made
//     read-only (store.Writable is false: a shared copy) is refused with
//     store.ErrReadOnly, even for a process that could write it anyway
//     (root), rather than changed.
//   - Without create (mine, stats, export, gc), a missing store is a
//     *NoStoreError rather than an empty database left behind; a store
//     this process may not write is opened read-only, so the commands
//     that only read it work as usual and a write one needs (gc) fails
//     with store.ErrReadOnly, leaving it as it was. A store that looks
//     writable but that SQLite cannot write (a read-only mount) is read
//     all the same.
func OpenStore(ctx context.Context, path string, create bool) (*store.DB, error) {
	if create {
		if _, err := os.Stat(path); err == nil && !store.Writable(path) {
			return nil, fmt.Errorf("the trace store %s is read-only (the file or its directory is not writable): %w", path, store.ErrReadOnly)
		}
		return store.Open(ctx, path)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, &NoStoreError{Path: path}
	}
	if !store.Writable(path) {
		return store.OpenReadOnly(ctx, path)
	}
	db, err := store.Open(ctx, path)
	if errors.Is(err, store.ErrReadOnly) {
		db, err = store.OpenReadOnly(ctx, path)
	}
	return db, err
}
