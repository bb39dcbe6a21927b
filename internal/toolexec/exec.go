package toolexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/proc"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// MaxFileBytes bounds a file fs.read reads or fs.write writes, and the
// stdout of a command binding.
const MaxFileBytes = 8 << 20

// ErrTooLarge: an argument, a file or an output is over its size limit.
var ErrTooLarge = errors.New("size limit exceeded")

// ErrOutsideWorkspace is returned by the built-in fs tools for a path that
// is not inside a workspace root.
var ErrOutsideWorkspace = errors.New("path outside the workspace")

// maxStderr is how much of a failing command's stderr its error quotes.
const maxStderr = 2000

// stderrTail is the end of a failing command's stderr that its error
// quotes: at most maxStderr bytes, cut at a character boundary so the
// message stays valid UTF-8.
func stderrTail(stderr string) string {
	msg := strings.TrimSpace(stderr)
	if len(msg) <= maxStderr {
		return msg
	}
	cut := len(msg) - maxStderr
	for cut < len(msg) && !utf8.RuneStart(msg[cut]) {
		cut++
	}
	return "…" + msg[cut:]
}

// Execute runs one bound tool call for real. It returns, for the
// record, the argv of a command binding or the request of an http one.
func (h *Executor) Execute(name string, b *Binding, args map[string]any) (out any, argv []string, req *Request, err error) {
	switch {
	case b.Inproc != nil:
		// An in-process tool (plan.verify runs a shell) gets the same
		// time a command binding does.
		ctx, cancel := context.WithTimeout(h.ctx, runconfig.DefaultToolTimeout)
		defer cancel()
		out, err = b.Inproc.Func(ctx, args)
		if err != nil && ctx.Err() == context.DeadlineExceeded && h.ctx.Err() == nil {
			err = fmt.Errorf("%s timed out after %s: %w", name, runconfig.DefaultToolTimeout, err)
		}
		return out, nil, nil, err
	case b.Builtin == runconfig.ToolFSRead:
		out, err = h.fsRead(name, args)
		return out, nil, nil, err
	case b.Builtin == runconfig.ToolFSWrite:
		out, err = h.fsWrite(name, args)
		return out, nil, nil, err
	case b.Builtin == runconfig.ToolFSEdit:
		out, err = h.fsEdit(name, args)
		return out, nil, nil, err
	case b.Tool != nil && b.Tool.MCP != "":
		out, err = h.mcpCallTool(name, b, args)
		return out, nil, nil, err
	case b.Tool != nil && b.Tool.HTTP != nil:
		out, req, err = h.httpCall(b.Tool, args)
		return out, nil, req, err
	}
	out, argv, err = h.command(b.Tool, args)
	return out, argv, nil, err
}

// builtinTimeout bounds a file built-in. They open only regular files,
// but a file swapped for a FIFO between the check and the open, or a
// stalled network file system, would otherwise hold the run forever.
// A file on its root's own local file system, which a FIFO cannot stall
// either (openNonBlocking), is read and written without the bound: the
// goroutine and timer that bound a call cost a step more than the read.
var builtinTimeout = 30 * time.Second

// withTimeout runs f, giving up after builtinTimeout or when the run is
// cancelled. f is left to finish on its own: a blocked system call cannot
// be interrupted, but the run goes on.
func (h *Executor) withTimeout(name string, f func() (any, error)) (any, error) {
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := f()
		done <- result{out, err}
	}()
	t := time.NewTimer(builtinTimeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.out, r.err
	case <-t.C:
		return nil, fmt.Errorf("%s timed out after %s", name, builtinTimeout)
	case <-h.ctx.Done():
		return nil, h.ctx.Err()
	}
}

