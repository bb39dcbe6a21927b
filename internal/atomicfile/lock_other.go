//go:build !unix

package atomicfile

import "os"

// Lock does nothing where advisory locks are not available: what it
// guards is then safe for one writer at a time only.
func Lock(*os.File) (unlock func(), err error) { return func() {}, nil }

// TryLock is Lock without waiting; it always succeeds here.
func TryLock(*os.File) (unlock func(), ok bool, err error) { return func() {}, true, nil }
