package toolexec

import (
	"io/fs"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 turns out to be missing (a kernel before
// 5.6) or forbidden (a seccomp filter), so that later calls do not ask
// again.
var noOpenat2 atomic.Bool

// openDirFD opens dir as a directory descriptor for readBeneath, and
// returns -1 when the directory opened is not the one info describes
// (another took its place since), so that the run's checks and the
// descriptor never disagree about which directory the root is.
func openDirFD(dir string, info fs.FileInfo) int {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	var st unix.Stat_t
	dev, ino, ok := fileID(info)
	if unix.Fstat(fd, &st) != nil || !ok || uint64(st.Dev) != dev || uint64(st.Ino) != ino {
		unix.Close(fd)
		return -1
	}
	return fd
}

// closeDirFD closes a descriptor openDirFD returned.
func closeDirFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// openBeneath opens rel below the directory dirfd without following a
// symlink anywhere on the way and without leaving the directory: openat2
// with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS, or, where openat2 is not
// available, openat with O_NOFOLLOW for a single name (which is then all
// there is to resolve). A path of several names without openat2 is left
// to os.Root (unix.ENOSYS).
func openBeneath(dirfd int, rel string, flags int) (int, error) {
	if !noOpenat2.Load() {
		how := unix.OpenHow{
			Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		}
		for {
			fd, err := unix.Openat2(dirfd, rel, &how)
			if err == unix.EINTR {
				continue
			}
			if err != unix.ENOSYS && err != unix.EPERM {
				return fd, err
			}
			noOpenat2.Store(true)
			break
		}
	}
	if strings.ContainsRune(rel, '/') {
		return -1, unix.ENOSYS
	}
	for {
		fd, err := unix.Openat(dirfd, rel, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// readBeneath reads the regular file rel below the directory dirfd when
// it is the file want describes (the same device and inode), no larger
// than MaxFileBytes. It reports false, having read nothing it returns,
// on anything else: an error, a file that is not the one checked or not
// regular, one too large or that grows while it is read. The caller then
// takes the path through os.Root, which says what is wrong.
//
// The file is opened non-blocking, so that a FIFO swapped in after the
// check is opened without waiting for a writer, and then refused by the
// identity check. Its size, from the same fstat, lets one read take it
// whole: a read of a regular file that returns fewer bytes than asked
// has reached its end.
func readBeneath(dirfd int, rel string, want fs.FileInfo) ([]byte, bool) {
	dev, ino, ok := fileID(want)
	if !ok {
		return nil, false
	}
	fd, err := openBeneath(dirfd, rel, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || uint64(st.Dev) != dev || uint64(st.Ino) != ino || st.Size > MaxFileBytes {
		return nil, false
	}
	buf := make([]byte, st.Size+1)
	n := 0
	for {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		n += m
		if n == len(buf) {
			return nil, false // it grew
		}
		if m == 0 || n >= int(st.Size) {
			return buf[:n], true
		}
	}
}
