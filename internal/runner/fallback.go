package runner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/starfile"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The fallback policy.
//
// When a precondition fails (ctx.check), or a deterministic step (ctx.tool,
// ctx.exec) fails when it executes, the run follows its fallback policy:
// Options.Fallback, else crystallize.toml [fallback] policy, else fail.
//
//   - fail: the run ends there with a coded reason (precondition_failed,
//     or the step's own), and nothing after the failed step runs.
//   - agent: the rest of the run is handed to a model ([fallback] model
//     names the [models.*] entry; else [models.fallback], else
//     [models.default]) through ctx.agent's loop, with the workflow's
//     tools and commands (each still checked against the run's
//     capabilities), and inputs saying the workflow's goal, the remaining
//     steps, the failed step, the failure and the run so far. The run
//     completes with the agent's answer as its output when the agent says
//     it is done, and fails otherwise.
//   - ask: the run is suspended for a person like an approval, at the
//     boundary "precondition-<step>-<kind>" or "step-<step>-failed";
//     crystallize resume RUN --approve BOUNDARY continues it. A
//     precondition a person approved is passed over (they fixed the world
//     or take it as it is: the check is evaluated again and recorded
//     either way); a failed step is executed again, once.
//
// A refusal (a capability not held, an unbound tool) is policy, not a
// divergence of the world, and never falls back. A fallback is never
// silent: the failed check or step, and every action of a fallback
// agent, carry metadata "fallback" ({"policy", and on the failure
// "reason" and "boundary"}), session.md has a phase for it, and the
// trace's crystallize_run metadata lists the fallbacks. Mining runs counts
// them per step (candidate.Step.Fallbacks), and crystallize stats per
// workflow and step.

// DefaultFallbackIterations is the fallback agent's turn limit when
// [fallback] max_iterations is not set.
const DefaultFallbackIterations = 12

// ErrFallback: the fallback agent stopped before it said it was done.
var ErrFallback = errors.New("fallback did not complete")

// checkFallback reports a policy that is not one of FallbackPolicies, and,
// before the first step, an agent policy whose model has no provider: a
// run should not find out half way that its fallback cannot run.
func checkFallback(cfg *runconfig.Config, opts Options) error {
	p := fallbackPolicy(cfg, opts)
	if !slices.Contains(runconfig.FallbackPolicies, p) {
		return fmt.Errorf("fallback policy %q, want one of fail, agent, ask", p)
	}
	if p != runconfig.FallbackAgent || opts.Model != nil || opts.DryRun {
		return nil
	}
	name := cmp.Or(cfg.Fallback.Model, "fallback")
	if _, _, ok := cfg.ModelEntry(name); !ok {
		return fmt.Errorf("%w: fallback policy agent needs a model; configure [models.%s] or [models.default] in crystallize.toml", model.ErrUnavailable, name)
	}
	return nil
}

func fallbackPolicy(cfg *runconfig.Config, opts Options) string {
	return cmp.Or(opts.Fallback, cfg.Fallback.Policy, runconfig.FallbackFail)
}

// Fallback is one failed check or step and the policy the run followed.
type Fallback struct {
	Step     int    `json:"step"`
	Check    string `json:"check,omitempty"` // "" for a failed step
	Tool     string `json:"tool,omitempty"`  // the failed step's tool
	Reason   string `json:"reason"`
	Policy   string `json:"policy"`
	Boundary string `json:"boundary"`
}

// divergence is a failed check or step the fallback policy handles.
type divergence struct {
	step     int    // the run step guarded or failed
	check    string // the check kind; "" for a failed step
	name     string // the failed step's tool name
	reason   string
	action   int // index of the failed action in h.actions
	boundary string
	err      error // the error the run ends with under fail
	// retry runs the failed step again (a person approved it).
	retry func() (starlark.Value, error)
}

// fallbackDone ends the workflow's thread once the fallback agent has
// completed the run; exec turns it into the run's output.
type fallbackDone struct{ output any }

func (*fallbackDone) Error() string { return "the fallback agent completed the run" }

// fallbackOutput reports whether err is the end of a run a fallback agent
// completed, and its output.
func fallbackOutput(err error) (any, bool) {
	var d *fallbackDone
	if errors.As(err, &d) {
		return d.output, true
	}
	return nil, false
}

