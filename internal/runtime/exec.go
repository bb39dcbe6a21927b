package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ErrOutsideWorkspace is returned by the built-in fs tools for a path that
// is not inside a workspace root.
var ErrOutsideWorkspace = errors.New("path outside the workspace")

// maxStderr is how much of a failing command's stderr its error quotes.
const maxStderr = 2000

// execute runs one bound tool call for real.
func (h *host) execute(name string, b *binding, args map[string]any) (out any, argv []string, err error) {
	switch {
	case b.inproc != nil:
		out, err = b.inproc.Func(h.ctx, args)
		return out, nil, err
	case b.builtin == ToolFSRead:
		out, err = h.fsRead(args)
		return out, nil, err
	case b.builtin == ToolFSWrite:
		out, err = h.fsWrite(args)
		return out, nil, err
	}
	return h.command(b.tool, args)
}

// expandCommand expands a binding's argv, working directory and
// environment for a call.
func (h *host) expandCommand(t *ToolBinding, args map[string]any) (argv []string, dir string, env []string, err error) {
	var errs []error
	argv = make([]string, len(t.Command))
	for i, tmpl := range t.Command {
		argv[i], err = h.expand(tmpl, args)
		errs = append(errs, err)
	}
	if p := argv[0]; strings.ContainsRune(p, '/') && !filepath.IsAbs(p) {
		argv[0] = h.cfg.abs(p)
	}
	dir = h.cfg.roots()[0]
	if t.Cwd != "" {
		d, err := h.expand(t.Cwd, args)
		errs = append(errs, err)
		dir = h.cfg.abs(d)
	}
	env = append([]string(nil), h.opts.Environ...)
	for _, k := range sortedKeys(t.Env) {
		v, err := h.expand(t.Env[k], args)
		errs = append(errs, err)
		env = append(env, k+"="+v)
	}
	return argv, dir, env, errors.Join(errs...)
}

// expand replaces every {name} in tmpl by the call's argument name, or
// {workspace} by the first workspace root. The result of a replacement is
// not expanded again, and "{{" and "}}" stand for literal braces; text in
// braces that is not an identifier is kept as it is.
func (h *host) expand(tmpl string, args map[string]any) (string, error) {
	if !strings.ContainsAny(tmpl, "{}") {
		return tmpl, nil
	}
	var b strings.Builder
	var missing []string
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		switch {
		case strings.HasPrefix(tmpl[i:], "{{"), strings.HasPrefix(tmpl[i:], "}}"):
			b.WriteByte(c)
			i += 2
			continue
		case c == '{':
			end := strings.IndexByte(tmpl[i:], '}')
			if end > 0 && isIdent(tmpl[i+1:i+end]) {
				key := tmpl[i+1 : i+end]
				if v, ok := args[key]; ok {
					b.WriteString(argString(v))
				} else if key == "workspace" {
					b.WriteString(h.cfg.roots()[0])
				} else {
					missing = append(missing, key)
				}
				i += end + 1
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the command template names %s, which the call does not pass", "{"+strings.Join(missing, "}, {")+"}")
	}
	return b.String(), nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// command runs a command binding: argv directly, never through a shell,
// with the arguments as JSON on stdin.
func (h *host) command(t *ToolBinding, args map[string]any) (any, []string, error) {
	argv, dir, env, err := h.expandCommand(t, args)
	if err != nil {
		return nil, argv, err
	}
	timeout := t.timeout
	if timeout == 0 {
		timeout = DefaultToolTimeout
	}
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(canonical(args))
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	// A child that keeps the pipes open must not hold the run after the
	// command is killed.
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() == context.DeadlineExceeded && h.ctx.Err() == nil {
			return nil, argv, fmt.Errorf("%s timed out after %s", argv[0], timeout)
		}
		if h.ctx.Err() != nil {
			return nil, argv, h.ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > maxStderr {
			msg = "…" + msg[len(msg)-maxStderr:]
		}
		if msg != "" {
			return nil, argv, fmt.Errorf("%s: %w: %s", argv[0], err, msg)
		}
		return nil, argv, fmt.Errorf("%s: %w", argv[0], err)
	}
	return parseOutput(stdout.Bytes()), argv, nil
}

// locate finds the workspace root holding p and p relative to it. A
// relative p is relative to the first root and must not climb out of it
// lexically; an absolute p must lie under some root. os.Root then refuses
// whatever escapes through symlinks.
func (h *host) locate(p string) (root, rel string, err error) {
	roots := h.cfg.roots()
	if p == "" {
		return "", "", fmt.Errorf("%w: empty path", ErrOutsideWorkspace)
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

// openRoot opens the root holding p.
func (h *host) openRoot(p string) (*os.Root, string, error) {
	dir, rel, err := h.locate(p)
	if err != nil {
		return nil, "", err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", err
	}
	return r, rel, nil
}

// fsRead is the built-in fs.read(path=…): {"path", "content", "bytes"}.
func (h *host) fsRead(args map[string]any) (any, error) {
	p := argString(args["path"])
	r, rel, err := h.openRoot(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := r.ReadFile(rel)
	if err != nil {
		return nil, confine(err)
	}
	return map[string]any{"path": p, "content": string(data), "bytes": len(data)}, nil
}

// fsWrite is the built-in fs.write(path=…, content=…): it creates parent
// directories and returns {"path", "bytes"}.
func (h *host) fsWrite(args map[string]any) (any, error) {
	p := argString(args["path"])
	content := argString(args["content"])
	r, rel, err := h.openRoot(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if d := filepath.Dir(rel); d != "." {
		if err := r.MkdirAll(d, 0o755); err != nil {
			return nil, confine(err)
		}
	}
	if err := r.WriteFile(rel, []byte(content), 0o644); err != nil {
		return nil, confine(err)
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
