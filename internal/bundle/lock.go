package bundle

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// A bundle is changed in place by reading its manifest, changing it and
// writing it back (Approve, ReplaceWorkflow). Two of those at once would
// each write back what it read, and the first one's change would be lost:
// an approval missing from approval_history, or, with the approval
// ledger appended after the manifest, a bundle whose last decision is an
// approval while the ledger's is the rejection recorded at the same
// time. Every in-place change therefore holds the bundle's lock, an
// advisory lock on the bundle directory itself (a lock file would be a
// file of the bundle no manifest lists), from reading the manifest until
// the last write (and, for Approve, until the ledger line is appended).

// lock holds the lock of the bundle in dir until unlock is called, and,
// once it holds it, removes the temporary files a change killed part way
// through left behind (removeTemps): no change is running then, so they
// are nobody's.
func lock(dir string) (unlock func(), err error) {
	d, err := openDir(dir)
	if err != nil {
		return nil, fmt.Errorf("locking bundle: %w", err)
	}
	release, err := atomicfile.Lock(d)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("locking bundle %s: %w", dir, err)
	}
	removeTemps(dir)
	return func() { release(); d.Close() }, nil
}

// openDir opens dir, which must be a directory: opening a FIFO would
// block.
func openDir(dir string) (*os.File, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	return os.Open(dir)
}

// cleanup removes what an interrupted change left in the bundle in dir,
// when no change holds its lock; a bundle being changed is left alone
// (the change cleans up after itself). It is how opening a bundle (Read)
// clears the temporary files of an approve killed with SIGKILL.
func cleanup(dir string) {
	d, err := openDir(dir)
	if err != nil {
		return
	}
	defer d.Close()
	release, ok, err := atomicfile.TryLock(d)
	if err != nil || !ok {
		return
	}
	defer release()
	removeTemps(dir)
}

// removeTemps removes the temporary files atomicfile leaves beside a
// file it was replacing when the process was killed (".NAME.tmp…") for
// the files a bundle changes in place: the manifest and report at the
// root, and the workflow, wherever the manifest puts it. Only regular
// files of exactly that form are removed.
func removeTemps(dir string) {
	dirs := map[string][]string{".": {ManifestFile, ReportFile}}
	// Only a regular manifest is read: a FIFO named candidate.json must
	// not block the open it is part of (Read refuses it after).
	if data, err := readRegular(filepath.Join(dir, ManifestFile)); err == nil {
		if m, err := decodeManifest(data, ManifestFile); err == nil && m.Workflow.Path != "" {
			if checkBundlePath(dir, m.Workflow.Path) == nil {
				d := path.Dir(m.Workflow.Path)
				dirs[d] = append(dirs[d], path.Base(m.Workflow.Path))
			}
		}
	}
	for d, names := range dirs {
		ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(d)))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.Type().IsRegular() {
				continue
			}
			for _, n := range names {
				if strings.HasPrefix(e.Name(), "."+n+".tmp") {
					os.Remove(filepath.Join(dir, filepath.FromSlash(d), e.Name()))
					break
				}
			}
		}
	}
}

// maxManifest bounds the manifest removeTemps reads to find the
// workflow: far above any bundle's (they are kilobytes), so that a
// huge file is not read only to clean up.
const maxManifest = 64 << 20

// readRegular reads the file p when it is a regular file of a manifest's
// size at most.
func readRegular(p string) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxManifest {
		return nil, fmt.Errorf("%s is not a regular file of at most %d bytes", p, maxManifest)
	}
	return os.ReadFile(p)
}
