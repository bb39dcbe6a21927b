package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Preconditions.
//
// ctx.check(kind, **kwargs) evaluates one precondition of the next step
// (the kinds are candidate.CheckKinds; code generation writes a step's
// mined checks before it, and a workflow may add its own). A check takes
// no step number: it is recorded as an observation action guarding the
// next step (metadata "check", "status" and "guards_step"), so mining a
// run finds the same procedure with or without its checks, and receipts
// and verification see only the steps. A check whose step a resumed run
// answers from its journal passed before the run was suspended and is
// not evaluated again: the world has since moved on by the steps it
// guarded. A failed check follows the run's fallback policy (fallback.go).
// A dry run runs no program to check (branch_absent passes) and only logs
// a check that fails: it changes nothing, so its world is not the one the
// steps would find.

// ErrPrecondition: a precondition of a step failed and the run's fallback
// policy is fail.
var ErrPrecondition = errors.New("precondition failed")

// checkResult is what evaluating a check found: ok, else why not.
type checkResult struct {
	ok     bool
	reason string
}

// check implements ctx.check(kind, **kwargs).
func (h *host) check(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var kind string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 1, &kind); err != nil {
		return nil, err
	}
	guards := h.step + 1
	if h.replaying(guards) {
		return starlark.True, nil
	}
	if h.yielding(guards) {
		return nil, errYield // evaluated by the advance that performs its step
	}
	callArgs := make(map[string]any, len(kwargs))
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		v, err := toGo(kv[1])
		if err != nil {
			return nil, fmt.Errorf("check %s: argument %s: %w", kind, k, err)
		}
		callArgs[k] = v
	}
	start := time.Now()
	res, err := h.evalCheck(kind, callArgs)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", kind, err)
	}
	a := h.recordCheck(guards, kind, callArgs, res, time.Since(start))
	boundary := fmt.Sprintf("precondition-%d-%s", guards, kind)
	if res.ok {
		if j := h.journal; j != nil && j.Pending != nil && j.Pending.Boundary == boundary {
			// The run was suspended here and a person fixed the world:
			// the step still needed the fallback.
			h.passedOver = guards
			h.newPhase(fmt.Sprintf("Fallback · step %d", guards)).Callout(session.CalloutUser, "",
				fmt.Sprintf("precondition %s of step %d failed and the run was suspended (fallback policy ask); resumed with %s, it now holds.", kind, guards, codeSpan("--approve "+boundary)))
		}
		return starlark.True, nil
	}
	if h.opts.DryRun {
		// A dry run changes nothing, so the world it checks is not the
		// one the steps would find; it says so and goes on.
		h.logLine(fmt.Sprintf("dry run: precondition %s of step %d failed: %s", kind, guards, res.reason))
		return starlark.True, nil
	}
	return h.fallback(divergence{
		step: guards, check: kind, reason: res.reason, action: a,
		boundary: boundary,
		err:      fmt.Errorf("%w: step %d: %s: %s", ErrPrecondition, guards, kind, res.reason),
	})
}

