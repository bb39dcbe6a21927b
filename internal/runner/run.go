package runner

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/membudget"
	"github.com/crystallize-dev/crystallize/internal/model"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/verify"
)

// DefaultMaxSteps is the Starlark step budget of a run when
// Options.MaxSteps is zero. A step is one bytecode instruction; generated
// workflows run a few hundred per host call, so ten million leaves room
// for hand-written loops while stopping a runaway one within about a
// second.
const DefaultMaxSteps = 10_000_000

// DefaultStateDir is where runs are recorded when Options.StateDir is
// empty: <StateDir>/runs/<run-id>/.
const DefaultStateDir = toolexec.StateDirName

// Errors a run can fail with; callers use errors.Is. The messages of the
// wrapping errors say which tool, capability, secret or boundary.
var (
	// ErrNotReady: a bundle that bundle.Ready does not accept (its
	// recomputed status is not ready, or it has validation problems),
	// run for real without Options.AllowUnapproved. It is
	// bundle.ErrNotReady, so either matches.
	ErrNotReady = bundle.ErrNotReady
	// ErrUnbound: a tool name with no binding (see *UnboundError).
	ErrUnbound = errors.New("unbound tool")
	// ErrCapability: a call needing a capability the run does not hold.
	ErrCapability = errors.New("capability not granted")
	// ErrStepLimit: the workflow ran out of its step budget.
	ErrStepLimit = errors.New("step limit exceeded")
	// ErrCancelled: the run's context was cancelled.
	ErrCancelled = errors.New("run cancelled")
	// ErrFailed: the workflow called ctx.fail.
	ErrFailed = errors.New("workflow failed")
)

// ParamError lists every missing and unknown parameter of a call.
type ParamError struct {
	Workflow string
	Missing  []string
	Unknown  []string
	Params   []string // the parameters the workflow takes
}

func (e *ParamError) Error() string {
	var parts []string
	if len(e.Missing) > 0 {
		parts = append(parts, "missing parameters "+strings.Join(e.Missing, ", "))
	}
	if len(e.Unknown) > 0 {
		parts = append(parts, "unknown parameters "+strings.Join(e.Unknown, ", "))
	}
	takes := "none"
	if len(e.Params) > 0 {
		takes = strings.Join(e.Params, ", ")
	}
	return fmt.Sprintf("workflow %s: %s (it takes: %s)", e.Workflow, strings.Join(parts, "; "), takes)
}

// UnboundError lists every tool name of a workflow that has no binding.
type UnboundError struct {
	Names []string
}

func (e *UnboundError) Error() string {
	return fmt.Sprintf("unbound tools %s: bind each in crystallize.toml under [tools.\"name\"]", quoteList(e.Names))
}

func (e *UnboundError) Unwrap() error { return ErrUnbound }

// Params are a run's arguments, by parameter name, as generic JSON values.
type Params map[string]any

