// Package atomicfile writes files so that a reader, or a run that starts
// after a crash, sees either the old contents or the new ones, never a
// mix and never a truncated file. Every file the project writes as a
// result (workflows, reports, bundles, journals, session logs) goes
// through it.
//
// A file is written to a temporary file in its own directory, synced,
// given its mode and renamed over the destination, and the directory is
// synced so that the rename survives a crash. WriteAll does the same for
// several files at once and renames none of them until all are complete;
// a Batch does it for files whose contents are streamed as they are
// written, such as a report of gigabytes, instead of held in memory.
// ReplaceDir does it for a whole directory (a bundle, an evidence
// bundle): the new tree is written beside the old, synced, and swapped
// in with renames, the old one put back if the swap fails.
// A destination that is a stream (/dev/null, /dev/stdout, a named pipe)
// is written through, never renamed over.
// Lock serializes the writers of a file that is read, changed and written
// back (a bundle's manifest, the approval ledger), so that no change is
// lost between one writer's read and its write.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
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
	if isStream(name) {
		return writeStream(name, data)
	}
	tmp, err := writeTemp(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, perm, sync)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(name), sync)
}

// isStream reports whether name is a stream rather than a file: a
// device (/dev/null, a terminal), a named pipe or a socket, directly or
// through a symbolic link (/dev/stdout). A stream has no contents to
// replace: a rename over it would put a regular file in its place, and
// --report /dev/null run as root would replace the system's /dev/null.
// Its data is written through it instead.
func isStream(name string) bool {
	fi, err := os.Stat(name)
	return err == nil && fi.Mode()&(os.ModeDevice|os.ModeCharDevice|os.ModeNamedPipe|os.ModeSocket) != 0
}

