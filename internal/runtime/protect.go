package runtime

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrProtected is returned (as a *ProtectedError) by the built-in fs
// tools for a path of the protected set.
var ErrProtected = errors.New("protected path")

// Rules of the protected set, the codes a ProtectedError carries.
const (
	// RuleConfig: the configuration file the run loaded, and any file
	// named crystallize.toml, which a later run could load.
	RuleConfig = "protected_config"
	// RuleProgram: a program a command binding or an MCP server runs,
	// and the directory holding it (the scripts it sources live there)
	// unless that directory is a workspace root or holds one.
	RuleProgram = "protected_program"
	// RuleSecrets: the [secrets] file.
	RuleSecrets = "protected_secrets"
	// RuleState: the state directory (run records, journals, the store)
	// and any directory named .crystallize.
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
func (h *host) guards() []guard {
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
		add(h.cfg.abs(h.cfg.Secrets.File), false, RuleSecrets, "the secrets file")
	}
	if h.opts.StateDir != "" {
		if abs, err := filepath.Abs(h.opts.StateDir); err == nil {
			add(abs, true, RuleState, "the state directory")
		}
	}
	roots := h.cfg.roots()
	program := func(argv0, owner string) {
		p := h.program(argv0)
		if p == "" {
			return
		}
		add(p, false, RuleProgram, "a program "+owner+" runs")
		d := filepath.Dir(p)
		for _, r := range roots {
			if rel, err := filepath.Rel(d, r); err == nil && filepath.IsLocal(rel) || d == r {
				return // protecting d would protect a whole root
			}
		}
		add(d, true, RuleProgram, "the directory of a program "+owner+" runs")
	}
	for _, name := range sortedKeys(h.cfg.Tools) {
		if b := h.cfg.Tools[name]; len(b.Command) > 0 {
			program(b.Command[0], fmt.Sprintf("the binding tools.%q", name))
		}
	}
	for _, name := range sortedKeys(h.cfg.MCP) {
		if s := h.cfg.MCP[name]; len(s.Command) > 0 {
			program(s.Command[0], fmt.Sprintf("the server mcp.%s", name))
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
func (h *host) program(argv0 string) string {
	if argv0 == "" || strings.ContainsAny(argv0, "{}") {
		return ""
	}
	if strings.ContainsRune(argv0, '/') {
		return h.cfg.abs(argv0)
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

// protect refuses the path p (as the workflow gave it, root and rel as
// locate found them) when it is a member of the protected set or lies
// under one. Names are compared case-insensitively and files by identity
// (os.SameFile) after resolving symlinks, so neither another spelling
// on a case-insensitive file system, nor a symlink or hard link inside
// the workspace, reaches a protected file.
func (h *host) protect(tool, p, root, rel string) error {
	refuse := func(rule, why string) error {
		return &ProtectedError{Tool: tool, Path: p, Rule: rule, Why: why}
	}
	full := realPath(filepath.Join(root, rel))
	target, _ := os.Stat(full)
	for _, g := range h.guards() {
		if full == g.path || target != nil && g.info != nil && os.SameFile(target, g.info) {
			return refuse(g.rule, g.why)
		}
		if !g.dir {
			continue
		}
		for a := filepath.Dir(full); ; a = filepath.Dir(a) {
			if a == g.path {
				return refuse(g.rule, g.why)
			}
			if g.info != nil {
				if ai, err := os.Stat(a); err == nil && os.SameFile(ai, g.info) {
					return refuse(g.rule, g.why)
				}
			}
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	// The rules by name come last, so that a path both rules and the set
	// cover is reported as what the set says it is.
	names := strings.Split(filepath.ToSlash(rel), "/")
	if r, err := filepath.Rel(realPath(root), full); err == nil {
		names = append(names, strings.Split(filepath.ToSlash(r), "/")...)
	}
	for _, n := range names {
		switch {
		case strings.EqualFold(n, ".git"):
			return refuse(RuleGit, "inside a .git directory")
		case strings.EqualFold(n, DefaultStateDir):
			return refuse(RuleState, "inside a "+DefaultStateDir+" directory")
		}
	}
	if strings.EqualFold(filepath.Base(full), ConfigFile) || strings.EqualFold(filepath.Base(rel), ConfigFile) {
		return refuse(RuleConfig, "a "+ConfigFile+" a later run could load")
	}
	return nil
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
