package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/harness/memory"
)

// Git statuses of a RepoFileObservation.
const (
	StatusTracked   = "tracked"
	StatusModified  = "modified"
	StatusDeleted   = "deleted"
	StatusRenamed   = "renamed"
	StatusUntracked = "untracked"
	StatusIgnored   = "ignored"
)

// Ownerships of a RepoFileObservation. Only OwnGenerated files may ever
// be written by this package, and only with the content it wrote.
const (
	OwnGenerated = "crystallize_generated"
	OwnUser      = "user_owned"
	OwnObserved  = "observed_only"
	OwnCandidate = "candidate_harness"
)

// StateDir is the directory of the tool's own state inside a repository;
// the profiler leaves it out, since it changes with every command.
const StateDir = ".crystallize"

// RepoProfile is a snapshot of what a repository is: its stacks, entry
// points, tests, CI, docs, data stores, network surfaces and the risk
// hints they imply. The field names are the seed format's.
type RepoProfile struct {
	ProfileID       string     `json:"profileId"`
	ProjectHash     string     `json:"projectHash"`
	Git             GitInfo    `json:"git"`
	Stacks          []Signal   `json:"stacks"`
	Entrypoints     []Signal   `json:"entrypoints"`
	Tests           []Signal   `json:"tests"`
	CI              []Signal   `json:"ci"`
	Docs            []Signal   `json:"docs"`
	DataStores      []Signal   `json:"dataStores"`
	NetworkSurfaces []Signal   `json:"networkSurfaces"`
	RiskHints       []RiskHint `json:"riskHints"`
	// CreatedAt is Unix milliseconds, set only when asked for, so the
	// same tree prints the same profile.
	CreatedAt int64 `json:"createdAt,omitempty"`
}

// GitInfo is the git state of the profiled tree. Pointers are null
// outside a repository, before the first commit, on a detached HEAD or
// without a remote.
type GitInfo struct {
	Head          *string               `json:"head"`
	Branch        *string               `json:"branch"`
	RemoteHash    *string               `json:"remoteHash"`
	Dirty         bool                  `json:"dirty"`
	RecentCommits int                   `json:"recentCommits"`
	ChangedFiles  []RepoFileObservation `json:"changedFiles"`
}

// RepoFileObservation is what the profiler saw of a file that differs
// from HEAD. Untracked files are observed_only: they inform risk and
// nothing in this package will stage, move, rewrite or delete them.
type RepoFileObservation struct {
	Path           string  `json:"path"`
	GitStatus      string  `json:"gitStatus"`
	Ownership      string  `json:"ownership"`
	Language       *string `json:"language"`
	SizeBytes      int64   `json:"sizeBytes"`
	ContentHash    *string `json:"contentHash"`
	Summary        *string `json:"summary"`
	FirstSeenAt    int64   `json:"firstSeenAt,omitempty"`
	LastSeenAt     int64   `json:"lastSeenAt,omitempty"`
	AdoptedAt      *int64  `json:"adoptedAt"`
	AdoptionUnitID *string `json:"adoptionUnitId"`
}

// Signal is one piece of evidence about the repository: a stack, entry
// point, test suite, CI job, document, data store or network surface.
// Kind says what it is ("go", "github-actions", "migrations"), Path
// where it was found, Detail anything more (a module path, a command).
type Signal struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Detail string `json:"detail,omitempty"`
}

// RiskHint says that a signal points at a risk family. Paths lists up
// to maxHintPaths of the files that showed it and Count all of them.
type RiskHint struct {
	Family string   `json:"family"`
	Signal string   `json:"signal"`
	Paths  []string `json:"paths"`
	Count  int      `json:"count"`
}

const maxHintPaths = 5

// ProfileOptions configures Profile. The zero value profiles without a
// timestamp.
type ProfileOptions struct {
	// Now, when set, fills CreatedAt and the observations' seen times.
	Now time.Time
}

// maxScan is the largest file whose content the profiler reads for
// signals; larger files count by name only.
const maxScan = 1 << 20