// mark sets the fallback metadata of action i.
func (h *host) mark(i int, m map[string]any) {
	if i < 0 || i >= len(h.actions) {
		return
	}
	if h.actions[i].Metadata == nil {
		h.actions[i].Metadata = map[string]any{}
	}
	h.actions[i].Metadata[candidate.MetaFallback] = m
}

// fallback follows the run's policy for d.
func (h *host) fallback(d divergence) (starlark.Value, error) {
	policy := fallbackPolicy(h.cfg, h.opts)
	what := fmt.Sprintf("precondition %s of step %d failed", d.check, d.step)
	if d.check == "" {
		what = fmt.Sprintf("step %d %s failed", d.step, d.name)
	}
	meta := func(p string) map[string]any {
		h.res.Fallbacks = append(h.res.Fallbacks, Fallback{Step: d.step, Check: d.check, Tool: d.name, Reason: d.reason, Policy: p, Boundary: d.boundary})
		return map[string]any{"policy": p, "reason": d.reason, "boundary": d.boundary}
	}
	title := fmt.Sprintf("Fallback · step %d", d.step)

	// A person already decided this divergence (resume --approve, or
	// --reject): that decision comes before the policy.
	switch {
	case slices.Contains(h.opts.Reject, d.boundary):
		h.mark(d.action, meta(runconfig.FallbackAsk))
		return nil, fmt.Errorf("%w: boundary %s (--reject %s): %s", ErrRejected, d.boundary, d.boundary, d.reason)
	case slices.Contains(h.opts.Approve, d.boundary):
		h.mark(d.action, meta(runconfig.FallbackAsk))
		p := h.newPhase(title)
		if d.check == "" {
			p.Callout(session.CalloutError, "", what+" again after "+codeSpan("--approve "+d.boundary)+": "+stepvalue.OneLine(d.reason))
			return nil, d.err
		}
		p.Callout(session.CalloutUser, "", what+"; passed over by "+codeSpan("--approve "+d.boundary)+": "+stepvalue.OneLine(d.reason))
		h.passedOver = d.step
		return starlark.True, nil
	}

	switch policy {
	case runconfig.FallbackAgent:
		h.mark(d.action, meta(runconfig.FallbackAgent))
		return h.agentFallback(d, what)
	case runconfig.FallbackAsk:
		h.mark(d.action, meta(runconfig.FallbackAsk))
		if h.opts.Prompter != nil {
			ok, err := h.opts.Prompter.Ask(h.ctx, d.boundary, what+": "+d.reason)
			if err != nil {
				return nil, fmt.Errorf("fallback %s: %w", d.boundary, err)
			}
			p := h.newPhase(title)
			if !ok {
				p.Callout(session.CalloutUser, "", what+"; rejected: "+stepvalue.OneLine(d.reason))
				return nil, fmt.Errorf("%w: boundary %s (interactive): %s", ErrRejected, d.boundary, d.reason)
			}
			p.Callout(session.CalloutUser, "", what+"; approved: "+stepvalue.OneLine(d.reason))
			if d.retry != nil {
				return d.retry()
			}
			h.passedOver = d.step
			return starlark.True, nil
		}
		if d.check == "" {
			// The step runs again when the run is resumed, under its
			// own step number; the failed attempt keeps its record
			// under a name of its own.
			a := &h.actions[d.action]
			a.ID += ".failed"
			for i := range h.res.Receipts {
				if h.res.Receipts[i].Step == d.step && h.res.Receipts[i].Status == ReceiptError {
					h.res.Receipts[i].ID += ".failed"
				}
			}
		}
		h.res.Pending = &runstate.Pending{Step: d.step, Boundary: d.boundary, Prompt: h.secrets.Scrub(what + ": " + d.reason)}
		h.pendingPhase = len(h.phases)
		p := h.newPhase(title + " (pending)")
		resume := ResumeCommand(h.opts.StateDir, h.opts.RunID)
		p.Callout(session.CalloutDecision, "", what+": "+stepvalue.OneLine(d.reason)+". Fallback policy ask: "+
			codeSpan(resume+" --approve "+d.boundary)+" or "+codeSpan("--reject "+d.boundary))
		return nil, &PendingApprovalError{StateDir: h.opts.StateDir, RunID: h.opts.RunID, Boundary: d.boundary}
	default:
		h.mark(d.action, meta(runconfig.FallbackFail))
		h.newPhase(title).Callout(session.CalloutError, "", what+": "+stepvalue.OneLine(d.reason)+". Fallback policy fail: nothing after it runs.")
		return nil, d.err
	}
}

