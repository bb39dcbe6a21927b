package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// readTree reads every regular file under root into a map keyed by its
// slash-separated path.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// fillWith returns a fill writing files (slash paths) into its directory.
func fillWith(files map[string]string) func(string) error {
	return func(tmp string) error {
		for name, data := range files {
			p := filepath.Join(tmp, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestReplaceDir writes a new directory, then replaces it: the second
// tree's files alone remain (none of the first's), nothing else is left
// in the parent, and every file and directory of the new tree and the
// parent are synced before ReplaceDir returns.
func TestReplaceDir(t *testing.T) {
	var synced []string
	sync := SyncFile
	SyncFile = func(f *os.File) error { synced = append(synced, f.Name()); return sync(f) }
	t.Cleanup(func() { SyncFile = sync })

	parent := filepath.Join(t.TempDir(), "out")
	dir := filepath.Join(parent, "bundle")
	first := map[string]string{"a.json": "1", "fixtures/old.json": "old"}
	if err := ReplaceDir(dir, fillWith(first)); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dir); !equal(got, first) {
		t.Errorf("after the first ReplaceDir, dir holds %v, want %v", got, first)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("dir mode %v, %v; want 0755", st.Mode().Perm(), err)
	}

	synced = nil
	second := map[string]string{"a.json": "2", "sub/b.json": "b"}
	if err := ReplaceDir(dir, fillWith(second)); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dir); !equal(got, second) {
		t.Errorf("after the second ReplaceDir, dir holds %v, want %v", got, second)
	}
	if got := entries(t, parent); !slices.Equal(got, []string{"bundle"}) {
		t.Errorf("parent holds %v, want [bundle]", got)
	}
	// The tree was synced under its temporary name, so compare base
	// names below it.
	var got []string
	for _, s := range synced {
		if s == parent {
			got = append(got, "<parent>")
			continue
		}
		i := strings.Index(s, ".bundle.tmp-")
		if i < 0 {
			t.Errorf("synced %s, outside the new tree and its parent", s)
			continue
		}
		rest := s[i:]
		if j := strings.IndexByte(rest, os.PathSeparator); j >= 0 {
			got = append(got, filepath.ToSlash(rest[j+1:]))
		} else {
			got = append(got, "<root>")
		}
	}
	slices.Sort(got)
	want := []string{"<parent>", "<root>", "a.json", "sub", "sub/b.json"}
	if !slices.Equal(got, want) {
		t.Errorf("synced %v, want %v", got, want)
	}
	if synced[len(synced)-1] != parent {
		t.Errorf("last sync is %s, want the parent after the swap", synced[len(synced)-1])
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestReplaceDirFailures fails ReplaceDir at each step before the swap
// and at the swap itself, over an existing directory and where none is:
// the old tree must be there unchanged (or nothing, when there was
// none), and the parent must hold no temporary directory. The swap's
// faults are injected through rename, so removing the rollback of a
// failed swap fails this test.
func TestReplaceDirFailures(t *testing.T) {
	old := map[string]string{"a.json": "old", "keep/x.txt": "x"}
	errFault := errors.New("injected fault")
	for _, tc := range []struct {
		name string
		fill func(string) error
		sync func(*os.File) error
		// renameFault fails the rename of from→to when it returns true.
		renameFault func(from, to string) bool
	}{
		{name: "fill", fill: func(tmp string) error {
			fillWith(map[string]string{"a.json": "new"})(tmp)
			return errFault
		}},
		{name: "sync", sync: func(f *os.File) error {
			if filepath.Base(f.Name()) == "a.json" {
				return errFault
			}
			return nil
		}},
		{name: "swap", renameFault: func(from, to string) bool {
			return strings.Contains(filepath.Base(from), ".tmp-")
		}},
		{name: "move aside", renameFault: func(from, to string) bool {
			return strings.Contains(filepath.Base(to), ".old-")
		}},
	} {
		for _, existing := range []bool{true, false} {
			if tc.name == "move aside" && !existing {
				continue // nothing to move aside
			}
			t.Run(tc.name+map[bool]string{true: "/existing", false: "/new"}[existing], func(t *testing.T) {
				parent := t.TempDir()
				dir := filepath.Join(parent, "bundle")
				if existing {
					if err := ReplaceDir(dir, fillWith(old)); err != nil {
						t.Fatal(err)
					}
				}
				if tc.sync != nil {
					sync := SyncFile
					SyncFile = tc.sync
					t.Cleanup(func() { SyncFile = sync })
				}
				if tc.renameFault != nil {
					r := rename
					rename = func(from, to string) error {
						if tc.renameFault(from, to) {
							return &os.LinkError{Op: "rename", Old: from, New: to, Err: errFault}
						}
						return r(from, to)
					}
					t.Cleanup(func() { rename = r })
				}
				fill := tc.fill
				if fill == nil {
					fill = fillWith(map[string]string{"a.json": "new", "b.json": "b"})
				}
				if err := ReplaceDir(dir, fill); !errors.Is(err, errFault) {
					t.Fatalf("ReplaceDir = %v, want the injected fault", err)
				}
				if !existing {
					if got := entries(t, parent); len(got) != 0 {
						t.Errorf("parent holds %v, want nothing", got)
					}
					return
				}
				if got := entries(t, parent); !slices.Equal(got, []string{"bundle"}) {
					t.Errorf("parent holds %v, want the old directory alone", got)
				}
				if got := readTree(t, dir); !equal(got, old) {
					t.Errorf("dir holds %v, want the old tree %v", got, old)
				}
			})
		}
	}
}

// TestReplaceDirRestoreFails: when the swap fails and putting the old
// tree back fails too, the error says where the old tree is kept, and
// it is there, whole.
func TestReplaceDirRestoreFails(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "bundle")
	old := map[string]string{"a.json": "old"}
	if err := ReplaceDir(dir, fillWith(old)); err != nil {
		t.Fatal(err)
	}
	errFault := errors.New("injected fault")
	r := rename
	rename = func(from, to string) error {
		if to == dir {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: errFault}
		}
		return r(from, to)
	}
	t.Cleanup(func() { rename = r })
	err := ReplaceDir(dir, fillWith(map[string]string{"a.json": "new"}))
	if !errors.Is(err, errFault) {
		t.Fatalf("ReplaceDir = %v, want the injected fault", err)
	}
	got := entries(t, parent)
	if len(got) != 1 || !strings.HasPrefix(got[0], ".bundle.old-") {
		t.Fatalf("parent holds %v, want the old tree alone under its dot-name", got)
	}
	kept := filepath.Join(parent, got[0])
	if !strings.Contains(err.Error(), "kept at "+kept) {
		t.Errorf("ReplaceDir = %v, want it to say the old tree is kept at %s", err, kept)
	}
	if tr := readTree(t, kept); !equal(tr, old) {
		t.Errorf("kept tree holds %v, want %v", tr, old)
	}
}