// writeStream writes data through the stream name (isStream).
func writeStream(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// NoSync is a sync function for WriteSync that syncs nothing: the file
// is replaced atomically (a reader sees the old contents or the new,
// never part of them, and a symbolic link at name is replaced, not
// written through) but not durably. It is for records that nothing
// resumes from, whose cost is paid on every run.
func NoSync(*os.File) error { return nil }

// CreateSync writes the new file name with data and mode perm, durably,
// and fails with an error matching os.ErrExist when name already exists,
// which it leaves as it was. The file is written and synced as a
// temporary file beside name and then hard-linked into place, which
// only succeeds where nothing is: of two writers creating the same file
// at once, one wins and the other finds the winner's file, and no reader
// ever sees a partial one. sync makes the file and its directory
// durable; the directory must exist.
func CreateSync(name string, data []byte, perm os.FileMode, sync func(*os.File) error) error {
	tmp, err := writeTemp(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, perm, sync)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, name); err != nil {
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
	b := NewBatch(perm)
	for _, p := range paths {
		if err := b.AddBytes(p, files[p]); err != nil {
			return err
		}
	}
	return b.Commit()
}

// Batch writes files all or none, as WriteAll does, for contents too
// large to hold in memory: Add streams each file into its temporary file
// as it is added, and Commit renames them all into place. Until Commit,
// no destination changes; a failed Add, or Discard, removes every
// temporary file of the batch and the directories the batch created,
// after which Add and Commit fail. A Batch is used from one goroutine.
type Batch struct {
	perm  os.FileMode
	temps map[string]string // destination → temporary file
	// streams are the destinations that are streams (isStream): their
	// temporary file is in the system's temporary directory, and Commit
	// writes it through the stream instead of renaming it.
	streams map[string]bool
	created []string // directories Add created, parents first
	err     error    // why the batch was given up
	done    bool
}

// NewBatch returns an empty batch whose files get mode perm.
func NewBatch(perm os.FileMode) *Batch {
	return &Batch{perm: perm, temps: map[string]string{}, streams: map[string]bool{}}
}

// AddBytes adds the file name with contents data.
func (b *Batch) AddBytes(name string, data []byte) error {
	return b.Add(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Add adds the file name, creating the directories it needs (mode 0755),
// and has write write its contents into the temporary file, which is
// then synced. write's writer is not buffered. A name added twice is an
// error. Errors name the destination; any error gives up the batch.
func (b *Batch) Add(name string, write func(w io.Writer) error) error {
	if err := b.usable(); err != nil {
		return err
	}
	if _, dup := b.temps[name]; dup {
		return b.fail(fmt.Errorf("writing %s: added twice", name))
	}
	dir := filepath.Dir(name)
	if isStream(name) {
		b.streams[name] = true
		dir = os.TempDir()
	} else if err := b.mkdirAll(dir); err != nil {
		return b.fail(fmt.Errorf("writing %s: %w", name, err))
	}
	tmp, err := writeTempIn(dir, name, write, b.perm, SyncFile)
	if err != nil {
		return b.fail(fmt.Errorf("writing %s: %w", name, err))
	}
	b.temps[name] = tmp
	return nil
}

// Commit writes the batch's streams (isStream), then renames every other
// file of the batch into place, in path order, and syncs their
// directories. A stream that fails leaves every file as it was; a failed
// rename removes the temporary files not yet renamed, and the ones
// renamed before it stay.
func (b *Batch) Commit() error {
	if err := b.usable(); err != nil {
		return err
	}
	b.done = true
	paths := make([]string, 0, len(b.temps))
	for p := range b.temps {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// Streams first: what is written through one cannot be taken back,
	// and one that fails must leave every file as it was.
	for _, p := range paths {
		if !b.streams[p] {
			continue
		}
		err := copyToStream(b.temps[p], p)
		os.Remove(b.temps[p])
		delete(b.temps, p)
		if err != nil {
			b.removeTemps()
			b.removeCreated()
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		if b.streams[p] {
			continue
		}
		if err := os.Rename(b.temps[p], p); err != nil {
			b.removeTemps()
			b.removeCreated()
			return fmt.Errorf("writing %s: %w", p, err)
		}
		delete(b.temps, p)
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

// Discard removes the temporary files of a batch not committed, leaving
// every destination as it was. After Commit it does nothing, so a caller
// can defer it.
func (b *Batch) Discard() {
	if b.done {
		return
	}
	b.done = true
	b.removeTemps()
	b.removeCreated()
}

func (b *Batch) usable() error {
	switch {
	case b.err != nil:
		return fmt.Errorf("batch given up: %w", b.err)
	case b.done:
		return errors.New("batch already committed or discarded")
	}
	return nil
}

func (b *Batch) fail(err error) error {
	b.err = err
	b.removeTemps()
	b.removeCreated()
	return err
}

// mkdirAll creates dir and its missing parents, as os.MkdirAll does, and
// records the ones it created, so that a batch given up leaves the tree
// as it found it: a discarded run must not leave an empty out/workflows/
// that the next run, or a reviewer, takes for a result.
func (b *Batch) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if parent := filepath.Dir(d); parent == d {
			break
		}
	}
	err := os.MkdirAll(dir, 0o755)
	// Record what exists now even on failure: MkdirAll may have created
	// the upper part of the path before it failed.
	for i := len(missing) - 1; i >= 0; i-- {
		if _, statErr := os.Lstat(missing[i]); statErr == nil {
			b.created = append(b.created, missing[i])
		}
	}
	return err
}

// removeCreated removes the directories the batch created, deepest
// first. A directory that is not empty (something else wrote into it
// meanwhile) stays.
func (b *Batch) removeCreated() {
	for i := len(b.created) - 1; i >= 0; i-- {
		os.Remove(b.created[i])
	}
	b.created = nil
}

func (b *Batch) removeTemps() {
	for p, t := range b.temps {
		os.Remove(t)
		delete(b.temps, p)
	}
}

// copyToStream writes the contents of the file tmp through the stream
// name (isStream).
func copyToStream(tmp, name string) error {
	src, err := os.Open(tmp)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTemp writes a new temporary file beside name with write, with
// mode perm, synced, and returns its path. On failure nothing is left
// behind.
func writeTemp(name string, write func(io.Writer) error, perm os.FileMode, sync func(*os.File) error) (string, error) {
	return writeTempIn(filepath.Dir(name), name, write, perm, sync)
}

// writeTempIn is writeTemp with the temporary file in dir.
func writeTempIn(dir, name string, write func(io.Writer) error, perm os.FileMode, sync func(*os.File) error) (string, error) {
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	err = write(f)
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

// UntrackedIgnore is the .gitignore MkdirUntracked writes: everything in
// the directory, itself included, stays out of version control.
const UntrackedIgnore = "# Written by crystallize: this directory holds local state (a database,\n# run records, a signing key) that must not be committed.\n*\n"

// MkdirUntracked creates dir and its parents like os.MkdirAll and, when it
// creates dir itself, writes dir/.gitignore (UntrackedIgnore) in it. A
// state directory lives inside the project it serves, and a `git add -A`
// there would otherwise commit its database and the key that signs its
// approvals. A directory that exists is left as it is: its owner decides.
func MkdirUntracked(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return Write(filepath.Join(dir, ".gitignore"), []byte(UntrackedIgnore), 0o644)
}
