package install

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/textdiff"
)

// The agents install knows.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	Gemini     = "gemini"
)

// Agents lists the agents, in the order messages name them.
var Agents = []string{ClaudeCode, Codex, Gemini}

// The scopes of an install.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// ServerPrefix starts the name of every server install adds; the rest is
// the skill's name, so that two bundles are two servers.
const ServerPrefix = "crystallize-"

// RecordDir is where, under the project or home, install records live.
const RecordDir = ".crystallize/installs"

// Options say what to install where.
type Options struct {
	// Bundle is the bundle directory.
	Bundle string
	// Agent is one of Agents; Scope is ScopeProject or ScopeUser.
	Agent string
	Scope string
	// Project and Home are the project directory and the user's home.
	Project string
	Home    string
	// CodexHome is Codex's own directory when it is not Home/.codex
	// (CODEX_HOME): Codex reads its user configuration from there.
	CodexHome string
	// Command is the crystallize executable the agent starts.
	Command string
}

// File is one file a plan writes or removes.
type File struct {
	Path string
	// Old is nil when the file does not exist; New is nil when the plan
	// removes it.
	Old, New []byte
	// Mode is the mode New is written with.
	Mode fs.FileMode
}

// Plan is what an install or uninstall changes. Files is empty when
// there is nothing to do.
type Plan struct {
	Agent, Scope string
	// Server and Tool are the MCP server's name and the bundle's tool.
	Server, Tool string
	// SkillDir is where the skill is; Config is the agent's
	// configuration file.
	SkillDir, Config string
	Files            []File
	// Notes are what the user should know (a trusted project, an edit
	// uninstall kept).
	Notes []string

	record       string
	recordData   []byte // the record install writes
	removeRecord bool   // uninstall removes the record
	createDirs   []string
	removeDirs   []string
}

// record is the install record: every file install wrote, with the bytes
// it found (Before, nil when there was none) and the sha256 of the bytes
// it wrote.
type record struct {
	Version int          `json:"version"`
	Agent   string       `json:"agent"`
	Scope   string       `json:"scope"`
	Bundle  string       `json:"bundle"`
	Server  string       `json:"server"`
	Files   []recordFile `json:"files"`
	Dirs    []string     `json:"created_dirs"`
}

type recordFile struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"` // "skill" or "config"
	Existed bool   `json:"existed"`
	Before  []byte `json:"before"`
	Written string `json:"written_sha256"`
}

// layout is where an agent keeps skills and servers for one scope.
type layout struct {
	skills, config string
	format         string // "json" or "toml"
	note           string
}

func agentLayout(agent, scope, project, home, codexHome string) (layout, error) {
	base := project
	if scope == ScopeUser {
		base = home
	} else if scope != ScopeProject {
		return layout{}, fmt.Errorf("unknown scope %q (want %s or %s)", scope, ScopeProject, ScopeUser)
	}
	if base == "" {
		return layout{}, fmt.Errorf("no %s directory", scope)
	}
	switch agent {
	case ClaudeCode:
		l := layout{skills: filepath.Join(base, ".claude", "skills"), config: filepath.Join(base, ".mcp.json"), format: "json"}
		if scope == ScopeUser {
			l.config = filepath.Join(base, ".claude.json")
		}
		return l, nil
	case Codex:
		l := layout{skills: filepath.Join(base, ".agents", "skills"), config: filepath.Join(base, ".codex", "config.toml"), format: "toml"}
		if scope == ScopeProject {
			l.note = "Codex reads a project's .codex/config.toml only when the project is trusted"
		} else if codexHome != "" {
			l.config = filepath.Join(codexHome, "config.toml")
		}
		return l, nil
	case Gemini:
		return layout{skills: filepath.Join(base, ".gemini", "skills"), config: filepath.Join(base, ".gemini", "settings.json"), format: "json"}, nil
	}
	return layout{}, fmt.Errorf("unknown agent %q (want one of %s)", agent, strings.Join(Agents, ", "))
}

