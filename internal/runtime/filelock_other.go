//go:build !unix

package runtime

import "os"

// lockFile does nothing where advisory locks are not available: the
// ledger is then safe for one writer at a time only.
func lockFile(*os.File) (unlock func(), err error) { return func() {}, nil }

// tryLockFile does nothing where advisory locks are not available: two
// resumes of one run are then not kept apart.
func tryLockFile(*os.File) (unlock func(), err error) { return func() {}, nil }
