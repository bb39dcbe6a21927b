package runner

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/membudget"
	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/verify"
)

// host is the state of one run: the ctx object's methods and everything
// recorded so far.
type host struct {
	ctx  context.Context
	w    *Workflow
	cfg  *runconfig.Config
	opts Options
	res  *Result

	// allowed is the run's capability set: declared ∩ granted.
	allowed map[string]bool
	// rehearsed are the files a dry run's fs.write calls would have
	// created (precond.World.WorkspacePath), so that a later step's file_exists check
	// holds as it would in a real run.
	rehearsed map[string]bool
	secrets   *toolexec.Scrubber
	// tools executes the run's tool calls (exec.go).
	tools   *toolexec.Executor
	step    int
	actions []trace.Action
	phases  []runrecord.Phase
	model   string // last model that answered, for session.md
	// providers are the model clients made so far, by [models.*] key.
	providers map[string]model.Provider
	// expect is what the run is verified against (Options.Verify).
	expect *verify.Expectation

	// params are the run's arguments, calls its completed steps, for the
	// journal of a suspended run.
	params Params
	calls  []JournalCall
	// journal is set when resuming: steps before replayUntil are
	// answered from it. pendingPhase is the index of the phase of a
	// pending approval, -1 when there is none.
	journal      *Journal
	replayUntil  int
	pendingPhase int
	// driven is set by Advance: the run performs the step at
	// replayUntil only, and writes nothing until it ends.
	driven bool

	ctxValue *ctxObject

	// bound holds the binding of each tool name called so far, nil for
	// a name nothing binds (see resolve).
	bound map[string]*toolexec.Binding

	// cancel ends the run's context; ctx.budget's wall clock calls it
	// with an ErrBudget cause. maxCost is the cost ceiling (0: none).
	cancel      context.CancelCauseFunc
	budgetSet   bool
	budgetTimer *time.Timer
	maxCost     float64
	// maxToolCalls and maxModelCalls are call ceilings (0: none).
	maxToolCalls, maxModelCalls int64
	// mem is the run's memory budget, set when the workflow starts.
	mem *membudget.Budget

	// passedOver is the step whose failed precondition a person passed
	// over (fallback.go); the step's action is marked when it runs.
	passedOver int
}

func newHost(ctx context.Context, w *Workflow, cfg *runconfig.Config, opts Options) *host {
	ctx, cancel := context.WithCancelCause(ctx)
	h := &host{
		ctx: ctx, cancel: cancel, w: w, cfg: cfg, opts: opts,
		res: &Result{
			RunID: opts.RunID, Workflow: w.Name, DryRun: opts.DryRun,
			AllowUnapproved: opts.AllowUnapproved && w.Bundle != nil && !w.Ready(),
		},
		allowed:      map[string]bool{},
		pendingPhase: -1,
		secrets:      &toolexec.Scrubber{},
	}
	h.tools = newExecutor(ctx, cfg, opts, h.secrets)
	// The state key authenticates journals and approvals: whoever reads
	// it can forge them. The file built-ins refuse it (protect), but a
	// tool may print it, so its value is replaced in everything recorded
	// like a secret's.
	if key, err := stateKey(opts.StateDir, false); err == nil {
		h.secrets.Add(StateKeySecret, hex.EncodeToString(key))
	}
	for _, c := range w.Capabilities {
		if slices.Contains(cfg.Grants.Capabilities, c) {
			h.allowed[c] = true
		}
	}
	h.ctxValue = &ctxObject{h: h}
	h.ctxValue.methods = map[string]*starlark.Builtin{
		"tool":    starlark.NewBuiltin("tool", h.fallible(h.tool)),
		"model":   starlark.NewBuiltin("model", h.fallibleOn(isModelOutput, h.modelCall)),
		"approve": starlark.NewBuiltin("approve", h.approve),
		"secret":  starlark.NewBuiltin("secret", h.secret),
		"log":     starlark.NewBuiltin("log", h.log),
		"fail":    starlark.NewBuiltin("fail", h.fail),

		"try_tool": starlark.NewBuiltin("try_tool", h.tryTool),
		"agent":    starlark.NewBuiltin("agent", h.agent),
		"map":      starlark.NewBuiltin("map", h.mapModel),
		"budget":   starlark.NewBuiltin("budget", h.budget),
		"exec":     starlark.NewBuiltin("exec", h.fallible(h.execBuiltin)),
		"check":    starlark.NewBuiltin("check", h.check),
	}
	for name, m := range h.agentMethods() { // agentapi.go
		h.ctxValue.methods[name] = m
	}
	return h
}

