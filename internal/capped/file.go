package capped

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

var (
	// ErrNotRegular: a file to read is a FIFO, a device, a directory or a
	// socket. A FIFO would hang the reader until a writer came, and
	// /dev/zero never ends.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: a file is over the size its reader keeps.
	ErrTooLarge = errors.New("file too large")
)

// Open opens name for reading if it is a regular file, without waiting
// on a FIFO (it opens non-blocking where the system can, then checks
// what it opened, so a FIFO swapped in after a check is refused too).
// A symbolic link is followed; what it names must be regular.
func Open(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, name)
}

// OpenInRoot is Open for the file name relative to the directory dir,
// which it may not leave: not lexically ("../x", an absolute name), nor
// through a symbolic link (os.Root decides). Errors name dir/name.
func OpenInRoot(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	f, err := root.OpenFile(name, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, filepath.Join(dir, name))
}

// regular returns f if it is a regular file, and closes it otherwise.
func regular(f *os.File, name string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", name, ErrNotRegular, kind(fi.Mode()))
	}
	return f, nil
}

// kind names what a file that is not regular is.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeCharDevice != 0, m&os.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.Type().String()
}

// ReadFile reads the regular file name whole if it holds at most max
// bytes, and fails with ErrTooLarge if it holds more: it never reads
// more than max+1 bytes, whatever the file claims or grows to.
func ReadFile(name string, max int64) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	return readAll(f, name, max)
}

// ReadFileInRoot is ReadFile for a file OpenInRoot opens.
func ReadFileInRoot(dir, name string, max int64) ([]byte, error) {
	f, err := OpenInRoot(dir, name)
	if err != nil {
		return nil, err
	}
	return readAll(f, filepath.Join(dir, name), max)
}

// readAll reads f, named name, up to max bytes, and closes it.
func readAll(f *os.File, name string, max int64) ([]byte, error) {
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", name, ErrTooLarge, max)
	}
	return data, nil
}
