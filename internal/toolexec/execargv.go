package toolexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/proc"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// ErrOptionArgument is returned by ctx.exec for a value that would reach
// the program as an option: a value starting with "-" substituted for a
// whole argv element.
var ErrOptionArgument = errors.New("argument would be read as an option")

// execEnv lists the environment variables ctx.exec passes on from
// Settings.Environ (proc.BaseEnv); every other variable, tokens and
// credentials among them, is dropped.
var execEnv = proc.BaseEnv

// maxExecOutput bounds what a command's stdout and stderr each keep; the
// rest is dropped and the text says so.
const maxExecOutput = 1 << 20

// ExpandArgv expands a ctx.exec template with the command-template rules
// of command bindings (see expandWith): each placeholder is replaced
// inside its one element, so a value is never split or seen by a shell.
// An element that is a list placeholder {name...} (candidate.ArgvList)
// becomes one element per item of the list argument name, none for an
// empty list; the argument must be a list of strings (or numbers), since
// a string would have to be split to make a list. On top of those rules
// it refuses a {secret:ID} (a workflow reads a secret with ctx.secret,
// which it must declare), a placeholder in the program, and a value
// that makes an element starting with a placeholder start with "-"
// ("{ref}" as much as "{owner}/{repo}"), or an item of a list, before a
// literal "--": the program would read it as
// an option ("-rf", "--upload-pack=…") rather than as the operand the
// template means. After "--" programs read no options. A value after a
// literal prefix ("--title={title}") is the option's own value and is
// left alone.
func (h *Executor) ExpandArgv(tmpl []string, args map[string]any) ([]string, error) {
	argv := make([]string, 0, len(tmpl))
	var errs []error
	endOpts := false
	for i, el := range tmpl {
		if i > 0 && el == "--" {
			endOpts = true
		}
		if name, ok := candidate.ArgvList(el); ok && i > 0 {
			items, err := argList(name, args)
			if err != nil {
				errs = append(errs, fmt.Errorf("argv[%d] %s: %w", i, el, err))
				continue
			}
			for j, v := range items {
				if !endOpts && strings.HasPrefix(v, "-") && !normalize.SelectsOperands(tmpl, v) {
					errs = append(errs, fmt.Errorf("%w: argv[%d] %s item %d is %q, which starts with \"-\"", ErrOptionArgument, i, el, j, v))
				}
			}
			argv = append(argv, items...)
			continue
		}
		names := candidate.ArgvPlaceholders(el)
		bad := false
		for _, n := range names {
			if strings.HasPrefix(n, "secret:") {
				errs = append(errs, fmt.Errorf("argv[%d] %q: a command reads a secret from a keyword argument, ctx.secret(%q)", i, el, strings.TrimPrefix(n, "secret:")))
				bad = true
			}
		}
		if i == 0 && len(names) > 0 {
			errs = append(errs, fmt.Errorf("argv[0] %q: the program must be literal", el))
			bad = true
		}
		if bad {
			continue
		}
		v, err := h.expandWith(el, args, nil, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("argv[%d] %q: %w", i, el, err))
			continue
		}
		if _, lead := runconfig.LeadingPlaceholder(el); !endOpts && i > 0 && lead && strings.HasPrefix(v, "-") {
			errs = append(errs, fmt.Errorf("%w: argv[%d] %s is %q, which starts with \"-\"", ErrOptionArgument, i, el, v))
			continue
		}
		if i > 0 {
			v, _ = h.ExpandHome(v)
		}
		argv = append(argv, v)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return argv, nil
}

// argList is the list argument name of a list placeholder, its items as
// the strings they put in argv.
func argList(name string, args map[string]any) ([]string, error) {
	v, ok := args[name]
	if !ok {
		return nil, fmt.Errorf("the template names {%s...}, which the call does not pass", name)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %s, want a list of strings, one per argument (from the command line: --param %s='[\"a\",\"b\"]')", name, candidate.JSONType(v), name)
	}
	items := make([]string, len(list))
	for j, e := range list {
		switch e := e.(type) {
		case string:
			items[j] = e
		case json.Number:
			items[j] = string(e)
		default:
			return nil, fmt.Errorf("%s item %d is %s, want a string", name, j, candidate.JSONType(e))
		}
	}
	return items, nil
}

// ExpandHome returns v with a leading "~" (all of v, or followed by a
// separator) replaced by the home directory of Settings.Environ (HOME, or
// USERPROFILE on Windows), as a shell would expand it. Mined workflows
// write the home directory of the traces as "~" (redact.Home: no output
// names the user who ran the agent), so "~/src/repo" must reach the
// program as the home of whoever runs the workflow. Without a home in
// the environment, or for "~user" and a "~" inside a value, v is left as
// it is. inHome reports whether v names a path in the home directory at
// all ("~", "~/…"), expanded or not, so that a file built-in can refuse
// one it cannot expand rather than take "~" for a directory name.
func (h *Executor) ExpandHome(v string) (out string, inHome bool) {
	rest, ok := strings.CutPrefix(v, "~")
	if !ok || rest != "" && rest[0] != '/' && rest[0] != '\\' {
		return v, false
	}
	home := ""
	for _, kv := range h.environ {
		if k, val, ok := strings.Cut(kv, "="); ok && (k == "HOME" || k == "USERPROFILE" && home == "") && val != "" {
			home = val
		}
	}
	if home == "" {
		return v, true
	}
	return home + rest, true
}

// RunArgv runs argv in dir, without a shell, with the scrubbed
// environment, no stdin and DefaultToolTimeout. Its result is {"stdout",
// "stderr", "exit_code"}; a non-zero exit is also an error, quoting the
// end of stderr, since the next step should not run on a failed one.
func (h *Executor) RunArgv(argv []string, dir string) (out any, exitCode *int, err error) {
	ctx, cancel := context.WithTimeout(h.ctx, runconfig.DefaultToolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = execEnviron(h.environ)
	stdout := &capped.Buffer{Max: maxExecOutput}
	stderr := &capped.Buffer{Max: maxExecOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	runErr := proc.Run(cmd) // its own process group, killed when it returns
	switch {
	case ctx.Err() == context.DeadlineExceeded && h.ctx.Err() == nil:
		return nil, nil, fmt.Errorf("%s timed out after %s", argv[0], runconfig.DefaultToolTimeout)
	case h.ctx.Err() != nil:
		return nil, nil, h.ctx.Err()
	}
	var ee *exec.ExitError
	if runErr != nil && !errors.As(runErr, &ee) {
		return nil, nil, fmt.Errorf("%s: %w", argv[0], runErr) // did not start
	}
	code := cmd.ProcessState.ExitCode()
	res := map[string]any{"stdout": stdout.String(), "stderr": stderr.String(), "exit_code": code}
	if code != 0 {
		msg := stderrTail(stderr.String())
		if msg != "" {
			return res, &code, fmt.Errorf("%s: exit status %d: %s", argv[0], code, msg)
		}
		return res, &code, fmt.Errorf("%s: exit status %d", argv[0], code)
	}
	return res, &code, nil
}

// execEnviron keeps the execEnv variables of environ.
func execEnviron(environ []string) []string {
	env := []string{}
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if ok && slices.Contains(execEnv, k) {
			env = append(env, kv)
		}
	}
	return env
}
