package registry

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// LastShownFile is the file in the state directory that remembers the
// session Show showed last, for the next one after or before it.
const LastShownFile = "sessions.last"

// OpenExisting opens the registry of stateDir for reading. ok is false,
// without an error, when there is none yet: listing sessions in a
// directory where nothing ever ran must not create a database there (a
// status line runs on every shell prompt, in every directory).
func OpenExisting(ctx context.Context, stateDir string) (db *store.DB, ok bool, err error) {
	p := Path(stateDir)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	db, err = store.Open(ctx, p)
	if err != nil {
		return nil, false, err
	}
	return db, true, nil
}

// ListDir is List of the registry of stateDir: none when there is no
// registry yet, which it does not create.
func ListDir(ctx context.Context, stateDir string, all bool) ([]Entry, error) {
	db, ok, err := OpenExisting(ctx, stateDir)
	if err != nil || !ok {
		return []Entry{}, err
	}
	defer db.Close()
	return List(ctx, db, all, Options{})
}

// Show returns the session to show: the one ref names (Find), or with
// delta +1 or -1 the one after or before the session shown last (Rotate,
// starting at an end when none was). It remembers the session in
// LastShownFile, written whole so that a Show from another shell never
// reads a half-written id.
func Show(ctx context.Context, db *store.DB, stateDir, ref string, delta int, all bool) (Entry, error) {
	var s Entry
	if delta != 0 {
		list, err := List(ctx, db, all, Options{})
		if err != nil {
			return s, err
		}
		last, _ := os.ReadFile(filepath.Join(stateDir, LastShownFile)) // none yet: start at an end
		var ok bool
		if s, ok = Rotate(list, strings.TrimSpace(string(last)), delta); !ok {
			return s, fmt.Errorf("no session to show: %w", store.ErrNoSession)
		}
	} else {
		var err error
		if s, err = Find(ctx, db, ref, all, Options{}); err != nil {
			return s, err
		}
	}
	if err := atomicfile.WriteAll(map[string][]byte{filepath.Join(stateDir, LastShownFile): []byte(s.SessionID + "\n")}, 0o644); err != nil {
		return s, fmt.Errorf("remembering the session shown: %w", err)
	}
	return s, nil
}
