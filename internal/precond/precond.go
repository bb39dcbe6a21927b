// Package precond evaluates the preconditions a workflow checks before a
// step (ctx.check; the kinds are candidate.CheckKinds): that a capability
// is held, inputs are bound, a file exists, a git branch does not, a
// program is on PATH, a result has its recorded shape. It looks at the
// world through a World the runner fills and decides nothing about the
// run: a failed check is a Result, and what follows it (the fallback
// policy, the record) is the runner's.
package precond

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// World is what a check looks at.
type World struct {
	Config *runconfig.Config
	// Tools are the run's in-process tools, bound by name.
	Tools map[string]toolexec.Tool
	// Exec runs programs (git) and expands paths as the run's tools do.
	Exec *toolexec.Executor
	// Secrets are replaced in every reason a check gives.
	Secrets *toolexec.Scrubber
	// Held is the run's capability set (declared ∩ granted), and Holds
	// reports whether the run holds a capability, which for
	// exec:<program> may be through shell.exec or the grants.
	Held  map[string]bool
	Holds func(capability string) bool
	// Rehearsed are the files earlier steps of a dry run would have
	// written (WorkspacePath).
	Rehearsed map[string]bool
	// DryRun runs no program to check (branch_absent passes).
	DryRun bool
}

// Result is what evaluating a check found: OK, else why not.
type Result struct {
	OK     bool
	Reason string
}

// WorkspacePath is the file p names: p itself when absolute, else p
// under the first workspace root, as the file built-ins resolve it.
func (w *World) WorkspacePath(p string) string {
	p, _ = w.Exec.ExpandHome(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(w.Config.Abs(w.Config.Roots()[0]), p)
}

// Eval evaluates one check. An error is a check written wrong (an
// unknown kind, a missing argument); a failed check is a result.
func Eval(w *World, kind string, args map[string]any) (Result, error) {
	str := func(key string) (string, error) {
		v, ok := args[key]
		if !ok {
			return "", fmt.Errorf("missing argument %s", key)
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("argument %s is %s, want a string", key, candidate.JSONType(v))
		}
		return s, nil
	}
	fail := func(format string, a ...any) (Result, error) {
		return Result{Reason: w.Secrets.Scrub(fmt.Sprintf(format, a...))}, nil
	}
	switch kind {
	case candidate.CheckCapability:
		c, err := str("capability")
		if err != nil {
			return Result{}, err
		}
		tool, _ := args["tool"].(string)
		if b, ok := toolexec.Resolve(w.Config, w.Tools, tool); tool != "" && ok && (b.Inproc != nil || b.Pattern != "") && len(b.Capabilities()) > 0 {
			// The binding performs the step; it needs what it declares.
			var missing []string
			for _, bc := range b.Capabilities() {
				if !w.Held[bc] {
					missing = append(missing, bc)
				}
			}
			if len(missing) > 0 {
				return fail("tool %s is bound to what needs %s, which the run does not hold (it holds %s)", tool, strings.Join(missing, ", "), orNone(slices.Sorted(maps.Keys(w.Held))))
			}
			break
		}
		if !w.Holds(c) {
			return fail("capability %s is not held (the run holds %s)", c, orNone(slices.Sorted(maps.Keys(w.Held))))
		}
	case candidate.CheckInputsBound:
		var unbound []string
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if v := args[k]; v == nil || v == "" {
				unbound = append(unbound, k)
			}
		}
		if len(unbound) > 0 {
			return fail("inputs %s have no value", strings.Join(unbound, ", "))
		}
	case candidate.CheckFileExists:
		p, err := str("path")
		if err != nil {
			return Result{}, err
		}
		if p == "" {
			return fail("the path is empty")
		}
		full := w.WorkspacePath(p)
		if !w.inRoots(full) {
			return fail("%s is outside the workspace roots", p)
		}
		if w.Rehearsed[full] {
			break // an earlier step of this dry run would have written it
		}
		if _, err := os.Stat(full); err != nil {
			return fail("file %s does not exist", p)
		}
	case candidate.CheckBranchAbsent:
		br, err := str("branch")
		if err != nil {
			return Result{}, err
		}
		if br == "" {
			return fail("the branch name is empty")
		}
		if w.DryRun {
			break // a dry run runs no program, git included
		}
		dir := w.Config.Abs(w.Config.Roots()[0])
		// refs/heads/ keeps the name an operand whatever it starts with.
		_, code, err := w.Exec.RunArgv([]string{"git", "rev-parse", "--verify", "--quiet", "refs/heads/" + br}, dir)
		switch {
		case code == nil && err != nil:
			return fail("cannot ask git whether branch %s exists: %v", br, err)
		case *code == 0:
			return fail("branch %s already exists", br)
		case *code != 1:
			return fail("git rev-parse --verify refs/heads/%s exited %d", br, *code)
		}
	case candidate.CheckProgramOnPath:
		p, err := str("program")
		if err != nil {
			return Result{}, err
		}
		if tool, _ := args["tool"].(string); tool != "" {
			if b, ok := toolexec.Resolve(w.Config, w.Tools, tool); ok && (b.Inproc != nil || b.Pattern != "") {
				break // the binding runs the step, not p
			}
		}
		if _, err := exec.LookPath(p); err != nil || p == "" || strings.ContainsRune(p, '/') {
			return fail("program %q is not on PATH", p)
		}
	case candidate.CheckOutputShape:
		shape, ok := args["shape"].(map[string]any)
		if !ok {
			return Result{}, errors.New("argument shape must be a dict of key to JSON type")
		}
		v, ok := args["value"].(map[string]any)
		if !ok {
			return fail("the result of step %v is %s, not an object", args["step"], candidate.JSONType(args["value"]))
		}
		var bad []string
		for _, k := range slices.Sorted(maps.Keys(shape)) {
			want, _ := shape[k].(string)
			got, present := v[k]
			switch {
			case !present:
				bad = append(bad, fmt.Sprintf("%s is missing", k))
			case candidate.JSONType(got) != want:
				bad = append(bad, fmt.Sprintf("%s is %s, want %s", k, candidate.JSONType(got), want))
			}
		}
		if len(bad) > 0 {
			return fail("the result of step %v has not the recorded shape: %s", args["step"], strings.Join(bad, "; "))
		}
	default:
		return Result{}, fmt.Errorf("unknown kind %q, want one of %s", kind, strings.Join(candidate.CheckKinds, ", "))
	}
	return Result{OK: true}, nil
}

// inRoots reports whether the absolute path p is inside a workspace root.
func (w *World) inRoots(p string) bool {
	for _, r := range w.Config.Roots() {
		rel, err := filepath.Rel(w.Config.Abs(r), p)
		if err == nil && filepath.IsLocal(rel) || rel == "." {
			return true
		}
	}
	return false
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
