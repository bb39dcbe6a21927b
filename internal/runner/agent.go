package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// This file holds the host methods a workflow uses when one step is more
// than one call: ctx.try_tool (a tool failure the workflow handles),
// ctx.agent (a model that calls tools until it is done), ctx.map (one
// model turn per item, several at a time) and ctx.budget (run-time
// ceilings). Each is built from the same callTool and callModel as
// ctx.tool and ctx.model, so the policy, the records and the journal are
// the ones every call gets, and a resumed run replays them call by call.

var (
	// ErrBudget: the run used up a budget it set with ctx.budget.
	ErrBudget = errors.New("run budget exceeded")
	// ErrWorker: ctx.agent named a worker preset the configuration does
	// not define.
	ErrWorker = errors.New("unknown worker")
)

// agentProtocol tells the model of an agent step how to ask for a tool.
const agentProtocol = `To call a tool, answer with only the JSON object {"tool": NAME, "args": {…}}, NAME one of "tools"; the result comes back in "transcript". Otherwise answer with the result of the step`

// tryTool implements ctx.try_tool(name, **kwargs): ctx.tool, except that
// a failed execution is returned as {"ok": False, "error": message}
// instead of ending the run; success is {"ok": True, "output": output}.
func (h *host) tryTool(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 1, &name); err != nil {
		return nil, err
	}
	callArgs, err := kwargsMap(kwargs)
	if err != nil {
		return nil, fmt.Errorf("try_tool %s: %w", name, err)
	}
	out, failure, err := h.callTool(toolCall{name: name, args: callArgs, tolerant: true})
	if err != nil {
		return nil, err
	}
	if failure != nil {
		return toStarlark(map[string]any{"ok": false, "error": failure.Error()})
	}
	return toStarlark(map[string]any{"ok": true, "output": out})
}

// agent implements ctx.agent(name, prompt="", inputs=None, tools=[],
// max_iterations=1, done_sentinel="", read_only=False, worker="",
// max_failures=0).
//
// Each iteration is one model turn (step name) given the inputs, the
// tools it may call, the protocol and the step's transcript so far. An
// answer {"tool": NAME, "args": {…}} calls that tool (tolerantly: its
// failure goes back to the model, not up to the workflow) and the loop
// goes on. Any other answer ends the step when there is no done_sentinel
// or it contains the sentinel (as text, or as {"done": true}); otherwise
// the model is asked again. The step stops after max_iterations turns,
// or after max_failures failed tool calls in a row when that is set.
//
// The last turn is offered no tools, so a step makes at most
// max_iterations-1 tool calls. A tool outside those offered is not
// called: the model is told so, and that counts as a failure. With read_only a tool whose binding declares side
// effects is refused, which ends the run as any refusal does.
//
// The result is {"output": the last answer, "done": bool, "stopped":
// "done" | "max_iterations" | "failures", "iterations": n, "tool_calls":
// n, "failures": failed tool calls in a row at the end}.
func (h *host) agent(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name, prompt, sentinel, worker string
	var inputs starlark.Value = starlark.None
	var tools *starlark.List
	maxIter, maxFailures := 1, 0
	readOnly := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "prompt?", &prompt, "inputs?", &inputs,
		"tools?", &tools, "max_iterations?", &maxIter, "done_sentinel?", &sentinel, "read_only?", &readOnly,
		"worker?", &worker, "max_failures?", &maxFailures); err != nil {
		return nil, err
	}
	in, err := toGo(inputs)
	if err != nil {
		return nil, fmt.Errorf("agent %s: inputs: %w", name, err)
	}
	var allowed []string
	if tools != nil {
		for i := range tools.Len() {
			s, ok := starlark.AsString(tools.Index(i))
			if !ok {
				return nil, fmt.Errorf("agent %s: tools[%d] is %s, want a string", name, i, tools.Index(i).Type())
			}
			allowed = append(allowed, s)
		}
	}
	modelKey := ""
	if worker != "" {
		wc, ok := h.cfg.Workers[worker]
		if !ok {
			return nil, fmt.Errorf("%w: agent %s runs worker %q, but %s defines no [workers.%s]", ErrWorker, name, worker, cmp.Or(h.cfg.File, "the configuration"), worker)
		}
		modelKey = cmp.Or(wc.Model, worker) // [models.<model>], [models.<worker>], else default
		if wc.Prompt != "" {
			prompt = strings.TrimSpace(wc.Prompt + "\n\n" + prompt)
		}
		if wc.Tools != nil {
			allowed = slices.DeleteFunc(allowed, func(t string) bool { return !slices.Contains(wc.Tools, t) })
			if tools == nil {
				allowed = slices.Clone(wc.Tools)
			}
		}
		if wc.MaxIterations > 0 {
			maxIter = wc.MaxIterations
		}
		sentinel = cmp.Or(sentinel, wc.DoneSentinel)
	}
	maxIter = max(maxIter, 1)

	res, err := h.agentLoop(agentSpec{
		name: name, prompt: prompt, inputs: in, tools: allowed, modelKey: modelKey,
		maxIter: maxIter, maxFailures: maxFailures, sentinel: sentinel,
		call: func(tool string, args map[string]any) (any, error, error) {
			return h.callTool(toolCall{name: tool, args: args, tolerant: true, readOnly: readOnly})
		},
	})
	if err != nil {
		return nil, err
	}
	return toStarlark(res)
}