// newExecutor is the executor of a run's tool calls under cfg and opts,
// adding the secrets it resolves to secrets.
func newExecutor(ctx context.Context, cfg *runconfig.Config, opts Options, secrets *toolexec.Scrubber) *toolexec.Executor {
	return toolexec.New(ctx, cfg, toolexec.Settings{
		Environ: opts.Environ, Getenv: opts.Getenv, DryRun: opts.DryRun,
		StateDir: opts.StateDir, HTTPClient: opts.HTTPClient, Secrets: secrets,
	})
}

// ctxObject is the ctx a workflow receives.
type ctxObject struct {
	h       *host
	methods map[string]*starlark.Builtin
}

var _ starlark.HasAttrs = (*ctxObject)(nil)

func (c *ctxObject) String() string        { return "<ctx>" }
func (c *ctxObject) Type() string          { return "ctx" }
func (c *ctxObject) Freeze()               {}
func (c *ctxObject) Truth() starlark.Bool  { return true }
func (c *ctxObject) Hash() (uint32, error) { return 0, errors.New("unhashable: ctx") }
func (c *ctxObject) AttrNames() []string   { return sortedKeys(c.methods) }
func (c *ctxObject) Attr(name string) (starlark.Value, error) {
	if m, ok := c.methods[name]; ok {
		return m, nil
	}
	return nil, nil // starlark reports "ctx has no .name field or method"
}

func (h *host) value() starlark.Value { return h.ctxValue }

// current returns the phase log lines go to, starting one if none has.
func (h *host) current() *runrecord.Phase {
	if len(h.phases) == 0 {
		h.phases = append(h.phases, runrecord.Phase{Title: "Start"})
	}
	return &h.phases[len(h.phases)-1]
}

func (h *host) newPhase(title string) *runrecord.Phase {
	h.phases = append(h.phases, runrecord.Phase{Title: title})
	return &h.phases[len(h.phases)-1]
}

func (h *host) logLine(msg string) {
	// Every line up to the suspended step (replayUntil) was logged before
	// the run was suspended, including one after the last completed step.
	if h.step < h.replayUntil {
		return
	}
	msg = h.secrets.Scrub(msg)
	h.current().Paragraph(msg)
	if h.opts.Log != nil {
		fmt.Fprintf(h.opts.Log, "%s\n", msg)
	}
}

// kwargsMap converts keyword arguments to a generic object.
func kwargsMap(kwargs []starlark.Tuple) (map[string]any, error) {
	args := make(map[string]any, len(kwargs))
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		v, err := toGo(kv[1])
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", k, err)
		}
		args[k] = v
	}
	return args, nil
}

// tool implements ctx.tool(name, **kwargs).
func (h *host) tool(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 1, &name); err != nil {
		return nil, err
	}
	callArgs, err := kwargsMap(kwargs)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	out, failure, err := h.callTool(toolCall{name: name, args: callArgs})
	if err == nil && failure != nil {
		err = failure // unreachable: only tolerant calls report failures
	}
	if err != nil {
		return nil, err
	}
	return toStarlark(out)
}

// toolCall is one tool call, from ctx.tool or from a step that calls
// tools itself (ctx.try_tool, ctx.agent).
type toolCall struct {
	name string
	args map[string]any
	// tolerant reports a failed execution as a failure value instead of
	// an error that ends the run; the failure is journaled, so a resumed
	// run sees it again. A refusal (unbound tool, missing capability,
	// a read-only step reaching a writing tool) always ends the run: a
	// workflow cannot catch its way around the policy.
	tolerant bool
	// readOnly refuses a binding that declares side effects or writes
	// files.
	readOnly bool
}