// workspacePath is the file p names: p itself when absolute, else p
// under the first workspace root, as the file built-ins resolve it.
func (h *host) workspacePath(p string) string {
	p, _ = h.tools.ExpandHome(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(h.cfg.Abs(h.cfg.Roots()[0]), p)
}

// evalCheck evaluates one check. An error is a check written wrong (an
// unknown kind, a missing argument); a failed check is a result.
func (h *host) evalCheck(kind string, args map[string]any) (checkResult, error) {
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
	fail := func(format string, a ...any) (checkResult, error) {
		return checkResult{reason: h.secrets.Scrub(fmt.Sprintf(format, a...))}, nil
	}
	switch kind {
	case candidate.CheckCapability:
		c, err := str("capability")
		if err != nil {
			return checkResult{}, err
		}
		tool, _ := args["tool"].(string)
		if b, ok := toolexec.Resolve(h.cfg, h.opts.Tools, tool); tool != "" && ok && (b.Inproc != nil || b.Pattern != "") && len(b.Capabilities()) > 0 {
			// The binding performs the step; it needs what it declares.
			var missing []string
			for _, bc := range b.Capabilities() {
				if !h.allowed[bc] {
					missing = append(missing, bc)
				}
			}
			if len(missing) > 0 {
				return fail("tool %s is bound to what needs %s, which the run does not hold (it holds %s)", tool, strings.Join(missing, ", "), orNone(sortedKeys(h.allowed)))
			}
			break
		}
		held := h.allowed[c] || (strings.HasPrefix(c, "exec:") && h.allowed[CapShellExec])
		if !held {
			if p, ok := strings.CutPrefix(c, "exec:"); ok {
				_, granted := execPermitted(h.w.Capabilities, h.cfg.Grants.Capabilities, p)
				held = granted && slices.ContainsFunc(h.w.Capabilities, func(d string) bool { return d == c || d == CapShellExec })
			}
		}
		if !held {
			return fail("capability %s is not held (the run holds %s)", c, orNone(sortedKeys(h.allowed)))
		}
	case candidate.CheckInputsBound:
		var unbound []string
		for _, k := range sortedKeys(args) {
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
			return checkResult{}, err
		}
		if p == "" {
			return fail("the path is empty")
		}
		full := h.workspacePath(p)
		if !h.inRoots(full) {
			return fail("%s is outside the workspace roots", p)
		}
		if h.rehearsed[full] {
			break // an earlier step of this dry run would have written it
		}
		if _, err := os.Stat(full); err != nil {
			return fail("file %s does not exist", p)
		}
	case candidate.CheckBranchAbsent:
		br, err := str("branch")
		if err != nil {
			return checkResult{}, err
		}
		if br == "" {
			return fail("the branch name is empty")
		}
		if h.opts.DryRun {
			break // a dry run runs no program, git included
		}
		dir := h.cfg.Abs(h.cfg.Roots()[0])
		// refs/heads/ keeps the name an operand whatever it starts with.
		_, code, err := h.tools.RunArgv([]string{"git", "rev-parse", "--verify", "--quiet", "refs/heads/" + br}, dir)
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
			return checkResult{}, err
		}
		if tool, _ := args["tool"].(string); tool != "" && bindingOverrides(h.cfg, h.opts.Tools, tool) {
			break // the binding runs the step, not p
		}
		if _, err := exec.LookPath(p); err != nil || p == "" || strings.ContainsRune(p, '/') {
			return fail("program %q is not on PATH", p)
		}
	case candidate.CheckOutputShape:
		shape, ok := args["shape"].(map[string]any)
		if !ok {
			return checkResult{}, errors.New("argument shape must be a dict of key to JSON type")
		}
		v, ok := args["value"].(map[string]any)
		if !ok {
			return fail("the result of step %v is %s, not an object", args["step"], candidate.JSONType(args["value"]))
		}
		var bad []string
		for _, k := range sortedKeys(shape) {
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
		return checkResult{}, fmt.Errorf("unknown kind %q, want one of %s", kind, strings.Join(candidate.CheckKinds, ", "))
	}
	return checkResult{ok: true}, nil
}

// inRoots reports whether the absolute path p is inside a workspace root.
func (h *host) inRoots(p string) bool {
	for _, r := range h.cfg.Roots() {
		rel, err := filepath.Rel(h.cfg.Abs(r), p)
		if err == nil && filepath.IsLocal(rel) || rel == "." {
			return true
		}
	}
	return false
}

// recordCheck adds a check's observation action and its session lines,
// and returns the action's index.
func (h *host) recordCheck(guards int, kind string, args map[string]any, res checkResult, dur time.Duration) int {
	prefix := fmt.Sprintf("%s-a%02d.check", h.opts.RunID, guards)
	n := 1
	for _, a := range h.actions {
		if strings.HasPrefix(a.ID, prefix) {
			n++
		}
	}
	status := ReceiptOK
	out := map[string]any{"ok": res.ok}
	if !res.ok {
		status = "failed"
		out["reason"] = res.reason
	}
	ms := dur.Milliseconds()
	det := true
	recArgs := h.secrets.Value(args).(map[string]any)
	meta := map[string]any{"check": kind, "status": status, "guards_step": guards}
	if c := h.w.Candidate; c != nil {
		for _, s := range c.Steps {
			if s.Index == guards {
				meta["step_name"] = s.Name
			}
		}
	}
	h.actions = append(h.actions, trace.Action{
		ID:            fmt.Sprintf("%s%d", prefix, n),
		Kind:          trace.KindObservation,
		Name:          "check " + kind,
		Timestamp:     h.opts.Now().UTC().Format(time.RFC3339Nano),
		Parameters:    recArgs,
		Output:        out,
		DurationMS:    &ms,
		Deterministic: &det,
		Metadata:      meta,
	})
	line := "- " + codeSpan(callLine("check "+kind, recArgs, nil)) + " → " + status
	// Not "Step N · …": a reference to step N must name one phase.
	title := fmt.Sprintf("Preconditions of step %d", guards)
	p := h.current()
	if p.Title != title {
		p = h.newPhase(title)
	}
	if !res.ok {
		line += ": " + stepvalue.OneLine(res.reason)
	}
	p.Paragraph(line)
	return len(h.actions) - 1
}
