package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// rename moves a directory entry. It is a variable so that a test can
// fail the swap ReplaceDir makes and check the rollback; nothing else
// should change it.
var rename = os.Rename

// ReplaceDir replaces the directory dir with a new one whose contents
// fill writes, so that dir holds the old tree or the new one and never a
// mix: a bundle whose workflow is new and whose manifest is old would
// validate against the wrong files.
//
// fill is given an empty directory (mode 0755) beside dir, on the same
// file system, and writes the new tree into it however it likes; it may
// also check, last, that dir is still what the caller may replace. When
// fill returns, every file and directory of the new tree is synced, the
// old dir (if any) is renamed aside, the new tree renamed into place and
// the parent directory synced, and only then is the old tree removed.
// dir's parent is created (mode 0755) when missing.
//
// On any failure dir is left as it was and no temporary directory
// remains: an error from fill or a sync removes the new tree, and a
// failed rename of the new tree puts the old one back. Should putting it
// back fail too, the error says where the old tree is, so nothing is
// lost silently. The one failure after which the new tree is in place
// is a failed sync of the parent, reported because the swap may not
// survive a crash.
//
// A crash between the two renames leaves dir missing and the old tree
// beside it under a dot-name; POSIX has no portable exchange of two
// directories, and a reader never sees a half-written tree.
func ReplaceDir(dir string, fill func(tmp string) error) (err error) {
	dir = filepath.Clean(dir)
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := syncTree(tmp); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		// Reserve a unique name for the old tree, then move it there.
		o, err := os.MkdirTemp(parent, "."+base+".old-")
		if err != nil {
			return err
		}
		if err := os.Remove(o); err != nil {
			return err
		}
		if err := rename(dir, o); err != nil {
			return err
		}
		old = o
	}
	if err := rename(tmp, dir); err != nil {
		if old == "" {
			return err
		}
		if rerr := rename(old, dir); rerr != nil {
			return fmt.Errorf("%w; restoring the old %s: %v (it is kept at %s)", err, base, rerr, old)
		}
		return err
	}
	serr := syncDir(parent, SyncFile)
	if old != "" {
		os.RemoveAll(old)
	}
	if serr != nil {
		return fmt.Errorf("syncing %s: %w", parent, serr)
	}
	return nil
}

// syncTree syncs every regular file and directory under root, root
// included, so that the tree renamed into place is on disk before the
// rename is. Symbolic links and other entries are not followed.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() && !d.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = SyncFile(f)
		if d.IsDir() && err != nil && (errors.Is(err, errors.ErrUnsupported) || os.IsPermission(err)) {
			// As syncDir: a system that cannot sync a directory has the
			// files themselves on disk.
			err = nil
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("syncing %s: %w", p, err)
		}
		return nil
	})
}