// Options control a run. The zero value runs for real with no config
// (only the built-in fs tools, confined to "."), no grants, no secrets and
// no approvals, and records the run under DefaultStateDir.
type Options struct {
	// Config is the project configuration; nil means an empty one rooted
	// at the current directory.
	Config *runconfig.Config
	// Tools are in-process tools; they take precedence over the config.
	Tools map[string]toolexec.Tool
	// Model answers every ctx.model call when set (tests, embedders).
	// When nil a dry run replays from the bundle's fixtures, and a real
	// run uses the step's [models.*] entry; a step with none is
	// ErrModel.
	Model model.Provider
	// HTTPClient makes the requests of model providers and http tool
	// bindings; nil means http.DefaultClient.
	HTTPClient *http.Client
	// DryRun executes nothing: tool calls and model calls return the
	// output the bundle's fixtures recorded for them (else None), and
	// approvals pass as "dry run".
	DryRun bool
	// AllowUnapproved runs a bundle that is not ready; the run records
	// that it did.
	AllowUnapproved bool
	// Verify compares the run's receipts with the bundle candidate's
	// expected receipts through the replay oracle when the run ends
	// (see verify.go): drift is verify.ErrDrift. A run that cannot be verified
	// is refused before the first step (verify.ErrUnverifiable).
	Verify bool
	// Approve lists the approval boundaries granted in advance, Reject
	// those rejected (Resume takes it; a run given both for one boundary
	// is refused).
	Approve, Reject []string
	// Prompter decides the other boundaries; nil suspends the run at the
	// first of them in state pending_approval (see Resume).
	Prompter Prompter
	// Getenv resolves secrets by logical id; nil resolves none. The
	// config's secrets file ([secrets] file) is consulted after it.
	Getenv func(string) string
	// Environ is the base environment of command tools; nil is empty.
	Environ []string
	// MaxSteps is the Starlark step budget; 0 means DefaultMaxSteps.
	MaxSteps uint64
	// MaxMemory is the heap growth the run may cause, in bytes; 0 means
	// DefaultMaxMemory (see budget.go).
	MaxMemory uint64
	// Fallback overrides crystallize.toml [fallback] policy: fail,
	// agent or ask (see fallback.go); "" keeps the config's.
	Fallback string
	// StateDir is where the run is recorded; "" means DefaultStateDir.
	StateDir string
	// RunID names the run; "" means a new id from the time and 48
	// random bits.
	RunID string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives ctx.log lines (secrets replaced); nil discards them.
	Log io.Writer
	// Decide answers the decision a resumed run waits at
	// (ctx.request_decision; see agentapi.go): it must be one of the
	// options.
	Decide string
	// Inbox receives the messages of the agent API as they are written
	// (see agentapi.go); nil drops them (session.md still has them).
	Inbox func(runstate.Message)
	// OnStart is called with the run id once the run is admitted, just
	// before its first step: a run refused before then (not ready,
	// parameters, unbound tools, grants) never calls it, as it records
	// nothing.
	OnStart func(runID string)
}

// Receipt is the record of one executed tool or model call, as the run
// record holds it.
type Receipt = runrecord.Receipt

// ModelUsage is what one model call used.
type ModelUsage = runrecord.ModelUsage

// Receipt statuses.
const (
	ReceiptOK     = "ok"
	ReceiptError  = "error"
	ReceiptDryRun = "dry_run"
)

// Refusal is a call the host refused before it happened.
type Refusal struct {
	Step    int      `json:"step"`
	Tool    string   `json:"tool"`
	Reason  string   `json:"reason"`
	Missing []string `json:"missing_capabilities,omitempty"`
}

// Result is what a run did. Run returns it, with its files written,
// whether the workflow succeeded or not (except for refusals before the
// run starts: not ready, parameters, unbound tools).
type Result struct {
	RunID    string
	Dir      string // the run's record directory
	Workflow string
	Status   string
	// Steps counts executed host calls: ToolCalls + ModelCalls +
	// Approvals.
	Steps, ToolCalls, ModelCalls, Approvals int
	TokensUsed                              int64
	// CostUSD is the total cost of the model calls at the configured
	// prices.
	CostUSD  float64
	Receipts []Receipt
	Refusals []Refusal
	// Commands are the programs ctx.exec steps ran (in a dry run, would
	// have run), in step order; a resumed run lists only those it ran
	// itself, the trace records every one.
	Commands []Command
	// Output is the workflow function's return value.
	Output          any
	DryRun          bool
	AllowUnapproved bool
	Started, Ended  time.Time
	Duration        time.Duration
	// Error is the failure message (secrets replaced), "" on success.
	Error string
	// Pending is the approval a suspended run waits for.
	Pending *runstate.Pending
	// Verification is the outcome of Options.Verify, nil without it or
	// while the run is pending.
	Verification *verify.Report
	// DryRunCalls are, for a dry run, the tool calls and model steps in order: what each
	// step would have received and the answer it went on with.
	DryRunCalls []DryRunCall
	// Fallbacks are the failed checks and steps this run (not the part
	// before a resume) handed to its fallback policy; see fallback.go.
	Fallbacks []Fallback
}

// Check reports every tool name w calls with a literal name that has no
// binding in cfg or tools, as an *UnboundError.
func Check(w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool) error {
	var unbound []string
	for _, name := range w.Tools {
		if _, ok := toolexec.Resolve(cfg, tools, name); !ok {
			unbound = append(unbound, name)
		}
	}
	if len(unbound) > 0 {
		return &UnboundError{Names: unbound}
	}
	return nil
}