// callTool checks, executes and records one tool call. It returns the
// output; for a tolerant call whose execution failed, the failure (with
// err nil); otherwise err ends the run.
func (h *host) callTool(c toolCall) (out any, failure, err error) {
	name, callArgs := c.name, c.args
	if err := h.checkBudget(); err != nil {
		return nil, nil, err
	}
	h.step++
	step := h.step
	if h.replaying(step) {
		return h.replayCall(step, "tool", name, stepvalue.Digest(h.secrets.Value(callArgs)))
	}
	if h.yielding(step) {
		return nil, nil, errYield
	}
	if err := h.checkCalls(1, 0); err != nil {
		return nil, nil, err
	}
	if err := literalTool(h.w, name); err != nil {
		h.refuse(step, name, err.Error(), nil)
		return nil, nil, err
	}
	bind, ok := h.resolve(name)
	if !ok {
		err := &UnboundError{Names: []string{name}}
		h.refuse(step, name, err.Error(), nil)
		return nil, nil, err
	}
	var missing []string
	caps := h.callCapabilities(step, name, bind)
	// A dry run of a built-in no binding takes needs its capability
	// declared, not granted, as a dry run of a command does: it performs
	// nothing, and a workflow mined from agents' file edits rehearses
	// with no configuration.
	rehearsal := h.opts.DryRun && bind.Builtin != "" && bind.Pattern == ""
	for _, c := range caps {
		if !h.allowed[c] && !(rehearsal && slices.Contains(h.w.Capabilities, c)) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		err := fmt.Errorf("%w: tool %s needs %s, which the run does not hold (it holds the workflow's declared capabilities that crystallize.toml [grants] grants: %s)",
			ErrCapability, name, strings.Join(missing, ", "), orNone(sortedKeys(h.allowed)))
		h.refuse(step, name, err.Error(), missing)
		return nil, nil, err
	}
	if c.readOnly && (len(h.callSideEffects(step, name, bind, callArgs)) > 0 || runconfig.WritesFiles(bind.Builtin)) {
		err := fmt.Errorf("%w: tool %s declares side effects, and the step calling it is read-only", ErrCapability, name)
		h.refuse(step, name, err.Error(), nil)
		return nil, nil, err
	}
	if bind.Builtin != "" {
		// The protected set is policy, like a capability: refused before
		// the call, dry run or not, and never a tolerable failure.
		if err := h.tools.GuardPath(bind.Builtin, callArgs); err != nil {
			h.refuse(step, name, err.Error(), nil)
			return nil, nil, err
		}
	}

	if err := checkArgumentSize(name, callArgs); err != nil {
		h.refuse(step, name, err.Error(), nil)
		return nil, nil, err
	}
	if err := toolexec.GuardOptions(bind, callArgs); err != nil {
		h.refuse(step, name, err.Error(), nil)
		return nil, nil, err
	}

	recArgs := h.secrets.Value(callArgs).(map[string]any)
	start := time.Now()
	var argv []string
	var req *toolexec.Request
	status := ReceiptOK
	if h.opts.DryRun {
		status = ReceiptDryRun
		switch {
		case bind.Tool != nil && len(bind.Tool.Command) > 0:
			argv, _, _, err = h.tools.ExpandCommand(bind.Tool, callArgs)
		case bind.Tool != nil && bind.Tool.HTTP != nil:
			req, err = h.tools.ExpandHTTP(bind.Tool.HTTP, callArgs)
		}
		out = h.dryRunAnswer(step, name, h.callKind(step, name, bind), recArgs)
		if bind.Builtin == runconfig.ToolFSWrite && err == nil {
			if h.rehearsed == nil {
				h.rehearsed = map[string]bool{}
			}
			h.rehearsed[h.world().WorkspacePath(stepvalue.ArgString(callArgs["path"]))] = true
		}
	} else {
		out, argv, req, err = h.tools.Execute(name, bind, callArgs)
	}
	dur := time.Since(start)
	if err != nil {
		status = ReceiptError
	}
	recOut := h.secrets.Value(out)
	effects := h.callSideEffects(step, name, bind, recArgs)
	if runconfig.WritesFiles(bind.Builtin) && err == nil && !h.opts.DryRun {
		effects = append(effects, trace.SideEffect{Kind: "file_write", Target: stepvalue.ArgString(recArgs["path"]), Capability: "fs.write", Mutation: toolexec.FileMutation[bind.Builtin]})
	}
	argsDigest := h.record(step, h.callKind(step, name, bind), name, recArgs, recOut, caps, effects, status, dur, argv, err)
	if req != nil {
		h.recordRequest(req)
	}
	h.recordMCP(bind, name)
	h.res.ToolCalls++
	if err != nil {
		err = h.publicError(fmt.Errorf("tool %s: %w", name, err))
		if berr := h.checkBudget(); berr != nil {
			return nil, nil, errors.Join(err, berr)
		}
		if !c.tolerant {
			return nil, nil, err
		}
		h.journalFailure(step, "tool", name, argsDigest, err)
		return nil, err, nil
	}
	h.journalCall(step, "tool", name, argsDigest, recOut)
	return out, nil, nil
}

// resolve is resolve for the run's configuration and tools, each name
// looked up once: what binds a name does not change during a run, and a
// workflow calls the same few tools over and over.
func (h *host) resolve(name string) (*toolexec.Binding, bool) {
	if b, ok := h.bound[name]; ok {
		return b, b != nil
	}
	b, ok := toolexec.Resolve(h.cfg, h.opts.Tools, name)
	if h.bound == nil {
		h.bound = map[string]*toolexec.Binding{}
	}
	h.bound[name] = b
	return b, ok
}

// record adds the action, receipt and session phase of one executed call,
// and returns the digest of its arguments, which the journal keeps too.
func (h *host) record(step int, kind trace.Kind, name string, args map[string]any, out any, caps []string, effects []trace.SideEffect, status string, dur time.Duration, argv []string, callErr error) (argsDigest string) {
	h.res.Steps++
	ms := dur.Milliseconds()
	det := kind != trace.KindModelCall
	// Records keep at most runrecord.MaxString of a string; the receipt's
	// digests are of the whole values.
	shown, _ := runrecord.Clip(args).(map[string]any)
	a := trace.Action{
		ID:            recordID(h.opts.RunID, "-a", step),
		Kind:          kind,
		Name:          name,
		Timestamp:     h.opts.Now().UTC().Format(time.RFC3339Nano),
		Parameters:    shown,
		Output:        runrecord.Clip(out),
		Capabilities:  caps,
		SideEffects:   effects,
		DurationMS:    &ms,
		Deterministic: &det,
	}
	if kind == trace.KindModelCall {
		a.Parameters = nil
		a.Inputs = shown
	}
	meta := map[string]any{"step": step, "status": status}
	if argv != nil {
		for i, a := range argv {
			argv[i] = h.secrets.Scrub(a)
		}
		meta["argv"] = toAny(argv)
	}
	if callErr != nil {
		meta["error"] = h.secrets.Scrub(callErr.Error())
	}
	a.Metadata = meta
	h.actions = append(h.actions, a)

	// The output's canonical JSON is both digested and shown.
	outJSON := stepvalue.Canonical(out)
	r := Receipt{
		ID:   recordID(h.opts.RunID, "-r", step),
		Step: step, Kind: string(kind), Tool: name, Status: status,
		ArgumentsSHA256: stepvalue.Digest(args), ResultSHA256: stepvalue.DigestJSON(outJSON),
		SideEffects: effects, DurationMS: ms,
	}
	if r.SideEffects == nil {
		r.SideEffects = []trace.SideEffect{}
	}
	h.res.Receipts = append(h.res.Receipts, r)

	// A step's phase holds one tool call list and the receipt after it.
	p := h.newPhase("Step " + strconv.Itoa(step) + " · " + name)
	p.Lines = make([]string, 0, 5)
	p.Blocks = make([]session.Block, 0, 2)
	call := session.ToolCall{Result: codeSpan(stepvalue.Clip(string(outJSON), 200)) + " (" + string(status) + ", " + strconv.FormatInt(ms, 10) + " ms)"}
	call.Tool, call.Args, _ = strings.Cut(stepvalue.OneLine(callLine(name, shown, argv)), " ")
	for _, se := range effects {
		call.SideEffects = append(call.SideEffects, codeSpan(strings.TrimSpace(se.Kind+" "+se.Target)))
	}
	p.ToolCall(call)
	p.Paragraph("Receipt `" + r.ID + "`: arguments " + r.ArgumentsSHA256 + ", result " + r.ResultSHA256 + ".")
	if callErr != nil {
		p.Callout(session.CalloutError, "", stepvalue.OneLine(h.secrets.Scrub(callErr.Error())))
	}
	if h.mem != nil {
		h.mem.AddOwn(recordBytes(outJSON, p.Lines))
	}
	return r.ArgumentsSHA256
}