// agentFallback hands the rest of the run to the fallback agent.
func (h *host) agentFallback(d divergence, what string) (starlark.Value, error) {
	names, call := h.fallbackTools()
	inputs := map[string]any{
		"workflow":   h.w.Name,
		"parameters": h.secrets.Value(map[string]any(h.params)),
		"failure":    map[string]any{"step": d.step, "what": what, "reason": d.reason},
		"run_so_far": h.runSoFar(),
	}
	if d.check != "" {
		inputs["failure"].(map[string]any)["check"] = d.check
	} else {
		inputs["failure"].(map[string]any)["tool"] = d.name
	}
	if c := h.w.Candidate; c != nil {
		if c.ClusterKey.Goal != "" {
			inputs["goal"] = c.ClusterKey.Goal
		}
		var rest []any
		for _, s := range c.Steps {
			if s.Index >= d.step {
				rest = append(rest, map[string]any{"step": s.Index, "name": s.Name, "kind": string(s.Kind), "preconditions": toAny(s.Preconditions)})
			}
		}
		inputs["remaining_steps"] = rest
	}
	model := cmp.Or(h.cfg.Fallback.Model, "fallback")
	p := h.newPhase(fmt.Sprintf("Fallback · step %d · agent", d.step))
	p.Callout("warning", "", what+": "+stepvalue.OneLine(d.reason)+". Fallback policy agent: the rest of the run goes to model "+codeSpan(model)+" with tools "+codeSpan(orNone(names))+".")

	before := len(h.actions)
	res, err := h.agentLoop(agentSpec{
		name: "fallback", modelKey: h.cfg.Fallback.Model,
		prompt: "A crystallized workflow could not go on as recorded: " + what + " (" + d.reason + "). " +
			"Complete what remains of the workflow's goal from where the run stands, using the tools; the inputs say the goal, the remaining steps, the failure and the run so far. " +
			"Answer with the workflow's result when it is done.",
		inputs:  inputs,
		tools:   names,
		maxIter: cmp.Or(h.cfg.Fallback.MaxIterations, DefaultFallbackIterations),
		call:    call,
	})
	for i := before; i < len(h.actions); i++ {
		h.mark(i, map[string]any{"policy": runconfig.FallbackAgent, "step": d.step})
	}
	if err != nil {
		return nil, err
	}
	if res["stopped"] != "done" {
		msg := fmt.Sprintf("%s: the fallback agent stopped (%v) after %v turns before it was done", what, res["stopped"], res["iterations"])
		h.newPhase("Fallback · incomplete").Callout(session.CalloutError, "", msg)
		return nil, fmt.Errorf("%w: %s", ErrFallback, msg)
	}
	h.logLine(fmt.Sprintf("The fallback agent completed the run after %v turns and %v tool calls.", res["iterations"], res["tool_calls"]))
	return nil, &fallbackDone{output: res["output"]}
}

