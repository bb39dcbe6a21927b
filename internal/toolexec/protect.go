package toolexec

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// ErrProtected is returned (as a *ProtectedError) by the built-in fs
// tools for a path of the protected set.
var ErrProtected = errors.New("protected path")

// Rules of the protected set, the codes a ProtectedError carries.
const (
	// RuleConfig: the configuration file the run loaded, and any file
	// named crystallize.toml, which a later run could load.
	RuleConfig = "protected_config"
	// RuleProgram: a program a command binding or an MCP server runs
	// and every file its arguments name (an interpreter runs its script
	// from argv[1]); and the directory holding the program, or the
	// script in the first operand (the scripts it sources live there),
	// unless that directory is a workspace root or holds one.
	RuleProgram = "protected_program"
	// RuleSecrets: the [secrets] file.
	RuleSecrets = "protected_secrets"
	// RuleState: the state directory (run records, journals, the store),
	// any directory named .crystallize, any other state directory (one
	// that holds a state.key), and any file named state.key or
	// approvals.jsonl.
	RuleState = "protected_state"
	// RuleGit: any directory named .git (hooks are programs, config
	// holds remotes and credential helpers).
	RuleGit = "protected_git"
)

// ProtectedError is the refusal of a file built-in to touch a path of the
// protected set: the files that decide what a tool runs or what a later
// run is granted. Writing one would turn fs.write into running code
// nobody reviewed; reading one could disclose credentials.
type ProtectedError struct {
	// Tool is fs.read or fs.write, Path the path the workflow gave.
	Tool, Path string
	// Rule is one of the Rule constants; Why names what the path is.
	Rule, Why string
}

func (e *ProtectedError) Error() string {
	return fmt.Sprintf("%s: %s %s: %s (%s)", ErrProtected, e.Tool, e.Path, e.Why, e.Rule)
}

func (e *ProtectedError) Unwrap() error { return ErrProtected }

// The names of a state directory, which the protected set keeps out of
// the file built-ins' reach wherever it is: a directory is one by its
// default name or by the state key it holds, and its key and approval
// ledger are refused by name too. The runner, which writes them, takes
// its names from here; package ledger, which writes the ledger, keeps
// copies a test pins to these.
const (
	StateDirName       = ".crystallize"
	StateKeyFile       = "state.key"
	ApprovalLedgerFile = "approvals.jsonl"
)

// guard is one member of the protected set: a path, whether everything
// under it is protected too, and its rule.
type guard struct {
	path string
	dir  bool
	rule string
	why  string
	info os.FileInfo // nil when the path does not exist
}

