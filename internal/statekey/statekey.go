// Package statekey holds the state key, which authenticates what a run
// leaves in the state directory for later: a suspended run's journal. A
// journal decides what a resumed run does (its target, configuration,
// parameters, options and the answers of the steps it skips), so a
// journal written by anyone but the run itself must not be resumed. The
// key is 32 random bytes in a file of the state directory, created on
// first use with mode 0600; a file that group or others can read or
// write is refused, since whoever can read it can forge.
//
// What the MAC proves: the journal was written by a crystallize process
// that could read this key, for this run id, and was not changed since.
// What it does not: that whoever holds the key (the user's account, or
// anyone who can read the state directory) did not forge it, nor anything
// about a journal copied with its key to another state directory.
package statekey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// ErrUnusable is returned for a state key that cannot be used.
var ErrUnusable = errors.New("unusable state key")

// Load returns the key in the file p, creating it (and its directory, a
// state directory) when create is set and there is none; sync makes the
// new file and its directory durable (atomicfile).
func Load(p string, create bool, sync func(*os.File) error) ([]byte, error) {
	stateDir := filepath.Dir(p)
	key, err := read(p)
	if err == nil || !create || !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	if err := atomicfile.MkdirUntracked(stateDir); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	key = make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, key); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	// The key is created whole and synced, with its directory, before any
	// journal is authenticated with it (resume needs the key as much as
	// the journal), and only where there is none yet: two runs starting
	// at once keep one key (the loser reads the winner's), and no run,
	// nor a crash, ever leaves or reads a half-written key file.
	err = atomicfile.CreateSync(p, []byte(hex.EncodeToString(key)+"\n"), 0o600, sync)
	if errors.Is(err, os.ErrExist) {
		return read(p)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	return key, nil
}

// read reads the key file p; a missing file is os.ErrNotExist.
func read(p string) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrUnusable, p)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o, which lets group or others read or change it; run chmod 600 %s", ErrUnusable, p, perm, p)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnusable, err)
	}
	if len(data) > 0 && data[len(data)-1] == '\n' {
		data = data[:len(data)-1]
	}
	key, err := hex.DecodeString(string(data))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("%w: %s does not hold a key of 32 bytes or more in hex", ErrUnusable, p)
	}
	return key, nil
}

// MAC is the hex HMAC-SHA256 of data under key, for a record of kind
// (what it is, so that a MAC of one kind of record is never valid for
// another) and id (the run it belongs to, so that a journal cannot be
// moved to another run's directory).
func MAC(key []byte, kind, id string, data []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "crystallize %s v1\x00%s\x00", kind, id)
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// Check reports whether mac (hex) is MAC of the same inputs.
func Check(key []byte, kind, id string, data []byte, mac string) bool {
	want, err := hex.DecodeString(MAC(key, kind, id, data))
	if err != nil {
		return false
	}
	got, err := hex.DecodeString(mac)
	return err == nil && hmac.Equal(got, want)
}
