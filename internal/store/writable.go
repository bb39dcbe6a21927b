package store

import (
	"os"
	"path/filepath"
)

// Writable reports whether the existing database at path is meant to be
// written by this process: the file and its directory (where SQLite
// keeps the write-ahead log and its index) both are. A file or directory
// whose permission bits grant writing to nobody counts as read-only even
// for a process that could write it anyway (root): it was made read-only
// on purpose, a shared copy to read. A caller that finds the database
// not writable opens it with OpenReadOnly.
func Writable(path string) bool {
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o222 == 0 || !mayWrite(p) {
			return false
		}
	}
	return true
}
