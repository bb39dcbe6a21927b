//go:build !linux

package toolexec

import "io/fs"

// Elsewhere the file built-ins always go through os.Root: openDirFD
// opens nothing and readBeneath reads nothing.

func openDirFD(string, fs.FileInfo) int { return -1 }

func closeDirFD(int) {}

func readBeneath(int, string, fs.FileInfo) ([]byte, bool) { return nil, false }