// Run runs w with params. Before the first step it refuses a bundle that
// is not ready (unless DryRun or AllowUnapproved), missing or unknown
// parameters (*ParamError) and unbound tools (*UnboundError); those return
// no Result and record nothing. Otherwise the run is recorded in
// Result.Dir and Run returns the Result together with the workflow's
// error, if any.
func Run(ctx context.Context, w *Workflow, params Params, opts Options) (*Result, error) {
	if err := admit(w, opts); err != nil {
		return nil, err
	}
	if err := checkParams(w, params); err != nil {
		return nil, err
	}
	cfg := opts.Config
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	if err := Check(w, cfg, opts.Tools); err != nil {
		return nil, err
	}
	opts, exp, err := prepare(w, cfg, opts)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	h := newHost(ctx, w, cfg, opts)
	h.expect = exp
	h.res.Started = opts.Now()
	return h.run(params)
}

// run executes the workflow and records it.
func (h *host) run(params Params) (*Result, error) {
	h.params = params
	if h.opts.OnStart != nil {
		h.opts.OnStart(h.opts.RunID)
	}
	out, err := h.exec(params)
	h.tools.CloseRoots()
	if h.budgetTimer != nil {
		h.budgetTimer.Stop()
	}
	h.cancel(nil)
	h.res.Ended = h.opts.Now()
	h.res.Duration = h.res.Ended.Sub(h.res.Started)
	h.finish(out, err)
	if h.driven && (h.res.Status == runstate.StatusRunning || h.res.Status == runstate.StatusPendingApproval) {
		// The engine driving the run keeps its journal; nothing is
		// recorded until the run ends.
		return h.res, nil
	}
	if h.expect != nil && h.res.Status != runstate.StatusPendingApproval {
		verr := h.verify()
		if verr != nil && h.res.Error == "" {
			h.res.Error = h.secrets.Scrub(verr.Error())
		}
		if verr != nil {
			err = errors.Join(err, verr)
		}
	}
	if werr := h.write(); werr != nil {
		return h.res, errors.Join(err, werr)
	}
	if err != nil {
		return h.res, h.publicError(err)
	}
	return h.res, nil
}

// checkModels reports, before the first step, every model step w names
// that no provider would answer, and model API keys that are not set: a
// run should not stop half way, its side effects done, for want of
// configuration.
func checkModels(w *Workflow, cfg *runconfig.Config, opts Options) error {
	var none []string
	var errs []error
	keys := map[string]bool{}
	var steps []string // what answers each model step: a [models.*] lookup key
	steps = append(steps, w.Models...)
	for _, worker := range w.Workers {
		// A preset is needed even when no model is asked (a dry run):
		// it decides the step's prompt and tools.
		wc, ok := cfg.Workers[worker]
		if !ok {
			errs = append(errs, fmt.Errorf("%w: the workflow runs worker %q; define [workers.%s] in %s", ErrWorker, worker, worker, cmp.Or(cfg.File, runconfig.ConfigFile)))
			continue
		}
		steps = append(steps, cmp.Or(wc.Model, worker))
	}
	if opts.Model != nil || opts.DryRun {
		return errors.Join(errs...)
	}
	for _, name := range steps {
		key, mc, ok := cfg.ModelEntry(name)
		if !ok {
			none = append(none, name)
			continue
		}
		if mc.APIKey != "" && !keys[key] {
			keys[key] = true
			if opts.Getenv == nil || opts.Getenv(mc.APIKey) == "" {
				errs = append(errs, fmt.Errorf("%w: models.%s.api_key names secret %s, which is not set; %s", runconfig.ErrSecret, key, mc.APIKey, cfg.SecretHint(mc.APIKey)))
			}
		}
	}
	if len(none) > 0 {
		errs = append([]error{withRemedy(fmt.Errorf("%w: model steps %s have no provider; configure [models.default] (or [models.<step>]) in crystallize.toml", model.ErrUnavailable, quoteList(none)), RemedyDryRun, "")}, errs...)
	}
	return errors.Join(errs...)
}

// withDefaults fills in the documented defaults of zero fields.
func (opts Options) withDefaults() Options {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = membudget.DefaultMaxMemory
	}
	if opts.StateDir == "" {
		opts.StateDir = DefaultStateDir
	}
	if opts.RunID == "" {
		opts.RunID = newRunID(opts.Now())
	}
	return opts
}

