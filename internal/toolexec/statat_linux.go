package toolexec

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// lstatAt is the lstat of rel below the directory dirfd: one fstatat,
// where os.Root's Lstat of a path of several names opens and closes
// each directory on the way. rel is a clean local path whose directories
// the caller has seen not to be symlinks (resolveIn).
func lstatAt(dirfd int, rel string) (fs.FileInfo, error) {
	info := &statInfo{name: filepath.Base(rel)}
	for {
		err := unix.Fstatat(dirfd, rel, &info.st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &fs.PathError{Op: "fstatat", Path: rel, Err: err}
		}
		return info, nil
	}
}

// statInfo is the fs.FileInfo of an fstatat. Its Sys is a *unix.Stat_t,
// not the *syscall.Stat_t of os.Stat, so files are compared with
// sameFile, never os.SameFile.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return &i.st }

// Mode converts st_mode as the os package does.
func (i *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(i.st.Mode & 0o777)
	switch i.st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if i.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if i.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if i.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// fileID is the device and inode of a file info from os.Stat or
// lstatAt.
func fileID(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	switch s := fi.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(s.Dev), uint64(s.Ino), true
	case *unix.Stat_t:
		return uint64(s.Dev), uint64(s.Ino), true
	}
	return 0, 0, false
}

// sameFile is os.SameFile for infos from os.Stat and from lstatAt.
func sameFile(a, b fs.FileInfo) bool {
	da, ia, ok := fileID(a)
	db, ib, ok2 := fileID(b)
	if !ok || !ok2 {
		return os.SameFile(a, b)
	}
	return da == db && ia == ib
}

// sameDevice reports whether a and b are on the same file system.
func sameDevice(a, b fs.FileInfo) bool {
	da, _, ok := fileID(a)
	db, _, ok2 := fileID(b)
	return ok && ok2 && da == db
}