// ExpandCommand expands a binding's argv, working directory and
// environment for a call.
func (h *Executor) ExpandCommand(t *runconfig.ToolBinding, args map[string]any) (argv []string, dir string, env []string, err error) {
	var errs []error
	argv = make([]string, 0, len(t.Command))
	for i, tmpl := range t.Command {
		name, option := optionPosition(t, i)
		if list, ok := candidate.ArgvList(tmpl); ok && i > 0 {
			// {name...}: one argument per item, as in ctx.exec.
			items, err := argList(list, args)
			errs = append(errs, err)
			for j, v := range items {
				if option && !slices.Contains(t.AllowOptions, list) && strings.HasPrefix(v, "-") {
					errs = append(errs, fmt.Errorf("%w: argv[%d] %s item %d is %q, which starts with \"-\"; the binding takes it as an operand (list it in allow_options, or put it after a literal \"--\", if it may be an option)", ErrOptionArgument, i, tmpl, j, v))
				}
			}
			argv = append(argv, items...)
			continue
		}
		v, err := h.expand(tmpl, args)
		errs = append(errs, err)
		if err == nil && option {
			if _, refused := optionValue(t, tmpl, name, args); refused {
				errs = append(errs, fmt.Errorf("%w: argv[%d] %s is %q, which starts with \"-\"; the binding takes it as an operand (list it in allow_options, or put it after a literal \"--\", if it may be an option)", ErrOptionArgument, i, tmpl, h.secrets.Scrub(v)))
			}
		}
		argv = append(argv, v)
	}
	if len(argv) == 0 {
		return nil, "", nil, errors.Join(append(errs, errors.New("the command is empty"))...)
	}
	if p := argv[0]; strings.ContainsRune(p, '/') && !filepath.IsAbs(p) {
		argv[0] = h.cfg.Abs(p)
	}
	dir = h.cfg.Roots()[0]
	if t.Cwd != "" {
		d, err := h.expand(t.Cwd, args)
		errs = append(errs, err)
		dir = h.cfg.Abs(d)
	}
	// Only what the config passes: the variables every program needs to
	// start (execEnv) and the binding's env. Tokens in the runner's
	// environment reach a program only when its binding names them,
	// "{secret:ID}" in env, so they are also scrubbed from the records.
	env = execEnviron(h.environ)
	for _, k := range slices.Sorted(maps.Keys(t.Env)) {
		v, err := h.expand(t.Env[k], args)
		errs = append(errs, err)
		env = append(env, k+"="+v)
	}
	return argv, dir, env, errors.Join(errs...)
}

// OptionPosition reports whether argv element i of the binding's command
// is a parameter in a place where the program may read an option: an
// element that starts with a placeholder {name} (not {workspace} or a
// secret), "{ref}" as much as "{owner}/{repo}", or is a list placeholder
// {name...}, not after a literal "--", whose leading parameter
// AllowOptions does not list. It returns the leading parameter's name.
// An element whose expansion starts with "-" is refused there
// (optionValue); run --check lists these positions.
func OptionPosition(t *runconfig.ToolBinding, i int) (name string, ok bool) {
	name, ok = optionPosition(t, i)
	if !ok || slices.Contains(t.AllowOptions, name) {
		return "", false
	}
	return name, true
}

// optionPosition is OptionPosition whatever AllowOptions says: an
// element whose leading parameter is listed is still refused when its
// dash comes from a later one (optionValue).
func optionPosition(t *runconfig.ToolBinding, i int) (name string, ok bool) {
	if i <= 0 || i >= len(t.Command) {
		return "", false
	}
	el := t.Command[i]
	if list, ok := candidate.ArgvList(el); ok {
		name = list
	} else if name, ok = runconfig.LeadingPlaceholder(el); !ok {
		return "", false
	}
	if !runconfig.IsIdent(name) || name == "workspace" || slices.Contains(t.Command[1:i], "--") {
		return "", false
	}
	return name, true
}

