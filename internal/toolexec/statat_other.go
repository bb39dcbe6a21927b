//go:build !linux

package toolexec

import (
	"errors"
	"io/fs"
	"os"
)

// Elsewhere there is no root descriptor (openDirFD), and the check
// looks at a path through os.Root.

func lstatAt(int, string) (fs.FileInfo, error) { return nil, errors.ErrUnsupported }

func sameFile(a, b fs.FileInfo) bool { return os.SameFile(a, b) }

func fileID(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }
