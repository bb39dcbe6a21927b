package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/precond"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
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
	res, err := precond.Eval(h.world(), kind, callArgs)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", kind, err)
	}
	a := h.recordCheck(guards, kind, callArgs, res, time.Since(start))
	boundary := fmt.Sprintf("precondition-%d-%s", guards, kind)
	if res.OK {
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
		h.logLine(fmt.Sprintf("dry run: precondition %s of step %d failed: %s", kind, guards, res.Reason))
		return starlark.True, nil
	}
	return h.fallback(divergence{
		step: guards, check: kind, reason: res.Reason, action: a,
		boundary: boundary,
		err:      fmt.Errorf("%w: step %d: %s: %s", ErrPrecondition, guards, kind, res.Reason),
	})
}

// world is what the run's checks look at (package precond).
func (h *host) world() *precond.World {
	return &precond.World{
		Config: h.cfg, Tools: h.opts.Tools, Exec: h.tools, Secrets: h.secrets,
		Held: h.allowed, Holds: h.holds, Rehearsed: h.rehearsed, DryRun: h.opts.DryRun,
	}
}

// holds reports whether the run holds capability c: in its capability
// set, or, for exec:<program>, through shell.exec or as a program the
// workflow declares and the grants allow.
func (h *host) holds(c string) bool {
	held := h.allowed[c] || (strings.HasPrefix(c, "exec:") && h.allowed[CapShellExec])
	if !held {
		if p, ok := strings.CutPrefix(c, "exec:"); ok {
			_, granted := execPermitted(h.w.Capabilities, h.cfg.Grants.Capabilities, p)
			held = granted && slices.ContainsFunc(h.w.Capabilities, func(d string) bool { return d == c || d == CapShellExec })
		}
	}
	return held
}

// recordCheck adds a check's observation action and its session lines,
// and returns the action's index.
func (h *host) recordCheck(guards int, kind string, args map[string]any, res precond.Result, dur time.Duration) int {
	prefix := fmt.Sprintf("%s-a%02d.check", h.opts.RunID, guards)
	n := 1
	for _, a := range h.actions {
		if strings.HasPrefix(a.ID, prefix) {
			n++
		}
	}
	status := ReceiptOK
	out := map[string]any{"ok": res.OK}
	if !res.OK {
		status = "failed"
		out["reason"] = res.Reason
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
	if !res.OK {
		line += ": " + stepvalue.OneLine(res.Reason)
	}
	p.Paragraph(line)
	return len(h.actions) - 1
}