// recordID is the id of a step's action or receipt: the run's id, sep,
// and the step number of at least two digits.
func recordID(runID, sep string, step int) string {
	n := strconv.Itoa(step)
	if step >= 0 && step < 10 {
		n = "0" + n
	}
	return runID + sep + n
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// refuse records a call refused before it happened.
func (h *host) refuse(step int, name, reason string, missing []string) {
	reason = h.secrets.Scrub(reason)
	h.res.Refusals = append(h.res.Refusals, Refusal{Step: step, Tool: name, Reason: reason, Missing: missing})
	p := h.newPhase(fmt.Sprintf("Step %d · %s (refused)", step, name))
	p.Callout(session.CalloutError, "", "Refused before it ran: "+stepvalue.OneLine(reason))
}

// fixture returns the output the bundle's fixtures recorded for a call:
// the first action of that name and kind whose arguments equal args, else
// the first of that name and kind, else nil.
func (h *host) fixture(name string, kind trace.Kind, args any) any {
	want := string(stepvalue.Canonical(args))
	var first *trace.Action
	for _, t := range h.w.Fixtures {
		for i := range t.Actions {
			a := &t.Actions[i]
			if a.Name != name || (a.Kind != kind && !(kind == trace.KindToolCall && a.Kind == trace.KindExternalAPICall)) {
				continue
			}
			recorded := any(a.Parameters)
			if kind == trace.KindModelCall && a.Inputs != nil {
				recorded = a.Inputs
			}
			if string(stepvalue.Canonical(recorded)) == want {
				return a.Output
			}
			if first == nil {
				first = a
			}
		}
	}
	if first != nil {
		return first.Output
	}
	return nil
}

// modelCall implements ctx.model(name, prompt=None, inputs=None,
// schema=None).
func (h *host) modelCall(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name, prompt string
	var inputs, schema starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "prompt?", &prompt, "inputs?", &inputs, "schema?", &schema); err != nil {
		return nil, err
	}
	in, err := toGo(inputs)
	if err != nil {
		return nil, fmt.Errorf("model %s: inputs: %w", name, err)
	}
	sc, err := toGo(schema)
	if err != nil {
		return nil, fmt.Errorf("model %s: schema: %w", name, err)
	}
	out, err := h.callModel(modelCall{name: name, prompt: prompt, inputs: in, schema: sc})
	if err != nil {
		return nil, err
	}
	return toStarlark(out)
}

// isModelOutput reports a model answer that does not fit its step's
// schema, the model failure the fallback policy handles.
func isModelOutput(err error) bool { return errors.Is(err, model.ErrOutput) }

// modelCall is one model turn.
type modelCall struct {
	name           string // the step's name, recorded
	prompt         string
	inputs, schema any
	// modelKey selects the [models.*] entry instead of name (a worker
	// preset's model); "" means name's.
	modelKey string
}

// callModel records one model turn and returns its answer. Provider
// errors end the run.
func (h *host) callModel(c modelCall) (any, error) {
	resps, err := h.callModels([]modelCall{c}, 1)
	if err != nil {
		return nil, err
	}
	return resps[0], nil
}