// Profile reads the repository at dir (its git top level when dir is
// inside a work tree) and returns its profile. It runs only read-only
// git commands and reads files; it writes nothing.
func Profile(ctx context.Context, dir string, opts ProfileOptions) (*RepoProfile, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("profiling %s: %w", dir, err)
	}
	if st, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("profiling %s: %w", dir, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("profiling %s: not a directory", dir)
	}
	p := &RepoProfile{}
	root, files, changed, err := listFiles(ctx, root, p)
	if err != nil {
		return nil, fmt.Errorf("profiling %s: %w", dir, err)
	}
	owned := ownedFiles(root)
	sc := newScanner(root)
	for _, f := range files {
		sc.file(f)
	}
	p.Stacks, p.Entrypoints, p.Tests, p.CI = sc.sorted(sc.stacks), sc.sorted(sc.entry), sc.sorted(sc.tests), sc.sorted(sc.ci)
	p.Docs, p.DataStores, p.NetworkSurfaces = sc.sorted(sc.docs), sc.sorted(sc.data), sc.sorted(sc.network)
	p.RiskHints = sc.hints()

	p.Git.ChangedFiles = []RepoFileObservation{}
	for _, e := range changed {
		p.Git.ChangedFiles = append(p.Git.ChangedFiles, observe(root, e, owned, opts.Now))
	}
	p.Git.Dirty = len(changed) > 0
	if !opts.Now.IsZero() {
		p.CreatedAt = opts.Now.UnixMilli()
	}
	// The id hashes the tree, not the commit: the same files with the
	// same content give the same id whatever the history or git status.
	h := sha256.New()
	fmt.Fprintf(h, "profile v1\n")
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%s\n", f, sc.hash(f))
	}
	p.ProfileID = "rp_" + hex.EncodeToString(h.Sum(nil))[:16]
	return p, nil
}

// listFiles returns the files to profile (tracked files present on disk
// and untracked ones, sorted, slash-separated, without the state
// directory) and the entries that differ from HEAD, and fills p.Git and
// p.ProjectHash.
func listFiles(ctx context.Context, root string, p *RepoProfile) (string, []string, []statusEntry, error) {
	if _, err := git(ctx, root, "rev-parse", "--is-inside-work-tree"); err != nil {
		// Not a repository: every file is profiled and none is changed.
		var files []string
		err := filepath.WalkDir(root, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, fp)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				switch d.Name() {
				case ".git", StateDir, "node_modules", "vendor":
					if rel != "." {
						return filepath.SkipDir
					}
				}
				return nil
			}
			if d.Type().IsRegular() {
				files = append(files, rel)
			}
			return nil
		})
		p.ProjectHash = "ph_" + shortHash("dir:"+filepath.Base(root))
		return root, files, nil, err
	}
	top, err := git(ctx, root, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", nil, nil, err
	}
	if t := strings.TrimSpace(string(top)); t != "" {
		root = t
	}
	if out, err := git(ctx, root, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		s := strings.TrimSpace(string(out))
		p.Git.Head = &s
	}
	if out, err := git(ctx, root, "symbolic-ref", "--short", "-q", "HEAD"); err == nil {
		s := strings.TrimSpace(string(out))
		p.Git.Branch = &s
	}
	remote := ""
	if out, err := git(ctx, root, "remote"); err == nil {
		names := strings.Fields(string(out))
		if slices.Contains(names, "origin") {
			remote = "origin"
		} else if len(names) > 0 {
			remote = names[0]
		}
	}
	var project string
	if remote != "" {
		if out, err := git(ctx, root, "remote", "get-url", remote); err == nil {
			// Only a hash of the URL is kept: URLs can carry credentials.
			s := "sha256:" + shortHash(strings.TrimSpace(string(out)))
			p.Git.RemoteHash = &s
			project = "remote:" + strings.TrimSuffix(strings.TrimSpace(string(out)), ".git")
		}
	}
	if p.Git.Head != nil {
		if out, err := git(ctx, root, "log", "-n", "20", "--format=%H"); err == nil {
			p.Git.RecentCommits = len(strings.Fields(string(out)))
		}
		if project == "" {
			if out, err := git(ctx, root, "rev-list", "--max-parents=0", "HEAD"); err == nil {
				roots := strings.Fields(string(out))
				slices.Sort(roots)
				project = "root:" + strings.Join(roots, ",")
			}
		}
	}
	if project == "" {
		project = "dir:" + filepath.Base(root)
	}
	p.ProjectHash = "ph_" + shortHash(project)

	out, err := git(ctx, root, "ls-files", "-z")
	if err != nil {
		return "", nil, nil, err
	}
	set := map[string]bool{}
	for _, f := range splitNUL(out) {
		set[f] = true
	}
	out, err = git(ctx, root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return "", nil, nil, err
	}
	var changed []statusEntry
	for _, e := range parseStatus(out) {
		if notProfiled(e.Path) {
			continue
		}
		changed = append(changed, e)
		if e.Status == StatusUntracked || e.Status == StatusRenamed || e.Status == StatusModified {
			set[e.Path] = true
		}
	}
	var files []string
	for f := range set {
		if notProfiled(f) {
			continue
		}
		if st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, a submodule or a symlink
		}
		files = append(files, f)
	}
	slices.Sort(files)
	return root, files, changed, nil
}

