//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// Lock holds an exclusive advisory lock (flock) on f until unlock is
// called, waiting while another holder has it. f may be a directory
// opened for reading: a bundle is locked as its directory, so that the
// lock is not a file of its own in it. The lock belongs to the open
// file, so two opens of one file in one process exclude each other as
// two processes do.
func Lock(f *os.File) (unlock func(), err error) {
	return flock(f, syscall.LOCK_EX)
}

// TryLock is Lock without waiting: ok is false when another holder has
// the lock.
func TryLock(f *os.File) (unlock func(), ok bool, err error) {
	unlock, err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, false, nil
	}
	return unlock, err == nil, err
}

func flock(f *os.File, how int) (unlock func(), err error) {
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }, nil
}