// callModels answers calls, at most concurrency at a time, and records
// them in order as consecutive steps, so a run's record and journal do
// not depend on which provider answered first. The first provider error,
// in call order, ends the run once every call has returned.
func (h *host) callModels(calls []modelCall, concurrency int) ([]any, error) {
	if err := h.checkBudget(); err != nil {
		return nil, err
	}
	type result struct {
		resp  *model.Response
		err   error
		dur   time.Duration
		dryRn bool
	}
	first := h.step + 1
	fresh := 0
	for i := range calls {
		if !h.replaying(first + i) {
			fresh++
		}
	}
	if h.yielding(first) {
		return nil, errYield
	}
	if err := h.checkCalls(0, fresh); err != nil {
		return nil, err
	}
	h.step += len(calls)
	outs := make([]any, len(calls))
	recArgs := make([]map[string]any, len(calls))
	results := make([]result, len(calls))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(concurrency, 1))
	for i, c := range calls {
		step := first + i
		recIn := h.secrets.Value(c.inputs)
		recArgs[i] = map[string]any{"prompt": h.secrets.Scrub(c.prompt), "inputs": recIn}
		if c.prompt == "" {
			delete(recArgs[i], "prompt")
		}
		if h.replaying(step) {
			continue
		}
		key := cmp.Or(c.modelKey, c.name)
		m, replay, err := h.modelFor(key)
		switch {
		case err != nil:
			results[i] = result{err: err}
		case replay:
			out := h.fixture(c.name, trace.KindModelCall, recIn)
			if h.opts.DryRun {
				// A dry run lists a model step with the inputs this run
				// would send, as it lists a tool call, so a reviewer sees
				// what reaches the model.
				h.res.DryRunCalls = append(h.res.DryRunCalls, DryRunCall{Step: step, Tool: c.name, Arguments: recArgs[i], Answer: out, Source: AnswerRecorded})
			}
			if out == nil && !h.opts.DryRun {
				err = fmt.Errorf("%w: replay has no recorded output for model step %s", model.ErrUnavailable, c.name)
			}
			results[i] = result{resp: &model.Response{Output: out, Model: runconfig.ProviderReplay}, err: err, dryRn: h.opts.DryRun}
		default:
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				start := time.Now()
				resp, err := m.Complete(h.ctx, model.Request{Step: step, Name: c.name, Prompt: c.prompt, Inputs: c.inputs, Schema: c.schema})
				results[i] = result{resp: resp, err: err, dur: time.Since(start)}
			}()
		}
	}
	wg.Wait()
	var firstErr error
	for i, c := range calls {
		step := first + i
		if h.replaying(step) {
			out, _, err := h.replayCall(step, "model", c.name, stepvalue.Digest(recArgs[i]))
			if err != nil {
				return nil, err
			}
			outs[i] = out
			continue
		}
		r := results[i]
		resp, err := r.resp, r.err
		status := ReceiptOK
		if r.dryRn {
			status = ReceiptDryRun
		}
		if resp == nil {
			resp = &model.Response{}
		}
		if err != nil {
			status = ReceiptError
		}
		argsDigest := h.record(step, trace.KindModelCall, c.name, recArgs[i], h.secrets.Value(resp.Output), nil, nil, status, r.dur, nil, err)
		a := &h.actions[len(h.actions)-1]
		a.Cost = &trace.Cost{Model: resp.Model, ModelCalls: 1, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens, TotalCostUSD: resp.CostUSD}
		u := &ModelUsage{Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens, CostUSD: resp.CostUSD}
		h.res.Receipts[len(h.res.Receipts)-1].Usage = u
		p := &h.phases[len(h.phases)-1]
		p.Paragraph(fmt.Sprintf("Model %s: %d input + %d output tokens, $%.6f.", codeSpan(cmp.Or(resp.Model, "none")), u.InputTokens, u.OutputTokens, u.CostUSD))
		if resp.Model != "" {
			h.model = resp.Model
		}
		h.res.ModelCalls++
		h.res.TokensUsed += resp.InputTokens + resp.OutputTokens
		h.res.CostUSD += resp.CostUSD
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("model %s: %w", c.name, err)
			}
			continue
		}
		out := h.secrets.Value(resp.Output)
		h.journalCall(step, "model", c.name, argsDigest, out)
		outs[i] = resp.Output
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := h.checkBudget(); err != nil {
		return nil, err
	}
	return outs, nil
}

// modelFor returns what answers the model step name: Options.Model, else
// replay in a dry run, else the provider its [models.*] entry configures
// (replay true for provider replay). Clients are made once per entry.
func (h *host) modelFor(name string) (m model.Provider, replay bool, err error) {
	switch {
	case h.opts.Model != nil:
		return h.opts.Model, false, nil
	case h.opts.DryRun:
		return nil, true, nil
	}
	key, mc, ok := h.cfg.ModelEntry(name)
	if !ok {
		return nil, false, withRemedy(fmt.Errorf("%w: model step %s has no provider; configure [models.default] or [models.%s] in crystallize.toml", model.ErrUnavailable, name, name), RemedyDryRun, "")
	}
	if mc.Provider == runconfig.ProviderReplay {
		return nil, true, nil
	}
	if m, ok := h.providers[key]; ok {
		return m, false, nil
	}
	apiKey, err := h.apiKey(key, mc)
	if err != nil {
		return nil, false, err
	}
	m, err = model.NewProvider(mc, apiKey, h.opts.HTTPClient)
	if err != nil {
		return nil, false, err
	}
	if h.providers == nil {
		h.providers = map[string]model.Provider{}
	}
	h.providers[key] = m
	return m, false, nil
}

// apiKey resolves the api_key secret of [models.key]; its value is
// replaced in everything recorded from then on.
func (h *host) apiKey(key string, mc runconfig.ModelConfig) (string, error) {
	if mc.APIKey == "" {
		return "", nil
	}
	v, err := h.tools.SecretValue(mc.APIKey)
	if err != nil {
		return "", fmt.Errorf("models.%s.api_key: %w", key, err)
	}
	return v, nil
}