// optionValue returns what element el (an option position whose leading
// parameter is name) becomes with args, as far as deciding whether it
// starts with "-" needs, and whether that is refused: it starts with "-"
// and the dash is not the value of name listed in AllowOptions. An empty
// leading value leaves the next placeholder leading the element, so the
// whole element is looked at, not only the first value. A secret or
// {workspace} is filled in as a placeholder that is not a dash (neither
// is a parameter of the call), and a parameter the call does not pass as
// nothing (the call fails for it anyway).
func optionValue(t *runconfig.ToolBinding, el, name string, args map[string]any) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(el); {
		c := el[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(el) && el[i+1] == c:
			b.WriteByte(c)
			i += 2
			continue
		case c == '{':
			end := strings.IndexByte(el[i:], '}')
			if end > 0 {
				key := el[i+1 : i+end]
				switch {
				case key == "workspace" || strings.HasPrefix(key, "secret:"):
					b.WriteString("_")
				case runconfig.IsIdent(key):
					if v, ok := args[key]; ok {
						b.WriteString(stepvalue.ArgString(v))
					}
				default:
					b.WriteString(el[i : i+end+1])
				}
				i += end + 1
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	v := b.String()
	if !strings.HasPrefix(v, "-") {
		return v, false
	}
	lead, _ := args[name]
	allowed := slices.Contains(t.AllowOptions, name) && strings.HasPrefix(stepvalue.ArgString(lead), "-")
	return v, !allowed
}

// GuardOptions refuses a call of a command binding that would put a value
// starting with "-" where the program may read an option (see
// OptionPosition). It is policy, checked before the call and in dry runs,
// like a capability.
func GuardOptions(b *Binding, args map[string]any) error {
	if b.Tool == nil || len(b.Tool.Command) == 0 {
		return nil
	}
	var errs []error
	for i, el := range b.Tool.Command {
		name, ok := optionPosition(b.Tool, i)
		if !ok {
			continue
		}
		if _, list := candidate.ArgvList(el); list {
			if slices.Contains(b.Tool.AllowOptions, name) {
				continue
			}
			items, ok := args[name].([]any)
			if !ok {
				items = []any{stepvalue.ArgString(args[name])}
			}
			for j, item := range items {
				if s, _ := item.(string); strings.HasPrefix(s, "-") {
					errs = append(errs, fmt.Errorf("%w: argv[%d] %s item %d is %q, which starts with \"-\"; the binding takes it as an operand (list it in allow_options, or put it after a literal \"--\", if it may be an option)", ErrOptionArgument, i, el, j, s))
				}
			}
			continue
		}
		if v, refused := optionValue(b.Tool, el, name, args); refused {
			errs = append(errs, fmt.Errorf("%w: argv[%d] %s is %q, which starts with \"-\"; the binding takes it as an operand (list it in allow_options, or put it after a literal \"--\", if it may be an option)", ErrOptionArgument, i, el, v))
		}
	}
	return errors.Join(errs...)
}

// expand replaces every {name} in tmpl by the call's argument name,
// {workspace} by the first workspace root and {secret:ID} by the value of
// the secret ID (which is then replaced in everything recorded). The
// result of a replacement is not expanded again, and "{{" and "}}" stand
// for literal braces; text in braces that is neither is kept as it is.
func (h *Executor) expand(tmpl string, args map[string]any) (string, error) {
	return h.expandWith(tmpl, args, nil, nil)
}

// expandWith is expand with escape, when not nil, applied to every
// argument value (an HTTP binding escapes URL parameters), and the name of
// every argument the template takes added to used, when not nil.
func (h *Executor) expandWith(tmpl string, args map[string]any, escape func(string) string, used map[string]bool) (string, error) {
	if !strings.ContainsAny(tmpl, "{}") {
		return tmpl, nil
	}
	var b strings.Builder
	var missing []string
	var errs []error
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		switch {
		case strings.HasPrefix(tmpl[i:], "{{"), strings.HasPrefix(tmpl[i:], "}}"):
			b.WriteByte(c)
			i += 2
			continue
		case c == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if end <= 0 {
				break
			}
			key := tmpl[i+1 : i+end]
			if id, ok := strings.CutPrefix(key, "secret:"); ok && runconfig.IsSecretID(id) {
				v, err := h.bindingSecret(id)
				errs = append(errs, err)
				b.WriteString(v)
				i += end + 1
				continue
			}
			if !runconfig.IsIdent(key) {
				break
			}
			if v, ok := args[key]; ok {
				s := stepvalue.ArgString(v)
				if escape != nil {
					s = escape(s)
				}
				b.WriteString(s)
				if used != nil {
					used[key] = true
				}
			} else if key == "workspace" {
				b.WriteString(h.cfg.Roots()[0])
			} else {
				missing = append(missing, key)
			}
			i += end + 1
			continue
		}
		b.WriteByte(c)
		i++
	}
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("the template names %s, which the call does not pass", "{"+strings.Join(missing, "}, {")+"}"))
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	return b.String(), nil
}