// agentSpec is one run of the agent loop: ctx.agent's, or the fallback
// agent's (see fallback.go), which calls the workflow's commands too.
type agentSpec struct {
	name, prompt, sentinel, modelKey string
	inputs                           any
	tools                            []string
	maxIter, maxFailures             int
	// call runs one tool the model asked for: its output, or its failure
	// (which goes back to the model), or an error that ends the run.
	call func(tool string, args map[string]any) (out any, failure, err error)
}

// agentLoop runs the loop ctx.agent describes and returns its result.
func (h *host) agentLoop(a agentSpec) (map[string]any, error) {
	name, prompt, in, allowed, modelKey := a.name, a.prompt, a.inputs, a.tools, a.modelKey
	maxIter, maxFailures, sentinel := max(a.maxIter, 1), a.maxFailures, a.sentinel
	transcript := []any{}
	var last any
	toolCalls, failures, iter := 0, 0, 0
	stopped := "max_iterations"
	for iter < maxIter {
		iter++
		offered := allowed
		if iter == maxIter {
			offered = nil // the last turn must answer
		}
		turn := map[string]any{"iteration": iter, "max_iterations": maxIter, "tools": toAny(offered), "transcript": slices.Clone(transcript)}
		if in != nil {
			turn["inputs"] = in
		}
		if len(allowed) > 0 && len(offered) == 0 {
			turn["protocol"] = "This is the last turn: no tool can be called; answer with the result of the step."
		} else if len(allowed) > 0 {
			turn["protocol"] = agentProtocol
			if sentinel != "" {
				turn["protocol"] = agentProtocol + fmt.Sprintf(", containing %q when the step is done.", sentinel)
			} else {
				turn["protocol"] = agentProtocol + "."
			}
		} else if sentinel != "" {
			turn["protocol"] = fmt.Sprintf("Answer with the result of the step, containing %q when the step is done.", sentinel)
		}
		reply, err := h.callModel(modelCall{name: name, prompt: prompt, inputs: turn, modelKey: modelKey})
		if err != nil {
			return nil, err
		}
		last = reply
		if reply == nil && h.opts.DryRun {
			// A dry run asks no model; there is nothing to go on with.
			stopped = "done"
			break
		}
		transcript = append(transcript, map[string]any{"role": "assistant", "content": reply})
		if tool, callArgs, ok := toolRequest(reply); ok {
			var result map[string]any
			if !slices.Contains(offered, tool) {
				msg := fmt.Sprintf("tool %s is not one of this turn's tools (%s); it was not called", tool, orNone(offered))
				h.logLine(fmt.Sprintf("agent %s: the model asked for %s", name, msg))
				result = map[string]any{"error": msg}
				failures++
			} else {
				out, failure, err := a.call(tool, callArgs)
				if err != nil {
					return nil, err
				}
				toolCalls++
				if failure != nil {
					result = map[string]any{"error": failure.Error()}
					failures++
				} else {
					result = map[string]any{"output": out}
					failures = 0
				}
			}
			result["role"], result["tool"] = "tool", tool
			transcript = append(transcript, result)
			if maxFailures > 0 && failures >= maxFailures {
				stopped = "failures"
				break
			}
			continue
		}
		if sentinel == "" || isDone(reply, sentinel) {
			stopped = "done"
			break
		}
	}
	return map[string]any{
		"output": last, "done": stopped == "done", "stopped": stopped,
		"iterations": iter, "tool_calls": toolCalls, "failures": failures,
	}, nil
}

// toolRequest reports whether a model's answer asks for a tool call.
func toolRequest(reply any) (tool string, args map[string]any, ok bool) {
	m, isMap := reply.(map[string]any)
	if !isMap {
		return "", nil, false
	}
	tool, ok = m["tool"].(string)
	if !ok || tool == "" {
		return "", nil, false
	}
	args, _ = m["args"].(map[string]any)
	if args == nil {
		args = map[string]any{}
	}
	return tool, args, true
}

// isDone reports whether an answer says the step is done.
func isDone(reply any, sentinel string) bool {
	if m, ok := reply.(map[string]any); ok && m["done"] == true {
		return true
	}
	s, ok := reply.(string)
	if !ok {
		s = string(stepvalue.Canonical(reply))
	}
	return strings.Contains(s, sentinel)
}

