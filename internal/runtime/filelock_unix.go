//go:build unix

package runtime

import (
	"os"
	"syscall"
)

// lockFile holds an exclusive advisory lock on f until unlock is called.
// Approvals recorded by two processes at once take turns: the one that
// repairs a torn last line must not cut off the other's entry.
func lockFile(f *os.File) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}

// tryLockFile is lockFile without waiting: it fails with errLocked when
// another process holds the lock.
func tryLockFile(f *os.File) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EWOULDBLOCK {
		return nil, errLocked
	}
	if err != nil {
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