// bindingSecret resolves a {secret:ID} of a binding's template. A dry run
// resolves nothing: it writes the placeholder the value would be recorded
// as.
func (h *Executor) bindingSecret(id string) (string, error) {
	if h.dryRun {
		return "[redacted:" + id + "]", nil
	}
	return h.SecretValue(id)
}

// SecretValue resolves the secret id through Settings.Getenv (the
// environment, then the secrets file) and registers its value to be
// replaced in everything recorded.
func (h *Executor) SecretValue(id string) (string, error) {
	var v string
	if h.getenv != nil {
		v = h.getenv(id)
	}
	if v == "" {
		return "", fmt.Errorf("%w: %s is not set; %s", runconfig.ErrSecret, id, h.cfg.SecretHint(id))
	}
	h.secrets.Add(id, v)
	return v, nil
}

// command runs a command binding: argv directly, never through a shell,
// with the arguments as JSON on stdin.
func (h *Executor) command(t *runconfig.ToolBinding, args map[string]any) (any, []string, error) {
	argv, dir, env, err := h.ExpandCommand(t, args)
	if err != nil {
		return nil, argv, err
	}
	timeout := t.ParsedTimeout()
	if timeout == 0 {
		timeout = runconfig.DefaultToolTimeout
	}
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stepvalue.Canonical(args))
	stdout := &capped.Buffer{Max: MaxFileBytes}
	stderr := &capped.Buffer{Max: maxExecOutput}
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// A child that keeps the pipes open must not hold the run after the
	// command is killed.
	cmd.WaitDelay = time.Second
	// The command runs in a process group of its own, killed whole at
	// the timeout and when the command returns: nothing it started in
	// the background outlives the call.
	if err := proc.Run(cmd); err != nil {
		if ctx.Err() == context.DeadlineExceeded && h.ctx.Err() == nil {
			return nil, argv, fmt.Errorf("%s timed out after %s", argv[0], timeout)
		}
		if h.ctx.Err() != nil {
			return nil, argv, h.ctx.Err()
		}
		msg := stderrTail(stderr.String())
		if msg != "" {
			return nil, argv, fmt.Errorf("%s: %w: %s", argv[0], err, msg)
		}
		return nil, argv, fmt.Errorf("%s: %w", argv[0], err)
	}
	if stdout.Dropped() > 0 {
		// Cut JSON would be read as a string and mislead the next step.
		return nil, argv, fmt.Errorf("%w: output_too_large: %s printed %d bytes, more than %d", ErrTooLarge, argv[0], stdout.Total(), MaxFileBytes)
	}
	return stepvalue.ParseOutput(stdout.Bytes()), argv, nil
}

// locate finds the workspace root holding p and p relative to it. A
// relative p is relative to the first root and must not climb out of it
// lexically; an absolute p must lie under some root. os.Root then refuses
// whatever escapes through symlinks.
func (h *Executor) locate(p string) (root, rel string, err error) {
	roots := h.cfg.Roots()
	if p == "" {
		return "", "", fmt.Errorf("%w: empty path", ErrOutsideWorkspace)
	}
	// A mined path under the home directory of the traces is written
	// "~/…" (no output names the user), so it is the home directory of
	// whoever runs the workflow, as in a command's argument; never a
	// directory named "~" inside the workspace.
	if home, inHome := h.ExpandHome(p); inHome {
		if home == p {
			return "", "", fmt.Errorf("%w: %s is in the home directory, and the run has none (HOME is not set)", ErrOutsideWorkspace, p)
		}
		p = home
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsLocal(p) {
			return "", "", fmt.Errorf("%w: %s leaves the workspace root", ErrOutsideWorkspace, p)
		}
		return roots[0], p, nil
	}
	for _, r := range roots {
		if rel, err := filepath.Rel(r, p); err == nil && filepath.IsLocal(rel) {
			return r, rel, nil
		}
	}
	return "", "", fmt.Errorf("%w: %s is not under a workspace root (%s)", ErrOutsideWorkspace, p, strings.Join(roots, ", "))
}