// Install plans installing o.Bundle for o.Agent. It refuses a bundle that
// is not ready, one without an accepted skill, and anything that would
// overwrite what is not its own.
func Install(o Options) (*Plan, error) {
	dir, err := filepath.Abs(o.Bundle)
	if err != nil {
		return nil, err
	}
	if r := bundle.Ready(dir); !r.OK() {
		return nil, fmt.Errorf("bundle %s is not approved for what it would run, so it is not installed: %w", o.Bundle, r.Err())
	}
	b, err := bundle.Read(dir)
	if err != nil {
		return nil, err
	}
	m := b.Manifest
	if m.Skill == nil {
		return nil, fmt.Errorf("bundle %s has no accepted skill to install", o.Bundle)
	}
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Skill.Path)))
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.Bundle, err)
	}
	// The tool serve makes of the bundle is its workflow, loaded as a run
	// loads it, under the workflow's name and with its parameters.
	w, err := runner.Load(dir)
	if err != nil {
		return nil, err
	}
	call := skill.ToolCall{Server: ServerPrefix + m.Skill.Name, Tool: w.Name, Bundle: dir,
		Capabilities: m.Capabilities, Secrets: m.RequiredSecrets}
	params := map[string]skill.ToolParam{}
	if rep, err := bundle.ReadReport(dir); err == nil {
		for _, c := range rep.Candidates {
			if c.ID != m.CandidateID {
				continue
			}
			for _, p := range c.Parameters {
				params[p.Name] = skill.ToolParam{Name: p.Name, Type: p.Type, Examples: p.Examples}
			}
		}
	}
	for i, name := range w.Params {
		p, ok := params[name]
		if !ok {
			p = skill.ToolParam{Name: name}
		}
		p.Required = w.Required[i]
		call.Params = append(call.Params, p)
	}
	if o.Agent == ClaudeCode {
		// Claude Code names an MCP tool mcp__SERVER__TOOL.
		call.Qualified = "mcp__" + call.Server + "__" + call.Tool
	}
	md, err := skill.ForAgent(src, call)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", o.Bundle, err)
	}
	if probs := skill.Check(m.Skill.Name, md, nil); len(probs) > 0 {
		return nil, fmt.Errorf("bundle %s: the skill for the agent does not pass the skill checks: %s: %s", o.Bundle, probs[0].Code, probs[0].Message)
	}

	if o.Command == "" {
		return nil, errors.New("no crystallize command for the agent to start")
	}
	tg, err := placeOf(o, m.Skill.Name)
	if err != nil {
		return nil, err
	}
	l := tg.layout
	p := &Plan{Agent: o.Agent, Scope: o.Scope, Server: call.Server, Tool: call.Tool,
		SkillDir: tg.skillDir, Config: tg.config}
	if l.note != "" {
		p.Notes = append(p.Notes, l.note)
	}
	p.record = tg.record

	rec := &record{Version: 1, Agent: o.Agent, Scope: o.Scope, Bundle: dir, Server: call.Server}
	if old, err := readRecord(p.record, tg); err == nil {
		rec = old
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}

	skillFile := tg.skillFile
	old, err := readOptional(skillFile)
	if err != nil {
		return nil, err
	}
	switch {
	case old == nil:
		p.Files = append(p.Files, File{Path: skillFile, New: md, Mode: 0o644})
	case !bytes.Equal(old, md):
		return nil, fmt.Errorf("%s already holds another skill of the name %s; uninstall or remove it first (it is not overwritten)", skillFile, m.Skill.Name)
	}

	server := serverEntry{Command: o.Command, Args: []string{"serve", "mcp", "--bundles", dir}}
	conf, err := readOptional(tg.config)
	if err != nil {
		return nil, err
	}
	var merged []byte
	if l.format == "toml" {
		merged, err = addTOML(conf, call.Server, server)
	} else {
		merged, err = addJSON(conf, call.Server, server.json(o.Agent))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tg.config, err)
	}
	if merged != nil {
		mode := fs.FileMode(0o644)
		if st, err := os.Stat(tg.config); err == nil {
			mode = st.Mode().Perm()
		} else if o.Scope == ScopeUser {
			// A user's agent configuration holds credentials of other
			// servers; a new one is private.
			mode = 0o600
		}
		p.Files = append(p.Files, File{Path: tg.config, Old: conf, New: merged, Mode: mode})
	}
	if len(p.Files) == 0 {
		return p, nil
	}
	for _, f := range p.Files {
		kind := "config"
		if f.Path == skillFile {
			kind = "skill"
		}
		rec.Files = slices.DeleteFunc(rec.Files, func(r recordFile) bool { return r.Path == f.Path })
		rec.Files = append(rec.Files, recordFile{Path: f.Path, Kind: kind, Existed: f.Old != nil, Before: f.Old, Written: sum(f.New)})
		for _, d := range missingDirs(filepath.Dir(f.Path)) {
			if !slices.Contains(rec.Dirs, d) {
				rec.Dirs = append(rec.Dirs, d)
			}
			if !slices.Contains(p.createDirs, d) {
				p.createDirs = append(p.createDirs, d)
			}
		}
	}
	for _, d := range missingDirs(filepath.Dir(p.record)) {
		if !slices.Contains(rec.Dirs, d) {
			rec.Dirs = append(rec.Dirs, d)
		}
	}
	p.recordData, err = json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	p.recordData = append(p.recordData, '\n')
	return p, nil
}

