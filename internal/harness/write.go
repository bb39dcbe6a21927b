package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/textdiff"
)

// ErrNotOwned is returned by Write when a kit would replace a file the
// tool does not own: one it did not write, or one edited since.
var ErrNotOwned = errors.New("file is not owned by crystallize")

// ErrUnknownKit is returned by Write for a kit id not in the registry.
var ErrUnknownKit = errors.New("unknown template kit")

// FileChange is one file of a write.
type FileChange struct {
	Path   string `json:"path"`
	Action string `json:"action"` // create, update, unchanged
	Mode   uint32 `json:"mode"`
	data   []byte
	old    []byte
}

// WriteResult is what Write did or would do.
type WriteResult struct {
	Kit      string       `json:"kit"`
	Applied  bool         `json:"applied"`
	Files    []FileChange `json:"files"`
	Diff     string       `json:"diff"`
	Manifest *Manifest    `json:"-"`
}

// Write prepares kit id for the repository at root, as profiled by p:
// the kit's files and the manifest with the kit's gates, suites and
// files merged in. It always computes the diff; it writes only when
// apply is true. It refuses, writing nothing, when any file it would
// write exists and is not listed in the manifest with its current
// content (ErrNotOwned), which keeps every observed-only and user file
// as it is.
func Write(root, id string, p *RepoProfile, apply bool) (*WriteResult, error) {
	kit, ok := KitByID(id)
	if !ok {
		var ids []string
		for _, k := range Kits() {
			ids = append(ids, k.ID)
		}
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownKit, id, strings.Join(ids, ", "))
	}
	m, err := ReadManifest(root)
	var oldManifest []byte
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m = &Manifest{Schema: ManifestSchema, Owner: Owner, GeneratedBy: Owner}
	case err != nil:
		return nil, fmt.Errorf("reading manifest: %w", err)
	case m.Owner != Owner:
		return nil, fmt.Errorf("%s: owner %q: %w", ManifestPath, m.Owner, ErrNotOwned)
	default:
		oldManifest, _ = os.ReadFile(filepath.Join(root, filepath.FromSlash(ManifestPath)))
	}
	owned := m.owned()
	res := &WriteResult{Kit: id, Files: []FileChange{}}
	var refused []string
	var files []OwnedFile
	for _, out := range kit.outputs(p) {
		if err := noSymlink(root, out.Path); err != nil {
			return nil, fmt.Errorf("writing kit %s: %w", id, err)
		}
		fc := FileChange{Path: out.Path, Mode: out.Mode, data: []byte(out.Content)}
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(out.Path)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fc.Action = "create"
		case err != nil:
			return nil, fmt.Errorf("reading %s: %w", out.Path, err)
		case owned[out.Path] != "sha256:"+hashBytes(old):
			refused = append(refused, out.Path)
			continue
		case string(old) == out.Content:
			fc.Action, fc.old = "unchanged", old
		default:
			fc.Action, fc.old = "update", old
		}
		res.Files = append(res.Files, fc)
		files = append(files, OwnedFile{Path: out.Path, SHA256: hashBytes(fc.data), Kit: id})
	}
	if len(refused) > 0 {
		return nil, fmt.Errorf("writing kit %s: %s: %w; move or rename it, or adopt it by hand", id, strings.Join(refused, ", "), ErrNotOwned)
	}

	// Merge the kit into the manifest: its previous entries are replaced
	// (an Adapted command keeps the line the user wrote into it), every
	// other entry (the user's own or another kit's) is kept as is.
	for _, c := range kit.commands(p) {
		if i := slices.IndexFunc(m.Commands, func(x Command) bool { return x.ID == c.ID }); i >= 0 && m.Commands[i].Kit != id {
			return nil, fmt.Errorf("writing kit %s: %s: command %q: %w", id, ManifestPath, c.ID, ErrNotOwned)
		}
	}
	adapted := map[string]string{}
	for _, c := range m.Commands {
		if c.Kit == id && slices.Contains(kit.Adapted, c.ID) {
			adapted[c.ID] = c.Command
		}
	}
	m.Commands = slices.DeleteFunc(m.Commands, func(c Command) bool { return c.Kit == id })
	for _, c := range kit.commands(p) {
		c.Kit = id
		if line, ok := adapted[c.ID]; ok {
			c.Command = line
		}
		m.Commands = append(m.Commands, c)
	}
	m.EvalSuites = slices.DeleteFunc(m.EvalSuites, func(s EvalSuite) bool { return s.Kit == id })
	for _, s := range kit.EvalSuites {
		s.Kit = id
		m.EvalSuites = append(m.EvalSuites, s)
	}
	m.Files = slices.DeleteFunc(m.Files, func(f OwnedFile) bool { return f.Kit == id })
	m.Files = append(m.Files, files...)
	slices.SortFunc(m.Files, func(a, b OwnedFile) int { return strings.Compare(a.Path, b.Path) })
	if !slices.Contains(m.Kits, id) {
		m.Kits = append(m.Kits, id)
		slices.Sort(m.Kits)
	}
	detected := map[string]bool{}
	for _, h := range p.RiskHints {
		detected[h.Family] = true
	}
	for _, f := range kit.Families {
		if detected[f] && !slices.Contains(m.RiskFamilies, f) {
			m.RiskFamilies = append(m.RiskFamilies, f)
		}
	}
	slices.SortFunc(m.RiskFamilies, func(a, b string) int { return slices.Index(Families, a) - slices.Index(Families, b) })
	if m.RiskFamilies == nil {
		m.RiskFamilies = []string{}
	}
	if m.Commands == nil {
		m.Commands = []Command{}
	}
	if m.EvalSuites == nil {
		m.EvalSuites = []EvalSuite{}
	}
	m.RepoProfileID = p.ProfileID
	if err := noSymlink(root, ManifestPath); err != nil {
		return nil, fmt.Errorf("writing kit %s: %w", id, err)
	}
	mdata := m.Encode()
	mc := FileChange{Path: ManifestPath, Mode: 0o644, data: mdata, old: oldManifest, Action: "create"}
	if oldManifest != nil {
		mc.Action = "update"
		if string(oldManifest) == string(mdata) {
			mc.Action = "unchanged"
		}
	}
	res.Files = append(res.Files, mc)
	res.Manifest = m

	var diff strings.Builder
	for _, fc := range res.Files {
		if fc.Action != "unchanged" {
			from := "a/" + fc.Path
			if fc.Action == "create" {
				from = "/dev/null"
			}
			diff.WriteString(textdiff.Unified(from, "b/"+fc.Path, fc.old, fc.data))
		}
	}
	res.Diff = diff.String()
	if !apply {
		return res, nil
	}
	// The manifest is written last, and a failed write undoes the files
	// written before it: a gate left on disk without its manifest entry
	// would not be owned, and every later Write would refuse it.
	var written []FileChange
	for _, fc := range res.Files {
		if fc.Action == "unchanged" {
			continue
		}
		if err := writeFile(filepath.Join(root, filepath.FromSlash(fc.Path)), fc.data, fs.FileMode(fc.Mode)); err != nil {
			return nil, errors.Join(err, undo(root, written))
		}
		written = append(written, fc)
	}
	res.Applied = true
	return res, nil
}

// writeFile is writeAtomic; tests replace it to make a write fail.
var writeFile = writeAtomic

// undo restores the files of an interrupted Write: a created file is
// removed, an updated one gets its old content back.
func undo(root string, written []FileChange) error {
	var errs []error
	for _, fc := range slices.Backward(written) {
		p := filepath.Join(root, filepath.FromSlash(fc.Path))
		var err error
		if fc.Action == "create" {
			err = os.Remove(p)
		} else {
			err = writeAtomic(p, fc.old, fs.FileMode(fc.Mode))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("undoing %s: %w", fc.Path, err))
		}
	}
	return errors.Join(errs...)
}

// writeAtomic writes data through atomicfile, creating the directories
// it needs, so an interrupted write never leaves half a gate script.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ErrSymlink is returned by Write when a path it would write goes
// through a symbolic link: a link could send a kit's file anywhere on
// the machine, so the tool writes only to real directories of the tree.
var ErrSymlink = errors.New("path goes through a symbolic link")

// noSymlink checks that no existing component of rel under root is a
// symbolic link.
func noSymlink(root, rel string) error {
	p := root
	for _, part := range strings.Split(rel, "/") {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: %w", rel, ErrSymlink)
		}
	}
	return nil
}