// GuardPath refuses a file built-in's path argument in the protected set
// (see protect). A path outside the workspace is left to the call itself,
// which fails with ErrOutsideWorkspace.
func (h *Executor) GuardPath(tool string, args map[string]any) error {
	p := stepvalue.ArgString(args["path"])
	h.checked = checkedPath{}
	root, rel, err := h.locate(p)
	if err != nil {
		return nil
	}
	info, rc, err := h.protectFile(tool, p, root, rel)
	if err == nil {
		h.checked = checkedPath{path: p, root: root, rel: rel, info: info, rc: rc}
	}
	return err
}

// checkedPath is what the protected-set check of the call about to run
// found of its path (guardPath): the workspace root and the path below
// it, the root's check with the directory it pinned, and, when every
// name of the path resolved without a symlink, the file's own lstat.
// fs.read opens the file the check looked at from it (fsReadChecked)
// instead of looking at the root and the file again.
type checkedPath struct {
	path, root, rel string
	info            fs.FileInfo
	rc              *rootCheck
}

// takeChecked returns the check of the path p and forgets it, so that it
// is used at most once, by the call it was made for.
func (h *Executor) takeChecked(p string) checkedPath {
	c := h.checked
	h.checked = checkedPath{}
	if c.path != p || c.path == "" {
		return checkedPath{}
	}
	return c
}

// openRoot returns the root holding p, the directory the run pinned for
// it (see rootCheck): the one the protected-set check of this call
// looked at (chk, when the call was checked), so that the call opens
// nothing the check did not see. The protected set is not checked again
// here: the file built-ins run only through the runner's callTool, which refuses a
// protected path as policy (guardPath) before it executes the call,
// with the same arguments. Checking twice cost a step as much as the
// rest of reading a small file.
func (h *Executor) openRoot(p string, chk checkedPath) (*openRoot, string, error) {
	dir, rel, err := h.locate(p)
	if err != nil {
		return nil, "", err
	}
	rc := chk.rc
	if rc == nil {
		if rc, err = h.rootChecks.get(dir, h.guards(), &h.roots); err != nil {
			return nil, "", err
		}
	}
	if rc.open == nil {
		return nil, "", rc.openErr
	}
	return rc.open, rel, nil
}

// openRoots keeps each workspace root a file built-in opened, so that a
// call does not open and close its directory again: a run's file
// built-ins cost a few system calls each. A root is opened once and
// kept for the run (pin): another directory put at its path later is
// not opened, as the checks of the run keep to the first one too.
type openRoots struct {
	mu   sync.Mutex
	open map[string]*openRoot
	// opened, when set, is called between opening a root and resolving
	// its real path; tests re-point the root there.
	opened func(dir string)
}

// openRoot is an open workspace root: what it is, its real path when it
// was opened, and whether it is on a local file system
// (localFileSystem), whose reads cannot stall. fd is the same directory
// as a plain descriptor, which readBeneath opens files from (-1 where
// there is none).
type openRoot struct {
	root  *os.Root
	info  fs.FileInfo
	real  string
	local bool
	fd    int
}

// lstat is the lstat of rel in c: one fstatat from c's descriptor where
// there is one, else os.Root's Lstat, which opens each directory of a
// path of several names on the way.
func (c *openRoot) lstat(rel string) (fs.FileInfo, error) {
	if c.fd >= 0 {
		return lstatAt(c.fd, rel)
	}
	return c.root.Lstat(rel)
}

// readsInline reports whether the file info, found under c, is read
// without a bound: a file on c's own local file system.
func (c *openRoot) readsInline(info fs.FileInfo) bool {
	return info != nil && c.local && sameDevice(info, c.info)
}