// Uninstall plans taking out what the install of o.Bundle for o.Agent
// in o.Scope put in, from its record.
func Uninstall(o Options) (*Plan, error) {
	name, err := installedName(o)
	if err != nil {
		return nil, err
	}
	tg, err := placeOf(o, name)
	if err != nil {
		return nil, err
	}
	p := &Plan{Agent: o.Agent, Scope: o.Scope, Server: ServerPrefix + name, SkillDir: tg.skillDir, Config: tg.config}
	p.record = tg.record
	rec, err := readRecord(p.record, tg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no install of %s for %s in the %s scope is recorded (%s)", name, o.Agent, o.Scope, p.record)
	}
	if err != nil {
		return nil, err
	}
	for _, rf := range rec.Files {
		cur, err := readOptional(rf.Path)
		if err != nil {
			return nil, err
		}
		switch {
		case cur == nil && !rf.Existed:
			// Already gone.
		case cur != nil && sum(cur) == rf.Written:
			f := File{Path: rf.Path, Old: cur, New: rf.Before, Mode: 0o644}
			if st, err := os.Stat(rf.Path); err == nil {
				f.Mode = st.Mode().Perm()
			}
			if rf.Existed && f.New == nil {
				f.New = []byte{}
			}
			p.Files = append(p.Files, f)
		case rf.Kind == "config" && cur != nil:
			var out []byte
			if strings.HasSuffix(rf.Path, ".toml") {
				out, err = removeTOML(cur, rec.Server)
			} else {
				out, err = removeJSON(cur, rec.Server)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", rf.Path, err)
			}
			p.Notes = append(p.Notes, fmt.Sprintf("%s changed since the install; only server %s is taken out of it", rf.Path, rec.Server))
			if out != nil {
				mode := fs.FileMode(0o644)
				if st, err := os.Stat(rf.Path); err == nil {
					mode = st.Mode().Perm()
				}
				p.Files = append(p.Files, File{Path: rf.Path, Old: cur, New: out, Mode: mode})
			}
		default:
			p.Notes = append(p.Notes, fmt.Sprintf("%s changed since the install and is left as it is", rf.Path))
		}
	}
	// Directories install created go too, deepest first, when nothing
	// else is in them.
	p.removeRecord = true
	p.removeDirs = slices.Clone(rec.Dirs)
	slices.SortFunc(p.removeDirs, func(a, b string) int { return len(b) - len(a) })
	return p, nil
}

