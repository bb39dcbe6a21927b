// Package atomicfile writes files so that a reader, or a run that starts
// after a crash, sees either the old contents or the new ones, never a
// mix and never a truncated file. Every file the project writes as a
// result (workflows, reports, bundles, journals, session logs) goes
// through it.
//
// A file is written to a temporary file in its own directory, synced,
// given its mode and renamed over the destination, and the directory is
// synced so that the rename survives a crash. WriteAll does the same for
// several files at once and renames none of them until all are complete.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// SyncFile makes a file's contents durable. It is a variable so that a
// test can count or fail the syncs; nothing else should change it.
var SyncFile = (*os.File).Sync

// Write replaces the file name with data, atomically and durably, with
// mode perm. The directory must exist. On failure the destination is
// unchanged and no temporary file is left behind.
func Write(name string, data []byte, perm os.FileMode) error {
	return WriteSync(name, data, perm, SyncFile)
}

// WriteSync is Write making the file and its directory durable with sync
// instead of SyncFile, for a package that routes its syncs through its
// own hook.
func WriteSync(name string, data []byte, perm os.FileMode, sync func(*os.File) error) error {
	tmp, err := writeTemp(name, data, perm, sync)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(name), sync)
}

// WriteAll writes every file or none, each with mode perm, creating the
// directories they need (mode 0755). Every file is first written and
// synced as a temporary file beside its destination; only when all are
// complete are they renamed into place, in path order, and their
// directories synced. A failure before the renames removes the temporary
// files and leaves every destination as it was, so an interrupted run
// never leaves a half-written workflow or report that a later step could
// mistake for a finished one. Errors name the destination.
func WriteAll(files map[string][]byte, perm os.FileMode) error {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	temps := make(map[string]string, len(paths))
	cleanup := func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		tmp, err := writeTemp(p, files[p], perm, SyncFile)
		if err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		temps[p] = tmp
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		if err := os.Rename(temps[p], p); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		delete(temps, p)
		dirs[filepath.Dir(p)] = true
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		if err := SyncDir(d); err != nil {
			return fmt.Errorf("writing %s: %w", d, err)
		}
	}
	return nil
}

// writeTemp writes data to a new temporary file beside name, with mode
// perm, synced, and returns its path. On failure nothing is left behind.
func writeTemp(name string, data []byte, perm os.FileMode, sync func(*os.File) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = sync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// SyncDir makes the entries of directory dir durable, so that a file
// created or renamed in it survives a crash. A system that cannot sync a
// directory is not an error: the files themselves are on disk.
func SyncDir(dir string) error { return syncDir(dir, SyncFile) }

func syncDir(dir string, sync func(*os.File) error) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := sync(d); err != nil && !errors.Is(err, errors.ErrUnsupported) && !os.IsPermission(err) {
		return err
	}
	return nil
}