// checkParams reports every missing and unknown parameter.
func checkParams(w *Workflow, params Params) error {
	e := &ParamError{Workflow: w.Name, Params: w.Params}
	for i, p := range w.Params {
		if _, ok := params[p]; !ok && w.Required[i] {
			e.Missing = append(e.Missing, p)
		}
	}
	for _, k := range sortedKeys(params) {
		if !slices.Contains(w.Params, k) {
			e.Unknown = append(e.Unknown, k)
		}
	}
	if len(e.Missing) > 0 || len(e.Unknown) > 0 {
		return e
	}
	return nil
}

// newRunID returns "20060102T150405Z-" and 12 random hex digits: sortable
// by time, unique without coordination.
func newRunID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather)
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// exec runs the workflow function on a new thread.
func (h *host) exec(params Params) (any, error) {
	defer h.tools.CloseMCP()
	thread := &starlark.Thread{
		Name: "workflow " + h.w.Name,
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load is not allowed in a workflow")
		},
		Print: func(_ *starlark.Thread, msg string) { h.logLine(msg) },
	}
	thread.SetMaxExecutionSteps(h.opts.MaxSteps)
	done := make(chan struct{})
	defer close(done)
	h.mem = membudget.New(h.opts.MaxMemory, h.cancel)
	h.mem.Watch(h.ctx, done)
	go func() {
		select {
		case <-h.ctx.Done():
			thread.Cancel(h.ctx.Err().Error())
		case <-done:
		}
	}()

	globals, err := h.load(thread)
	if err != nil {
		return nil, h.classify(thread, err)
	}
	fn, ok := globals[h.w.Name].(*starlark.Function)
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a function", h.w.File, h.w.Name)
	}
	kwargs := make([]starlark.Tuple, 0, len(params))
	for _, k := range sortedKeys(params) {
		v, err := toStarlark(params[k])
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", k, err)
		}
		kwargs = append(kwargs, starlark.Tuple{starlark.String(k), v})
	}
	v, err := starlark.Call(thread, fn, starlark.Tuple{h.value()}, kwargs)
	if out, ok := fallbackOutput(err); ok {
		return out, nil
	}
	if err != nil {
		return nil, h.classify(thread, err)
	}
	// The result is converted and written out several times over (the
	// output, trace.json, session.md) after the workflow returns: its
	// text must fit in what is left of the budget.
	if err := h.mem.Reserve(resultCopies*membudget.TextBound(v, h.mem.Limit()), "the workflow's result"); err != nil {
		return nil, err
	}
	out, err := toGo(v)
	if err != nil {
		return nil, fmt.Errorf("workflow result: %w", err)
	}
	return out, nil
}

// resultCopies is how many copies of its text the result takes at most
// at once while it is recorded.
const resultCopies = 2

// load runs the workflow file's top level, compiled with its operators
// and sized built-ins guarded (see allocguard.go).
func (h *host) load(thread *starlark.Thread) (starlark.StringDict, error) {
	f, err := (&syntax.FileOptions{}).Parse(h.w.File, h.w.Src, 0)
	if err != nil {
		return nil, err
	}
	membudget.GuardOperators(f)
	predeclared := h.mem.Predeclared()
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	globals, err := prog.Init(thread, predeclared)
	globals.Freeze()
	return globals, err
}

// classify turns a thread's error into the run's: cancellation and step
// exhaustion become ErrCancelled and ErrStepLimit, since Starlark reports
// both as a plain cancellation.
func (h *host) classify(thread *starlark.Thread, err error) error {
	if cause := context.Cause(h.ctx); errors.Is(cause, ErrBudget) || errors.Is(cause, membudget.ErrMemoryBudget) {
		return cause
	}
	if cerr := h.ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %w", ErrCancelled, cerr)
	}
	if thread.ExecutionSteps() >= h.opts.MaxSteps || strings.Contains(err.Error(), "too many steps") {
		return fmt.Errorf("%w: the workflow used its %d steps (Options.MaxSteps)", ErrStepLimit, h.opts.MaxSteps)
	}
	return err
}