// approve implements ctx.approve(boundary, prompt=""). A boundary is
// decided, in this order, by Options.Reject, Options.Approve, a dry run
// (which passes it), or Options.Prompter; with none of them the run is
// suspended (ErrPendingApproval) and Resume continues it.
func (h *host) approve(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var boundary, prompt string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "boundary", &boundary, "prompt?", &prompt); err != nil {
		return nil, err
	}
	h.step++
	step := h.step
	argsDigest := stepvalue.Digest(map[string]any{"boundary": boundary, "prompt": h.secrets.Scrub(prompt)})
	if h.replaying(step) {
		return h.replay(step, "approve", boundary, argsDigest)
	}
	if h.yielding(step) {
		return nil, errYield
	}
	var approver string
	approved := true
	switch {
	case slices.Contains(h.opts.Reject, boundary):
		approver, approved = "--reject "+boundary, false
	case slices.Contains(h.opts.Approve, boundary):
		approver = "--approve " + boundary
	case h.opts.DryRun:
		approver = "dry run"
	case h.opts.Prompter != nil:
		ok, err := h.opts.Prompter.Ask(h.ctx, boundary, prompt)
		if err != nil {
			return nil, fmt.Errorf("approval %s: %w", boundary, err)
		}
		approver, approved = "interactive", ok
	default:
		h.res.Pending = &runstate.Pending{Step: step, Boundary: boundary, Prompt: h.secrets.Scrub(prompt)}
		h.pendingPhase = len(h.phases)
		p := h.newPhase(fmt.Sprintf("Step %d · approve %s (pending)", step, boundary))
		body := []string{"Waiting for approval of boundary " + codeSpan(boundary) + ": " +
			codeSpan(ResumeCommand(h.opts.StateDir, h.opts.RunID)+" --approve "+boundary) + " or " + codeSpan("--reject "+boundary)}
		if prompt != "" {
			body = append(body, "Prompt: "+stepvalue.OneLine(h.secrets.Scrub(prompt)))
		}
		p.Callout(session.CalloutDecision, "", body...)
		return nil, &PendingApprovalError{StateDir: h.opts.StateDir, RunID: h.opts.RunID, Boundary: boundary}
	}
	h.recordApproval(step, boundary, h.secrets.Scrub(prompt), approver, map[string]any{"approved": approved}, nil)
	p := h.newPhase(fmt.Sprintf("Step %d · approve %s", step, boundary))
	callout, verb := session.CalloutDecision, "Approved"
	if approver == "interactive" || step == h.replayUntil {
		callout = session.CalloutUser // a person answered, now or on resume
	}
	if !approved {
		verb = "Rejected"
	}
	body := []string{verb + " boundary " + codeSpan(boundary) + " (" + approver + ")"}
	if prompt != "" {
		body = append(body, "Prompt: "+stepvalue.OneLine(h.secrets.Scrub(prompt)))
	}
	p.Callout(callout, "", body...)
	if !approved {
		return nil, fmt.Errorf("%w: boundary %s (%s)", ErrRejected, boundary, approver)
	}
	h.journalCall(step, "approve", boundary, argsDigest, true)
	return starlark.True, nil
}

// recordApproval adds the action of an approval or a decision made at
// step: a human_approval of boundary, with what was asked (prompt,
// secrets already replaced), who decided (approver), what the workflow
// receives (output) and any metadata beyond the step and its status.
// ctx.approve, ctx.request_approval and ctx.request_decision record
// their decisions through it, so all of them read alike in the trace.
func (h *host) recordApproval(step int, boundary, prompt, approver string, output, meta map[string]any) {
	h.res.Steps++
	h.res.Approvals++
	ms := int64(0)
	metadata := map[string]any{"step": step, "status": ReceiptOK}
	for k, v := range meta {
		metadata[k] = v
	}
	h.actions = append(h.actions, trace.Action{
		ID:        recordID(h.opts.RunID, "-a", step),
		Kind:      trace.KindHumanApproval,
		Name:      boundary,
		Timestamp: h.opts.Now().UTC().Format(time.RFC3339Nano),
		Approval: &trace.Approval{
			Prompt: prompt, Approver: approver, Required: true, Boundary: boundary,
		},
		Output:     output,
		DurationMS: &ms,
		Metadata:   metadata,
	})
}

// PendingApprovalError stops a run at an undecided approval of
// Boundary: Resume with a decision for it continues run RunID under
// StateDir. It wraps ErrPendingApproval.
type PendingApprovalError struct{ StateDir, RunID, Boundary string }

func (e *PendingApprovalError) Error() string {
	return "approval pending: boundary " + e.Boundary
}

// ResumeCommand is the command that continues the suspended run runID
// recorded under stateDir, naming the state directory when it is not the
// default one.
func ResumeCommand(stateDir, runID string) string {
	cmd := "crystallize resume " + runID
	if stateDir != "" && filepath.Clean(stateDir) != DefaultStateDir {
		cmd += " --state-dir " + shellQuote(stateDir)
	}
	return cmd
}
func (e *PendingApprovalError) Unwrap() error { return ErrPendingApproval }