// fallbackTools are the tools the fallback agent may call: every tool
// and command the workflow itself calls by a literal name, each run as
// the workflow would run it (a command through its argv template) and
// under the same checks. A refusal still ends the run.
func (h *host) fallbackTools() ([]string, func(string, map[string]any) (any, error, error)) {
	names := slices.Clone(h.w.Tools)
	exec := map[string][]string{}
	for _, s := range starfile.ExecSites(h.w.File, h.w.Src) {
		if _, ok := exec[s.Name]; ok || bindingOverrides(h.cfg, h.opts.Tools, s.Name) {
			continue
		}
		exec[s.Name] = s.Argv
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	call := func(name string, args map[string]any) (any, error, error) {
		argv, ok := exec[name]
		if !ok {
			return h.callTool(toolCall{name: name, args: args, tolerant: true})
		}
		refusals := len(h.res.Refusals)
		out, err := h.callExec(name, argv, args)
		switch {
		case err == nil:
			return out, nil, nil
		case len(h.res.Refusals) > refusals, errors.Is(err, ErrBudget), errors.Is(err, ErrCancelled):
			return nil, nil, err
		}
		return nil, err, nil
	}
	return names, call
}

// runSoFar summarizes the run's actions for the fallback agent.
func (h *host) runSoFar() []any {
	out := []any{}
	for _, a := range h.actions {
		m := map[string]any{"id": a.ID, "kind": string(a.Kind), "name": a.Name}
		if a.Parameters != nil {
			m["parameters"] = a.Parameters
		}
		if st, ok := a.Metadata["status"]; ok {
			m["status"] = st
		}
		if e, ok := a.Metadata["error"]; ok {
			m["error"] = e
		}
		out = append(out, m)
	}
	return out
}

// fallible wraps a deterministic step builtin (ctx.tool, ctx.exec): when
// the step executed and failed, the run follows its fallback policy.
// Refusals, budgets, cancellation, a suspended run and a dry run keep
// their own outcome, and under the fail policy the step's error is the
// run's, as it always was.
func (h *host) fallible(fn func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return h.fallibleOn(nil, fn)
}

// fallibleOn is fallible for the failures match accepts only (all when
// nil): a model step falls back when its answer does not fit its schema
// (ErrModelOutput), a divergence of the model like a failed tool call,
// while a provider that cannot be reached still ends the run.
func (h *host) fallibleOn(match func(error) bool, fn func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		actions, refusals := len(h.actions), len(h.res.Refusals)
		v, err := fn(th, b, args, kwargs)
		if h.passedOver != 0 && len(h.actions) > actions {
			// The step ran although its precondition failed: mining the
			// run counts it as a step that needed the fallback.
			h.mark(len(h.actions)-1, map[string]any{"policy": runconfig.FallbackAsk, "step": h.passedOver})
			h.passedOver = 0
		}
		if err == nil || match != nil && !match(err) || h.opts.DryRun || fallbackPolicy(h.cfg, h.opts) == runconfig.FallbackFail || len(h.res.Refusals) > refusals || len(h.actions) == actions {
			return v, err
		}
		for _, s := range []error{ErrBudget, ErrCancelled, ErrPendingApproval, ErrJournal, ErrStepLimit, errYield} {
			if errors.Is(err, s) {
				return v, err
			}
		}
		i := len(h.actions) - 1
		a := h.actions[i]
		if a.Metadata["status"] != ReceiptError {
			return v, err
		}
		step, _ := a.Metadata["step"].(int)
		return h.fallback(divergence{
			step: step, name: a.Name, reason: h.secrets.Scrub(err.Error()), action: i,
			boundary: fmt.Sprintf("step-%d-failed", step), err: err,
			retry: func() (starlark.Value, error) { return fn(th, b, args, kwargs) },
		})
	}
}

// fallbackRecords lists the run's divergences for its trace metadata:
// every failed check or step that went to the fallback policy, from the
// actions' metadata, so a resumed run lists those before it too.
func (h *host) fallbackRecords() []any {
	var out []any
	for _, a := range h.actions {
		m, ok := a.Metadata[candidate.MetaFallback].(map[string]any)
		if !ok || m["reason"] == nil {
			continue
		}
		r := map[string]any{"action_id": a.ID, "name": a.Name, "policy": m["policy"], "reason": m["reason"], "boundary": m["boundary"]}
		if k, ok := a.Metadata["check"]; ok {
			r["check"] = k
			r["step"] = a.Metadata["guards_step"]
		} else {
			r["step"] = a.Metadata["step"]
		}
		out = append(out, r)
	}
	return out
}

// FallbackKey names the step of a failed check or step in stats: "step N
// name", or "step N" when the run does not say which step it was.
func FallbackKey(step any, name string) string {
	k := fmt.Sprintf("step %v", step)
	if name != "" {
		k += " " + name
	}
	return k
}

// FallbackCounts counts a run's divergences by step (FallbackKey), as
// stats reads them from its trace's actions.
func FallbackCounts(actions []trace.Action) map[string]int {
	out := map[string]int{}
	for _, a := range actions {
		m, ok := a.Metadata[candidate.MetaFallback].(map[string]any)
		if !ok || m["reason"] == nil {
			continue
		}
		if _, isCheck := a.Metadata["check"]; isCheck {
			name, _ := a.Metadata["step_name"].(string)
			out[FallbackKey(a.Metadata["guards_step"], name)]++
			continue
		}
		out[FallbackKey(a.Metadata["step"], a.Name)]++
	}
	return out
}