// installedName is the name of the skill of o.Bundle: from its manifest,
// or, for a bundle that is gone, from the record of its install, so that
// deleting a bundle first does not leave its install behind for good.
func installedName(o Options) (string, error) {
	b, err := bundle.Read(o.Bundle)
	if err == nil {
		if b.Manifest.Skill == nil {
			return "", fmt.Errorf("bundle %s has no skill, so nothing of it is installed", o.Bundle)
		}
		return b.Manifest.Skill.Name, nil
	}
	abs, aerr := filepath.Abs(o.Bundle)
	if aerr != nil {
		return "", err
	}
	pl, perr := placeOf(o, "x")
	if perr != nil {
		return "", err
	}
	records, _ := filepath.Glob(filepath.Join(filepath.Dir(pl.record), o.Agent+"-*.json"))
	for _, path := range records {
		data, rerr := os.ReadFile(path)
		var r record
		if rerr != nil || json.Unmarshal(data, &r) != nil || r.Bundle != abs || !strings.HasPrefix(r.Server, ServerPrefix) {
			continue
		}
		// readRecord checks the rest against the place of this name.
		return strings.TrimPrefix(r.Server, ServerPrefix), nil
	}
	return "", err
}

// Apply makes the plan's changes: the files, then the record.
func (p *Plan) Apply() (err error) {
	if len(p.Files) == 0 && p.recordData == nil && !p.removeRecord {
		return nil
	}
	// An install that fails half-way must not leave an agent with a
	// changed configuration and nothing that says how to undo it: the
	// record is written first, and on any error every file written so
	// far, the directories created and the record are put back.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	if p.recordData != nil {
		stateDir := filepath.Dir(filepath.Dir(p.record))
		if err := atomicfile.MkdirUntracked(stateDir); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(p.record), 0o700); err != nil {
			return err
		}
		old, rerr := os.ReadFile(p.record)
		// The record keeps the configurations as they were, which may
		// hold other servers' credentials: it is private.
		if err := atomicfile.Write(p.record, p.recordData, 0o600); err != nil {
			return err
		}
		undo = append(undo, func() { putBack(p.record, old, rerr == nil, 0o600) })
	}
	for _, d := range p.createDirs {
		if err := mkdirUndoable(d, &undo); err != nil {
			return err
		}
	}
	for _, f := range p.Files {
		old, rerr := os.ReadFile(f.Path)
		existed, mode := rerr == nil, f.Mode
		if st, err := os.Stat(f.Path); err == nil {
			mode = st.Mode().Perm()
		}
		if f.New == nil {
			if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		} else {
			if err := mkdirUndoable(filepath.Dir(f.Path), &undo); err != nil {
				return err
			}
			if err := atomicfile.Write(f.Path, f.New, f.Mode); err != nil {
				return fmt.Errorf("writing %s: %w", f.Path, err)
			}
		}
		undo = append(undo, func() { putBack(f.Path, old, existed, mode) })
	}
	if !p.removeRecord {
		return nil
	}
	if err := os.Remove(p.record); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, d := range p.removeDirs {
		removeIfOnlyIgnore(d)
		os.Remove(d) // only when empty; a directory with other files stays
	}
	return nil
}

// removeIfOnlyIgnore removes dir/.gitignore when it is the only entry of
// dir and holds what atomicfile.MkdirUntracked wrote: the state directory
// install created is then removed whole, as if it had never been.
func removeIfOnlyIgnore(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != ".gitignore" {
		return
	}
	p := filepath.Join(dir, ".gitignore")
	if b, err := os.ReadFile(p); err == nil && string(b) == atomicfile.UntrackedIgnore {
		os.Remove(p)
	}
}

// mkdirUndoable creates dir and its missing parents, adding to undo the
// removal of each directory it created (deepest first when undone).
func mkdirUndoable(dir string, undo *[]func()) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		*undo = append(*undo, func() { os.Remove(d) })
	}
	return nil
}

// putBack restores path to what it held before an Apply: the old bytes
// when it existed, nothing when it did not. It is best effort: it runs
// only after an earlier error, which is the one reported.
func putBack(path string, old []byte, existed bool, mode fs.FileMode) {
	if !existed {
		os.Remove(path)
		return
	}
	if mode == 0 {
		mode = 0o644
	}
	atomicfile.Write(path, old, mode)
}

// Diff is the plan's changes as unified diffs, one per file.
func (p *Plan) Diff() string {
	var b strings.Builder
	for _, f := range p.Files {
		from, to := "a"+f.Path, "b"+f.Path
		if f.Old == nil {
			from = "/dev/null"
		}
		if f.New == nil {
			to = "/dev/null"
		}
		b.WriteString(textdiff.Unified(from, to, f.Old, f.New))
	}
	return b.String()
}