// pinAttempts is how many times pin opens a root whose path leads to
// another directory by the time its real path is resolved.
const pinAttempts = 3

// pin returns the root open for dir, opening it on first use. The real
// path the checks compare names under is resolved after the open and
// must lead to the directory opened; if the path is re-pointed each
// time in between, the root is refused (ErrRootChanged) rather than
// checked under one directory and opened as another. A root that cannot
// be opened at all returns its open error as openErr, with nothing
// kept, so that a later call tries again.
func (o *openRoots) pin(dir string) (c *openRoot, openErr, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if c, ok := o.open[dir]; ok {
		return c, nil, nil
	}
	for range pinAttempts {
		r, err := os.OpenRoot(dir)
		if err != nil {
			return nil, err, nil
		}
		rinfo, err := r.Stat(".")
		if err != nil {
			r.Close()
			return nil, err, nil
		}
		if o.opened != nil {
			o.opened(dir)
		}
		real := realPath(dir)
		// The file system statfs names is the root's only when the path
		// still leads to the directory opened.
		local := localFileSystem(real)
		if after, err := os.Stat(real); err != nil || !os.SameFile(after, rinfo) {
			r.Close()
			continue
		}
		if o.open == nil {
			o.open = map[string]*openRoot{}
		}
		c := &openRoot{root: r, info: rinfo, real: real, local: local, fd: openDirFD(real, rinfo)}
		o.open[dir] = c
		return c, nil, nil
	}
	return nil, nil, fmt.Errorf("%w: %s led to another directory each time it was opened; the file built-ins refuse a root they cannot pin", ErrRootChanged, dir)
}

// get is pin for a caller that wants the root or an error.
func (o *openRoots) get(dir string) (*openRoot, error) {
	c, openErr, err := o.pin(dir)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, openErr
	}
	return c, nil
}

// close closes every root, when the run is over.
func (o *openRoots) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for dir, c := range o.open {
		c.root.Close()
		closeDirFD(c.fd)
		delete(o.open, dir)
	}
}

// fsRead is the built-in fs.read(path=…): {"path", "content", "bytes"},
// named name. The root and the file are looked at on the run's
// goroutine, as the protected-set check has just done; the file is
// opened and read there too when it is on the root's local file system,
// and bounded by builtinTimeout when not.
func (h *Executor) fsRead(name string, args map[string]any) (any, error) {
	p := stepvalue.ArgString(args["path"])
	chk := h.takeChecked(p)
	if out, ok := fsReadChecked(p, chk); ok {
		return out, nil
	}
	c, rel, err := h.openRoot(p, chk)
	if err != nil {
		return nil, err
	}
	// Only a regular file is read, and only up to MaxFileBytes: a FIFO
	// would block the run and a device (or a file that grows) fill its
	// memory. Stat before opening, since opening a device may do
	// anything; the opened file is checked again, in case it was
	// replaced between.
	info, err := regularFile(c.root, rel, p)
	if err != nil {
		return nil, err
	}
	if c.readsInline(info) {
		return readFileIn(c.root, rel, p)
	}
	return h.withTimeout(name, func() (any, error) { return readFileIn(c.root, rel, p) })
}

// fsReadChecked reads p from the root opened for it by an earlier call,
// when the protected-set check of this call found a regular file on the
// root's own local file system without meeting a symlink. The file is
// opened from the root's descriptor, beneath it and following no symlink
// (readBeneath), and read only when it is the very file the check
// looked at. That is what spares a call looking at the root and the file
// again: the file could be swapped for a symlink, a FIFO or a directory
// since, but then what opens is not that file; and the root is the
// directory the check resolved the path in, whatever its path leads to
// now (see rootCheck).
// It reports false when it cannot vouch for the file, and fsRead then
// takes the path through os.Root, which sees the change.
func fsReadChecked(p string, chk checkedPath) (any, bool) {
	if chk.info == nil || !chk.info.Mode().IsRegular() || chk.rc == nil || chk.rc.open == nil {
		return nil, false
	}
	c := chk.rc.open
	if c.fd < 0 || !c.readsInline(chk.info) {
		return nil, false
	}
	data, ok := readBeneath(c.fd, chk.rel, chk.info)
	if !ok {
		return nil, false
	}
	return map[string]any{"path": p, "content": string(data), "bytes": len(data)}, true
}