// secret implements ctx.secret(id).
func (h *host) secret(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var id string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &id); err != nil {
		return nil, err
	}
	if !slices.Contains(h.w.Secrets, id) {
		return nil, fmt.Errorf("%w: %s is not among the secrets the workflow declares (%s)", runconfig.ErrSecret, id, orNone(h.w.Secrets))
	}
	v, err := h.workflowSecret(id)
	if err != nil {
		return nil, err
	}
	return starlark.String(v), nil
}

// log implements ctx.log(msg).
func (h *host) log(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var msg starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &msg); err != nil {
		return nil, err
	}
	s, ok := starlark.AsString(msg)
	if !ok {
		s = msg.String()
	}
	h.logLine(s)
	return starlark.None, nil
}

// failError is the error of ctx.fail.
type failError struct{ msg string }

func (e *failError) Error() string { return "workflow failed: " + e.msg }
func (e *failError) Unwrap() error { return ErrFailed }

// fail implements ctx.fail(msg).
func (h *host) fail(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var msg starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &msg); err != nil {
		return nil, err
	}
	s, ok := starlark.AsString(msg)
	if !ok {
		s = msg.String()
	}
	return nil, &failError{msg: s}
}

// finish sets the result's status, output and error.
func (h *host) finish(out any, err error) {
	switch {
	case h.driven && errors.Is(err, errYield):
		h.res.Status = runstate.StatusRunning
		return
	case err == nil:
		h.res.Status = runstate.StatusCompleted
		h.res.Output = h.secrets.Value(out)
	case errors.Is(err, ErrCancelled):
		h.res.Status = runstate.StatusCancelled
	case errors.Is(err, ErrPendingApproval):
		h.res.Status = runstate.StatusPendingApproval
		h.res.Error = h.secrets.Scrub(err.Error())
		return // the pending phase says it
	case errors.Is(err, ErrRejected):
		h.res.Status = runstate.StatusRejected
	default:
		h.res.Status = runstate.StatusFailed
	}
	if err != nil {
		h.res.Error = h.secrets.Scrub(err.Error())
		title := "Failure"
		switch h.res.Status {
		case runstate.StatusCancelled:
			title = "Cancelled"
		case runstate.StatusRejected:
			title = "Rejected"
		}
		h.newPhase(title).Callout(session.CalloutError, "", stepvalue.OneLine(h.res.Error))
	}
}

// publicError is err with secrets replaced in its message, keeping the
// chain for errors.Is.
func (h *host) publicError(err error) error {
	msg := h.secrets.Scrub(err.Error())
	if msg == err.Error() {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// callLine renders a call for session.md: the argv when it ran a command,
// else the name and its arguments.
func callLine(name string, args map[string]any, argv []string) string {
	if argv != nil {
		q := make([]string, len(argv))
		for i, a := range argv {
			q[i] = shellQuote(a)
		}
		return strings.Join(q, " ")
	}
	parts := []string{name}
	for _, k := range sortedKeys(args) {
		parts = append(parts, k+"="+string(stepvalue.Canonical(args[k])))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for reading, as a POSIX shell would need it. It is
// only for display: commands never go through a shell.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// codeSpan renders s, made one line, as a markdown code span.
func codeSpan(s string) string { return mdtext.CodeSpan(stepvalue.OneLine(s)) }

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// workflowSecret resolves a secret ctx.secret asks for: from the
// environment (then the file) when [secrets] env lists it, else from the
// secrets file only.
func (h *host) workflowSecret(id string) (string, error) {
	if slices.Contains(h.cfg.Secrets.Env, id) {
		return h.tools.SecretValue(id)
	}
	var v string
	if h.cfg.Secrets.File != "" {
		values, err := runconfig.ReadSecretsFile(h.cfg.Abs(h.cfg.Secrets.File))
		if err != nil {
			return "", err
		}
		v = values[id]
	}
	if v == "" {
		where := "list it in crystallize.toml [secrets] env = [\"" + id + "\"] to let workflows read the environment variable"
		if h.cfg.Secrets.File != "" {
			where += ", or add it to " + h.cfg.Secrets.File
		}
		return "", fmt.Errorf("%w: secret_not_provided: %s is not provided by the configuration; %s", runconfig.ErrSecret, id, where)
	}
	h.secrets.Add(id, v)
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