// place is where one install of a skill for an agent and scope writes:
// the only files and directories its record may name.
type place struct {
	layout
	base                        string
	skillDir, skillFile, config string
	record, server              string
}

// placeOf computes the place of o's install of the skill name. A path
// that leads through a symbolic link is followed, so that a linked
// configuration (dotfiles) is edited where it lives rather than replaced;
// in the project scope, a link that leads out of the project is refused:
// a project someone else wrote must not make install edit files
// elsewhere.
func placeOf(o Options, name string) (place, error) {
	l, err := agentLayout(o.Agent, o.Scope, o.Project, o.Home, o.CodexHome)
	if err != nil {
		return place{}, err
	}
	base := o.Project
	if o.Scope == ScopeUser {
		base = o.Home
	}
	// A home or project that does not exist is a mistyped flag, not a
	// place to create.
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		return place{}, fmt.Errorf("the %s directory %s does not exist", o.Scope, base)
	}
	if resolved, err := filepath.EvalSymlinks(base); err == nil {
		base = resolved
	}
	pl := place{layout: l, base: base, server: ServerPrefix + name,
		record: filepath.Join(base, filepath.FromSlash(RecordDir), o.Agent+"-"+name+".json")}
	confine := o.Scope == ScopeProject
	if pl.skillDir, err = follow(filepath.Join(l.skills, name), base, confine); err != nil {
		return place{}, err
	}
	pl.skillFile = filepath.Join(pl.skillDir, "SKILL.md")
	if pl.skillFile, err = follow(pl.skillFile, base, confine); err != nil {
		return place{}, err
	}
	if pl.config, err = follow(l.config, base, confine); err != nil {
		return place{}, err
	}
	if pl.record, err = follow(pl.record, base, true); err != nil {
		return place{}, err
	}
	return pl, nil
}

// follow resolves the symbolic links of the part of path that exists.
// With confine, a path that then leaves base is an error.
func follow(path, base string, confine bool) (string, error) {
	existing, rest := path, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	out := filepath.Join(resolved, rest)
	if !confine {
		return out, nil
	}
	root, err := filepath.EvalSymlinks(base)
	if err != nil {
		return "", fmt.Errorf("%s: %w", base, err)
	}
	if rel, err := filepath.Rel(root, out); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s leads out of %s through a symbolic link (to %s); refused", path, base, out)
	}
	return out, nil
}

// readRecord reads the install record at path and checks that it names
// only what an install at pl writes: a record is a file in the project,
// which whoever wrote the project could have forged to make uninstall
// write or remove files anywhere.
func readRecord(path string, pl place) (*record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("install record %s: %w", path, err)
	}
	refuse := func(what string) error {
		return fmt.Errorf("install record %s names %s, which an install of this skill does not write; refused (was the record edited?)", path, what)
	}
	if r.Server != pl.server {
		return nil, refuse("server " + strconv.Quote(r.Server))
	}
	for _, f := range r.Files {
		if !(f.Path == pl.skillFile && f.Kind == "skill" || f.Path == pl.config && f.Kind == "config") {
			return nil, refuse(f.Kind + " " + f.Path)
		}
	}
	for _, d := range r.Dirs {
		ok := false
		for _, file := range []string{pl.skillFile, pl.config, pl.record} {
			rel, err := filepath.Rel(d, file)
			under, err2 := filepath.Rel(pl.base, d)
			if err == nil && err2 == nil && under != "." && !strings.HasPrefix(under, "..") && !strings.HasPrefix(rel, "..") {
				ok = true
			}
		}
		if !ok {
			return nil, refuse("directory " + d)
		}
	}
	return &r, nil
}

// readOptional reads a file; a missing one is nil.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}

// missingDirs returns dir and its ancestors that do not exist, outermost
// first.
func missingDirs(dir string) []string {
	var out []string
	for {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		out = append([]string{dir}, out...)
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return out
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