// mapModel implements ctx.map(name, prompt="", items=[], inputs=None,
// max_concurrency=1): one model turn per item, with inputs {"item": …,
// "inputs": …}, at most max_concurrency in flight. The answers come back
// in item order and are recorded as consecutive steps in item order,
// whichever finished first.
func (h *host) mapModel(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name, prompt string
	var items *starlark.List
	var inputs starlark.Value = starlark.None
	concurrency := 1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "prompt?", &prompt, "items?", &items,
		"inputs?", &inputs, "max_concurrency?", &concurrency); err != nil {
		return nil, err
	}
	if concurrency < 1 {
		return nil, fmt.Errorf("map %s: max_concurrency %d, want at least 1", name, concurrency)
	}
	in, err := toGo(inputs)
	if err != nil {
		return nil, fmt.Errorf("map %s: inputs: %w", name, err)
	}
	var calls []modelCall
	if items != nil {
		for i := range items.Len() {
			item, err := toGo(items.Index(i))
			if err != nil {
				return nil, fmt.Errorf("map %s: items[%d]: %w", name, i, err)
			}
			turn := map[string]any{"item": item}
			if in != nil {
				turn["inputs"] = in
			}
			calls = append(calls, modelCall{name: name, prompt: prompt, inputs: turn})
		}
	}
	outs, err := h.callModels(calls, concurrency)
	if err != nil {
		return nil, err
	}
	return toStarlark(outs)
}

// budget implements ctx.budget(wall_clock_ms=0, cost_usd=0, tool_calls=0,
// model_calls=0): ceilings on the rest of the run, checked before and
// after every call. The wall
// clock also cancels a call in flight. It counts from this call in the
// current execution: a resumed run starts a new one, since the time it
// waited for a person is not the workflow's. Cost counts the whole run,
// resumed or not, and so do the call counts. Zero leaves a ceiling unset;
// a second call is an error.
func (h *host) budget(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var wall, tools, models int64
	var cost starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "wall_clock_ms?", &wall, "cost_usd?", &cost,
		"tool_calls?", &tools, "model_calls?", &models); err != nil {
		return nil, err
	}
	if h.budgetSet {
		return nil, errors.New("budget: the run's budgets are already set")
	}
	h.budgetSet = true
	c, ok := starlark.AsFloat(cost)
	if !ok || c < 0 || wall < 0 || tools < 0 || models < 0 {
		return nil, fmt.Errorf("budget: want non-negative ceilings, got wall_clock_ms %d, cost_usd %s, tool_calls %d, model_calls %d", wall, cost, tools, models)
	}
	h.maxCost, h.maxToolCalls, h.maxModelCalls = c, tools, models
	if wall > 0 {
		d := time.Duration(wall) * time.Millisecond
		h.budgetTimer = time.AfterFunc(d, func() {
			h.cancel(fmt.Errorf("%w: the wall clock budget of %d ms is used up", ErrBudget, wall))
		})
	}
	var parts []string
	if wall > 0 {
		parts = append(parts, fmt.Sprintf("wall clock %d ms", wall))
	}
	if c > 0 {
		parts = append(parts, fmt.Sprintf("cost $%g", c))
	}
	if tools > 0 {
		parts = append(parts, fmt.Sprintf("%d tool calls", tools))
	}
	if models > 0 {
		parts = append(parts, fmt.Sprintf("%d model calls", models))
	}
	if len(parts) > 0 {
		h.logLine("Budgets: " + strings.Join(parts, ", ") + ".")
	}
	return starlark.None, nil
}

// checkCalls returns ErrBudget when tools more tool calls and models
// more model calls would pass a ceiling set by ctx.budget. Replayed calls
// are not checked: the counts carried over already include them.
func (h *host) checkCalls(tools, models int) error {
	if h.maxToolCalls > 0 && int64(h.res.ToolCalls+tools) > h.maxToolCalls {
		return fmt.Errorf("%w: the run may make %d tool calls, and has made %d", ErrBudget, h.maxToolCalls, h.res.ToolCalls)
	}
	if h.maxModelCalls > 0 && int64(h.res.ModelCalls+models) > h.maxModelCalls {
		return fmt.Errorf("%w: the run may make %d model calls, and has made %d (%d more asked)", ErrBudget, h.maxModelCalls, h.res.ModelCalls, models)
	}
	return nil
}

// checkBudget returns ErrBudget once a ceiling set by ctx.budget is
// passed.
func (h *host) checkBudget() error {
	if cause := context.Cause(h.ctx); errors.Is(cause, ErrBudget) {
		return cause
	}
	if h.maxCost > 0 && h.res.CostUSD > h.maxCost {
		return fmt.Errorf("%w: the run cost $%.6f, over its budget of $%g", ErrBudget, h.res.CostUSD, h.maxCost)
	}
	return nil
}