// guards returns the protected set of the run, computed once.
func (h *Executor) guards() []guard {
	if h.protected != nil {
		return h.protected
	}
	var gs []guard
	add := func(p string, dir bool, rule, why string) {
		p = realPath(p)
		info, _ := os.Stat(p)
		gs = append(gs, guard{path: p, dir: dir, rule: rule, why: why, info: info})
	}
	if h.cfg.File != "" {
		add(h.cfg.File, false, RuleConfig, "the configuration file of this run")
	}
	if h.cfg.Secrets.File != "" {
		add(h.cfg.Abs(h.cfg.Secrets.File), false, RuleSecrets, "the secrets file")
	}
	if h.stateDir != "" {
		if abs, err := filepath.Abs(h.stateDir); err == nil {
			add(abs, true, RuleState, "the state directory")
		}
	}
	roots := h.cfg.Roots()
	// verb is "runs" for argv[0], "names" for a file among the
	// arguments (a script, or a file the program reads).
	program := func(p, what, owner, verb string) {
		add(p, false, RuleProgram, "a "+what+" "+owner+" "+verb)
		d := filepath.Dir(p)
		for _, r := range roots {
			if rel, err := filepath.Rel(d, r); err == nil && filepath.IsLocal(rel) || d == r {
				return // protecting d would protect a whole root
			}
		}
		add(d, true, RuleProgram, "the directory of a "+what+" "+owner+" "+verb)
	}
	command := func(argv []string, cwd, owner string) {
		if len(argv) == 0 {
			return
		}
		if p := h.program(argv[0]); p != "" {
			program(p, "program", owner, "runs")
		}
		for _, f := range h.argvFiles(argv[1:], cwd) {
			if f.script {
				program(f.path, "file", owner, "names")
			} else {
				add(f.path, false, RuleProgram, "a file "+owner+" names")
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(h.cfg.Tools)) {
		if b := h.cfg.Tools[name]; len(b.Command) > 0 {
			command(b.Command, b.Cwd, fmt.Sprintf("the binding tools.%q", name))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(h.cfg.MCP)) {
		if s := h.cfg.MCP[name]; len(s.Command) > 0 {
			command(s.Command, s.Cwd, fmt.Sprintf("the server mcp.%s", name))
		}
	}
	if gs == nil {
		gs = []guard{}
	}
	h.protected = gs
	return gs
}

// program resolves a binding's program as running it would: a path with a
// slash against the config's directory, a bare name through PATH. A
// program chosen by a template ({…}) is not known before the call and is
// left out.
func (h *Executor) program(argv0 string) string {
	if argv0 == "" || strings.ContainsAny(argv0, "{}") {
		return ""
	}
	if strings.ContainsRune(argv0, '/') {
		return h.cfg.Abs(argv0)
	}
	p, err := exec.LookPath(argv0)
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	return abs
}

// argvFiles returns the files the arguments of a command name, as the
// program would open them: an argument (or the value after the "=" of an
// option written "--name=value") relative to the command's working
// directory, cwd (a template; the first workspace root when it is empty
// or names a parameter). An interpreter's script is an argument
// (["sh", "tools/hello.sh"], ["python3", "x.py"]), and so is a file of
// rules or a config a program reads: rewriting either changes what the
// call does as much as rewriting argv[0] would. An argument counts when
// it is a file that exists, or when it looks like one (it holds a slash,
// or its name has an extension), so that a workflow cannot create the
// script a binding names before calling it. An argument that is a
// parameter's value is not known before the call and is left out; so is
// a directory (an operand such as ".", which names no program).
//
// The first operand (the first argument that is not an option) is where
// an interpreter takes its script, which may source the files beside
// it: its directory is protected too, as argv[0]'s is (script). Any
// other file is protected alone, so that a binding naming an input or
// output file ("data/in.json", "--out=build/x.json") does not close its
// whole directory to the workflow.
func (h *Executor) argvFiles(args []string, cwd string) []argvFile {
	dir := h.cfg.Roots()[0]
	if cwd != "" {
		if d, ok := h.literal(cwd); ok {
			dir = h.cfg.Abs(d)
		}
	}
	var out []argvFile
	operands := 0
	for _, a := range args {
		first := false
		if strings.HasPrefix(a, "-") {
			_, v, ok := strings.Cut(a, "=")
			if !ok {
				continue
			}
			a = v
		} else {
			operands++
			first = operands == 1
		}
		a, ok := h.literal(a)
		if !ok || a == "" {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		info, err := os.Stat(p)
		switch {
		case err == nil && info.IsDir():
			continue
		case err != nil && !strings.ContainsRune(a, '/') && filepath.Ext(a) == "":
			continue
		}
		out = append(out, argvFile{path: p, script: first})
	}
	return out
}

// argvFile is a file a command's arguments name, and whether it is in
// the script's position (the first operand).
type argvFile struct {
	path   string
	script bool
}

// literal returns the template s with {workspace} filled in, and false
// when it holds any other placeholder ({name}, {name...}, {secret:ID}):
// its value is known only at the call.
func (h *Executor) literal(s string) (string, bool) {
	s = strings.ReplaceAll(s, "{workspace}", h.cfg.Roots()[0])
	if strings.ContainsAny(s, "{}") {
		return "", false
	}
	return s, true
}

// protect refuses the path p (as the workflow gave it, root and rel as
// locate found them) when it is a member of the protected set or lies
// under one. Names are compared case-insensitively and files by identity
// (os.SameFile) after resolving symlinks, so neither another spelling
// on a case-insensitive file system, nor a symlink or hard link inside
// the workspace, reaches a protected file.
//
// A file built-in is checked once per call, as policy in the runner's callTool before
// the call (the file built-ins are reached only through it, and open the
// file without checking again), so the check is kept to a few system
// calls: the root is pinned, and its real path and which guards cover
// it or a directory above it found, once per run (rootChecks), and the
// path is resolved inside the pinned root one name at a time
// (resolveIn), so only the directories inside the workspace are looked
// at per call, and they are the ones the call then opens.
func (h *Executor) protect(tool, p, root, rel string) error {
	_, _, err := h.protectFile(tool, p, root, rel)
	return err
}

// protectFile is protect, returning also the root's check (with the
// directory it pinned, which the call must open from), and, when the
// path was resolved name by name without a symlink, the lstat of its
// last name: the file the check is about, which a read then opens by
// identity (fsReadChecked).
func (h *Executor) protectFile(tool, p, root, rel string) (fs.FileInfo, *rootCheck, error) {
	refuse := func(rule, why string) (fs.FileInfo, *rootCheck, error) {
		return nil, nil, &ProtectedError{Tool: tool, Path: p, Rule: rule, Why: why}
	}
	gs := h.guards()
	rc, err := h.rootChecks.get(root, gs, &h.roots)
	if err != nil {
		return nil, nil, err
	}
	var (
		full         string
		target, last fs.FileInfo
		inside       []dirInfo
		under        bool
	)
	if rc.open != nil {
		res := resolveIn(rc.open, rc.real, rel)
		full, target, last = res.full, res.target, res.last
		if res.ok && res.inRoot == "." {
			target = rc.open.info
		}
		if res.ok {
			// inside lists full's ancestors below the root, nearest
			// first, as the walk found them in the pinned root; the root
			// and what is above it are rc's.
			inside, under = res.inside, true
		} else {
			inside, under = ancestorsBelow(full, rc.real)
		}
	} else {
		full, last = realPathUnder(rc.real, root, rel)
		target = last
		if target == nil {
			target, _ = os.Stat(full)
		}
		inside, under = ancestorsBelow(full, rc.real)
	}
	for i, g := range gs {
		if full == g.path || target != nil && g.info != nil && sameFile(target, g.info) {
			return refuse(g.rule, g.why)
		}
		if !g.dir {
			continue
		}
		if !under {
			if coversAncestor(g, full) {
				return refuse(g.rule, g.why)
			}
			continue
		}
		for _, a := range inside {
			if a.path == g.path || g.info != nil && a.info != nil && sameFile(a.info, g.info) {
				return refuse(g.rule, g.why)
			}
		}
		if rc.covered[i] {
			return refuse(g.rule, g.why)
		}
	}
	// Another state directory than the run's own (an earlier run's
	// --state-dir, the one `approve` recorded to) is as much the
	// project's state: its key authenticates journals and approvals, and
	// a ledger line forged in it would let an unapproved bundle run
	// under require_ledger. It is known by its key, which every state
	// directory that authenticates anything holds: one lstat per
	// directory of the path below the root (the root and above are
	// rc's, looked at once).
	if rc.inState {
		return refuse(RuleState, "inside a state directory (it holds "+StateKeyFile+")")
	}
	if under {
		for _, a := range inside {
			if holdsStateKey(rc, a.path) {
				return refuse(RuleState, "inside a state directory (it holds "+StateKeyFile+")")
			}
		}
	}
	// The rules by name come last, so that a path both rules and the set
	// cover is reported as what the set says it is.
	spellings := [2]string{filepath.ToSlash(rel)}
	if r, err := filepath.Rel(rc.real, full); err == nil {
		spellings[1] = filepath.ToSlash(r)
	}
	for _, s := range spellings {
		for n := range strings.SplitSeq(s, "/") {
			switch {
			case strings.EqualFold(n, ".git"):
				return refuse(RuleGit, "inside a .git directory")
			case strings.EqualFold(n, StateDirName):
				return refuse(RuleState, "inside a "+StateDirName+" directory")
			case strings.EqualFold(n, StateKeyFile), strings.EqualFold(n, ApprovalLedgerFile):
				return refuse(RuleState, "a state directory's "+n)
			}
		}
	}
	if strings.EqualFold(filepath.Base(full), runconfig.ConfigFile) || strings.EqualFold(filepath.Base(rel), runconfig.ConfigFile) {
		return refuse(RuleConfig, "a "+runconfig.ConfigFile+" a later run could load")
	}
	return last, rc, nil
}

// holdsStateKey reports whether the directory dir (a real path under
// rc's root, or the root or above) holds a stateKeyFile: whether it is a
// state directory.
func holdsStateKey(rc *rootCheck, dir string) bool {
	if rc.open != nil {
		if rel, err := filepath.Rel(rc.real, dir); err == nil && filepath.IsLocal(rel) {
			_, err := rc.open.lstat(filepath.Join(rel, StateKeyFile))
			return err == nil
		}
	}
	_, err := os.Lstat(filepath.Join(dir, StateKeyFile))
	return err == nil
}

// coversAncestor reports whether the directory guard g is an ancestor of
// full, by name or by identity: the walk protect makes for a path outside
// its root's real path.
func coversAncestor(g guard, full string) bool {
	for a := filepath.Dir(full); ; a = filepath.Dir(a) {
		if a == g.path {
			return true
		}
		if g.info != nil {
			if ai, err := os.Stat(a); err == nil && sameFile(ai, g.info) {
				return true
			}
		}
		if a == filepath.Dir(a) {
			return false
		}
	}
}

// dirInfo is a directory and its file info (nil when it cannot be
// read).
type dirInfo struct {
	path string
	info os.FileInfo
}

// ancestorsBelow returns the ancestors of full strictly below real,
// nearest first, with their file info, and whether full lies under real
// at all.
func ancestorsBelow(full, real string) ([]dirInfo, bool) {
	prefix := real
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(full, prefix) {
		return nil, false
	}
	var out []dirInfo
	for a := filepath.Dir(full); a != real && len(a) > len(real); a = filepath.Dir(a) {
		info, _ := os.Stat(a)
		out = append(out, dirInfo{a, info})
	}
	return out, true
}

// rootCache holds a rootCheck per workspace root. The file built-ins run
// on their own goroutine (withTimeout), so it is locked.
type rootCache struct {
	mu     sync.Mutex
	checks map[string]*rootCheck
}

// rootCheck is what protect needs of a workspace root: its real path,
// for each guard whether it is a directory guard that holds the root
// itself or a directory above it (then every path under the root is
// protected by it), and the root's directory, held open for the rest of
// the run (nil when it could not be opened, and then nothing is cached).
//
// The directory is pinned: the first call of a file built-in that names
// the root opens it, and every later check and open of the run is made
// relative to that directory, never to the root's path again. A root
// path re-pointed during the run (a symlink retargeted, the directory
// renamed and another put in its place) therefore changes nothing: the
// check and the open both keep to the directory the run began with,
// instead of the check looking at one directory and the open going to
// another.
type rootCheck struct {
	real    string
	covered []bool
	open    *openRoot
	// openErr is why the root could not be opened, when open is nil: the
	// error of the call the check was made for.
	openErr error
	// inState is whether the root or a directory above it is a state
	// directory (holds a stateKeyFile): then every path under the root is
	// inside one.
	inState bool
}

// ErrRootChanged is returned when a workspace root's path leads to
// another directory while the run is pinning it, so that which directory
// the run would check is not known.
var ErrRootChanged = errors.New("workspace root changed")

// get returns the check of root, pinning the root's directory on first
// use (see rootCheck). A root that cannot be opened (missing, not a
// directory) is checked by its path and not cached: the call itself then
// fails opening it.
func (c *rootCache) get(root string, gs []guard, roots *openRoots) (*rootCheck, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rc, ok := c.checks[root]; ok {
		return rc, nil
	}
	open, openErr, err := roots.pin(root)
	if err != nil {
		return nil, err
	}
	rc := &rootCheck{real: realPath(root), covered: make([]bool, len(gs)), open: open, openErr: openErr}
	if open != nil {
		rc.real = open.real
	}
	var chain []dirInfo
	for a := rc.real; ; a = filepath.Dir(a) {
		var info os.FileInfo
		if a == rc.real && open != nil {
			info = open.info
		} else {
			info, _ = os.Stat(a)
		}
		chain = append(chain, dirInfo{a, info})
		if !rc.inState {
			_, err := os.Lstat(filepath.Join(a, StateKeyFile))
			rc.inState = err == nil
		}
		if a == filepath.Dir(a) {
			break
		}
	}
	for i, g := range gs {
		if !g.dir {
			continue
		}
		for _, a := range chain {
			if a.path == g.path || g.info != nil && a.info != nil && sameFile(a.info, g.info) {
				rc.covered[i] = true
				break
			}
		}
	}
	if open == nil {
		return rc, nil
	}
	if c.checks == nil {
		c.checks = map[string]*rootCheck{}
	}
	c.checks[root] = rc
	return rc, nil
}

// resolved is where protect found a path below a root: its real path,
// the lstat of its last name when every name resolved without a symlink
// (the file the check is about, which a read then opens by identity),
// what the path leads to when it exists, and, when it stays inside the
// pinned root, its path below the root (inRoot, ok) and its directories
// there.
type resolved struct {
	full   string
	last   fs.FileInfo
	target fs.FileInfo
	inRoot string
	ok     bool
	// inside are full's ancestors below the root, nearest first, with
	// what the walk found of each (nil for one that does not exist).
	inside []dirInfo
}

// maxLinks bounds the symlinks resolveIn follows, as the kernel bounds
// them (ELOOP).
const maxLinks = 40

// resolveIn resolves rel inside the pinned root c, whose real path is
// real, one name at a time (c.lstat, and os.Root's Readlink), so that
// what it looks at is the directory the run holds open whatever the
// root's path leads to now. A symlink whose target is absolute or climbs out of the
// root is one os.Root refuses to follow, so the call fails whatever the
// check says; the path is then resolved by name (realPath), as a
// reader of the error would resolve it. A name that is missing, or below
// something that is not a directory, ends the walk: the rest is
// appended, where the path would be created.
func resolveIn(c *openRoot, real, rel string) resolved {
	rel = filepath.Clean(rel)
	if rel == "." {
		return resolved{full: real, inRoot: ".", ok: true}
	}
	names := strings.Split(rel, string(filepath.Separator))
	cur := ""
	// dirs are the directories cur is made of, as the walk found them.
	var dirs []dirInfo
	links := 0
	for i := 0; i < len(names); i++ {
		next := filepath.Join(cur, names[i])
		info, err := c.lstat(next)
		last := i == len(names)-1
		switch {
		case err != nil || !last && !info.IsDir() && info.Mode()&fs.ModeSymlink == 0:
			// The rest does not exist (or cannot, below a file): its
			// directories are compared by name only.
			in := filepath.Join(append([]string{next}, names[i+1:]...)...)
			if !last {
				var ni fs.FileInfo
				if err == nil {
					ni = info
				}
				dirs = append(dirs, dirInfo{filepath.Join(real, next), ni})
				a := next
				for _, n := range names[i+1 : len(names)-1] {
					a = filepath.Join(a, n)
					dirs = append(dirs, dirInfo{filepath.Join(real, a), nil})
				}
			}
			slices.Reverse(dirs)
			return resolved{full: filepath.Join(real, in), inRoot: in, ok: true, inside: dirs}
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := c.root.Readlink(next)
			links++
			if err != nil || links > maxLinks || filepath.IsAbs(link) {
				return escaped(real, rel)
			}
			target := filepath.Join(cur, link)
			if !filepath.IsLocal(target) && target != "." {
				return escaped(real, rel)
			}
			names = append(strings.Split(target, string(filepath.Separator)), names[i+1:]...)
			if target == "." {
				names = names[1:]
			}
			cur, i, dirs = "", -1, dirs[:0]
			if len(names) == 0 {
				return resolved{full: real, inRoot: ".", ok: true}
			}
			continue
		}
		cur = next
		if last {
			slices.Reverse(dirs)
			out := resolved{full: filepath.Join(real, cur), target: info, inRoot: cur, ok: true, inside: dirs}
			if links == 0 {
				out.last = info
			}
			return out
		}
		dirs = append(dirs, dirInfo{filepath.Join(real, cur), info})
	}
	return resolved{full: filepath.Join(real, cur), inRoot: cur, ok: true}
}

// escaped is resolveIn's answer for a path a symlink leads out of the
// root: resolved by name from the root's real path.
func escaped(real, rel string) resolved {
	full := realPath(filepath.Join(real, rel))
	target, _ := os.Stat(full)
	return resolved{full: full, target: target}
}

// realPathUnder is realPath(filepath.Join(root, rel)) for a root whose
// real path is real: the names of rel are resolved from real one at a
// time, and at the first symlink (or anything but a plain directory or
// a missing name) it falls back to realPath. When it resolved every name
// itself, it also returns what the last one is: not a symlink, so what
// os.Stat of the path would say, without asking again. It is how a root
// that could not be opened is checked.
func realPathUnder(real, root, rel string) (string, fs.FileInfo) {
	rel = filepath.Clean(rel)
	if rel == "." {
		return real, nil
	}
	names := strings.Split(rel, string(filepath.Separator))
	cur := real
	var last fs.FileInfo
	for i, n := range names {
		next := filepath.Join(cur, n)
		info, err := os.Lstat(next)
		switch {
		case err != nil && errors.Is(err, fs.ErrNotExist) && i == len(names)-1:
			return next, nil
		case err != nil:
			return realPath(filepath.Join(root, rel)), nil
		case info.Mode()&fs.ModeSymlink != 0:
			return realPath(filepath.Join(root, rel)), nil
		case i < len(names)-1 && !info.IsDir():
			return realPath(filepath.Join(root, rel)), nil
		}
		cur, last = next, info
	}
	return cur, last
}

// realPath resolves the symlinks of p's longest existing prefix and
// appends the rest, so a path that does not exist yet is compared where
// it would be created.
func realPath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for cur := p; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if cur == filepath.Dir(cur) {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}
