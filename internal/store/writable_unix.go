//go:build unix

package store

import "syscall"

// mayWrite asks the system whether this process may write p (its
// permissions, a read-only mount).
func mayWrite(p string) bool {
	const wOK = 2 // W_OK of access(2)
	return syscall.Access(p, wOK) == nil
}
