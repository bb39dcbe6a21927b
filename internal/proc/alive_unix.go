//go:build unix

package proc

import (
	"errors"
	"syscall"
)

// Alive reports whether pid names a process: signal 0 checks
// without sending anything. EPERM means it exists but belongs to another
// user, which is still alive.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