// notProfiled says whether the profiler leaves the path p out: the
// state directory, and the memory file. A memory says something about
// the repository, it is not part of what the repository is, so adding
// one changes neither the profile nor its id; and an observation of the
// file, with its first line as summary, would copy a memory into the
// ledger, which keeps memories out by design.
func notProfiled(p string) bool {
	return p == StateDir || strings.HasPrefix(p, StateDir+"/") || p == memory.File
}

// observe describes a changed file. Its ownership is generated when the
// manifest lists it with its current content, observed_only when it is
// untracked, and user_owned otherwise.
func observe(root string, e statusEntry, owned map[string]string, now time.Time) RepoFileObservation {
	o := RepoFileObservation{Path: e.Path, GitStatus: e.Status, Ownership: OwnUser}
	if lang := language(e.Path); lang != "" {
		o.Language = &lang
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.Path)))
	if err == nil {
		o.SizeBytes = int64(len(data))
		h := "sha256:" + hashBytes(data)
		o.ContentHash = &h
		if s := summarize(data); s != "" {
			o.Summary = &s
		}
	}
	switch {
	case o.ContentHash != nil && owned[e.Path] == *o.ContentHash:
		o.Ownership = OwnGenerated
	case e.Status == StatusUntracked:
		o.Ownership = OwnObserved
	}
	if !now.IsZero() {
		o.FirstSeenAt, o.LastSeenAt = now.UnixMilli(), now.UnixMilli()
	}
	return o
}

// summarize is the first non-empty line of a text file, cut to 80 runes.
func summarize(data []byte) string {
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if r := []rune(line); len(r) > 80 {
			line = string(r[:80])
		}
		return line
	}
	return ""
}

var languages = map[string]string{
	".go": "go", ".ts": "typescript", ".tsx": "typescript", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "javascript", ".py": "python", ".rs": "rust", ".nix": "nix", ".sh": "shell", ".bash": "shell", ".ps1": "powershell",
	".sql": "sql", ".md": "markdown", ".json": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml",
	".star": "starlark", ".txtar": "txtar", ".css": "css", ".html": "html", ".c": "c", ".h": "c", ".cc": "c++", ".cpp": "c++",
}

func language(p string) string {
	if path.Base(p) == "Dockerfile" {
		return "dockerfile"
	}
	return languages[strings.ToLower(path.Ext(p))]
}

func hashBytes(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func shortHash(s string) string { return hashBytes([]byte(s))[:16] }

// ownedFiles reads the manifest's list of generated files; a missing or
// unreadable manifest owns nothing.
func ownedFiles(root string) map[string]string {
	m, err := ReadManifest(root)
	if err != nil {
		return map[string]string{}
	}
	return m.owned()
}