// readFileIn reads the regular file rel of r, p as the workflow wrote it.
func readFileIn(r *os.Root, rel, p string) (any, error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, confine(err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not_regular_file: %s is not a regular file", ErrNotRegular, p)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: file_too_large: %s is larger than %d bytes, the most fs.read reads", ErrTooLarge, p, MaxFileBytes)
	}
	return map[string]any{"path": p, "content": string(data), "bytes": len(data)}, nil
}

// ErrNotRegular is returned by the file built-ins for a path that exists
// and is not a regular file (a FIFO, a device, a directory, a socket).
var ErrNotRegular = errors.New("not a regular file")

// regularFile refuses rel (p as the workflow wrote it) when it exists in
// r and is not a regular file, and returns what it is. A missing file is
// left to the caller (nil, nil).
func regularFile(r *os.Root, rel, p string) (fs.FileInfo, error) {
	st, err := r.Stat(rel)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, confine(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not_regular_file: %s is a %s, not a regular file", ErrNotRegular, p, fileKind(st.Mode()))
	}
	return st, nil
}

// fileKind names a file's type for messages.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// fsWrite is the built-in fs.write(path=…, content=…), named name: it
// creates parent directories and returns {"path", "bytes"}. Like fsRead,
// it looks at the root and the file on the run's goroutine, and writes
// there too when the file is on the root's own local file system
// (writesInline); otherwise the write is bounded by builtinTimeout.
func (h *Executor) fsWrite(name string, args map[string]any) (any, error) {
	p := stepvalue.ArgString(args["path"])
	content := stepvalue.ArgString(args["content"])
	chk := h.takeChecked(p)
	if len(content) > MaxFileBytes {
		return nil, fmt.Errorf("%w: file_too_large: the content for %s is %d bytes, more than %d, the most fs.write writes", ErrTooLarge, p, len(content), MaxFileBytes)
	}
	c, rel, err := h.openRoot(p, chk)
	if err != nil {
		return nil, err
	}
	info, err := regularFile(c.root, rel, p)
	if err != nil {
		return nil, err
	}
	if c.writesInline(rel, info) {
		return writeFileIn(c.root, rel, p, content)
	}
	return h.withTimeout(name, func() (any, error) { return writeFileIn(c.root, rel, p, content) })
}

// writesInline reports whether rel, found under c as info (nil when it
// does not exist yet), is written without a bound: it, or else the
// nearest of its directories that exists, is on c's own local file
// system. Directories MkdirAll creates below that one are on it too.
func (c *openRoot) writesInline(rel string, info fs.FileInfo) bool {
	if !c.local {
		return false
	}
	if info != nil {
		return c.readsInline(info)
	}
	for d := filepath.Dir(rel); d != "."; d = filepath.Dir(d) {
		if st, err := c.root.Stat(d); err == nil {
			return st.IsDir() && c.readsInline(st)
		}
	}
	return true // the root itself
}

// writeFileIn writes content to the file rel of r (p as the workflow
// wrote it), creating its directories. The file is opened non-blocking,
// so that a FIFO swapped in after the check does not wait for a reader,
// and written only when what opened is a regular file.
func writeFileIn(r *os.Root, rel, p, content string) (any, error) {
	if d := filepath.Dir(rel); d != "." {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return nil, confine(err)
		}
	}
	f, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|openNonBlocking, 0o644)
	if err != nil {
		return nil, confine(err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%w: not_regular_file: %s is not a regular file", ErrNotRegular, p)
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": p, "bytes": len(content)}, nil
}

// confine marks os.Root's escape errors as ErrOutsideWorkspace.
func confine(err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: %w", ErrOutsideWorkspace, err)
	}
	return err
}
