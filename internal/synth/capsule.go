package synth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Capsule is code under test with the bounds it runs in: Starlark source
// whose Entrypoint takes the input and returns a dict of metrics, the host
// modules it may load, and its resources.
type Capsule struct {
	// Name identifies the capsule in errors and evidence, usually the
	// code's file name.
	Name           string    `json:"name"`
	Source         string    `json:"source"`
	Entrypoint     string    `json:"entrypoint"`
	AllowedImports []string  `json:"allowed_imports"`
	Resources      Resources `json:"resources"`
	// ReturnsValue makes the entrypoint a function of the step's inputs
	// that returns any value built of None, bools, numbers, strings,
	// lists and string-keyed dicts, instead of a dict of metrics.
	ReturnsValue bool `json:"returns_value,omitempty"`
}

// Codes of CapsuleError, one per way a capsule is refused or stopped.
// They are stable: scripts and tests match them, never the message.
const (
	CodeSyntax     = "capsule.syntax"     // the source does not parse or resolve
	CodeImport     = "capsule.import"     // load() of a module not allowed or not provided
	CodeEntrypoint = "capsule.entrypoint" // no entrypoint, or not a function of one argument
	CodeSteps      = "capsule.steps"      // Starlark step budget (time_s) exhausted
	CodeCPU        = "capsule.cpu"        // RLIMIT_CPU (time_s) reached by the process
	CodeMemory     = "capsule.memory"     // RLIMIT_AS (mem_mb) reached by the process
	CodeWallClock  = "capsule.wall_clock" // the process outlived its wall-clock allowance
	CodeOutput     = "capsule.output"     // print() or the process's answer exceeded output_kb
	CodeRecursion  = "capsule.recursion"  // a function called itself
	CodeResult     = "capsule.result"     // the entrypoint's value is not a dict of numbers, strings and bools
	CodeRuntime    = "capsule.runtime"    // any other Starlark error (fail(), a bad index, …)
	CodeSandbox    = "capsule.sandbox"    // the capsule process could not run or answered nonsense
	CodeInput      = "capsule.input"      // the input cannot be given to Starlark
	CodeCancelled  = "capsule.cancelled"  // the caller cancelled the run
)

// CapsuleError is how a capsule fails: which capsule, which class of
// failure (Code), which limit when a limit stopped it, and what happened.
type CapsuleError struct {
	Capsule string `json:"capsule"`
	Code    string `json:"code"`
	// Limit names the bound that stopped the capsule, with its value,
	// such as "time_s = 1 (20000000 steps)" or "mem_mb = 64".
	Limit string `json:"limit,omitempty"`
	Line  int    `json:"line,omitempty"`
	Msg   string `json:"message"`
}

func (e *CapsuleError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "capsule %s", e.Capsule)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	fmt.Fprintf(&b, ": %s", e.Code)
	if e.Limit != "" {
		fmt.Fprintf(&b, " (limit %s)", e.Limit)
	}
	fmt.Fprintf(&b, ": %s", e.Msg)
	return b.String()
}

// StepsPerSecond converts time_s into a Starlark step budget. A step is
// one bytecode instruction; this machine-independent count is what makes
// the budget deterministic (the same code stops at the same point
// everywhere), and the process's RLIMIT_CPU backs it with real seconds.
// The figure is below the rate of simple loops on current hardware
// (measured at 60–150 million steps per second), so the step budget, not
// the CPU limit, normally stops a runaway loop, within about time_s.
const StepsPerSecond = 50_000_000

func (c *Capsule) errorf(code, limit, format string, args ...any) *CapsuleError {
	return &CapsuleError{Capsule: c.Name, Code: code, Limit: limit, Msg: fmt.Sprintf(format, args...)}
}

func (c *Capsule) entrypoint() string {
	if c.Entrypoint == "" {
		return DefaultEntrypoint
	}
	return c.Entrypoint
}

func (c *Capsule) stepLimit() (uint64, string) {
	r := c.Resources.WithDefaults()
	steps := uint64(r.TimeS) * StepsPerSecond
	return steps, fmt.Sprintf("time_s = %d (%d steps)", r.TimeS, steps)
}

// fileOptions are the Starlark dialect of capsules: while loops and sets
// are allowed because synthesized code is written like Python, and the
// step budget bounds loops anyway. Recursion stays forbidden (the
// default), which bounds the call stack by the number of functions.
func fileOptions() *syntax.FileOptions {
	return &syntax.FileOptions{While: true, Set: true}
}

// Check parses and resolves the capsule's source and checks every load()
// against the allowlist, without running anything. Run calls it; it is
// exported so a spec can be checked before code is executed or stored.
func (c *Capsule) Check() (*starlark.Program, error) {
	name := c.Name
	if name == "" {
		name = "capsule.star"
	}
	f, err := fileOptions().Parse(name, c.Source, 0)
	if err != nil {
		e := c.errorf(CodeSyntax, "", "%v", err)
		var se syntax.Error
		if errors.As(err, &se) {
			e.Line, e.Msg = int(se.Pos.Line), se.Msg
		}
		return nil, e
	}
	for _, stmt := range f.Stmts {
		load, ok := stmt.(*syntax.LoadStmt)
		if !ok {
			continue
		}
		mod := load.ModuleName()
		if err := c.checkModule(mod); err != nil {
			err.Line = int(load.Load.Line)
			return nil, err
		}
	}
	_, prog, err := starlark.SourceProgramOptions(fileOptions(), name, c.Source, predeclared.Has)
	if err != nil {
		e := c.errorf(CodeSyntax, "", "%v", err)
		if pos, msg, ok := firstResolveError(err); ok {
			e.Line, e.Msg = pos, msg
		}
		return nil, e
	}
	return prog, nil
}

func firstResolveError(err error) (int, string, bool) {
	var se syntax.Error
	if errors.As(err, &se) {
		return int(se.Pos.Line), se.Msg, true
	}
	type positioned interface{ Unwrap() []error }
	if l, ok := err.(positioned); ok {
		for _, e := range l.Unwrap() {
			if line, msg, ok := firstResolveError(e); ok {
				return line, msg, true
			}
		}
	}
	return 0, "", false
}

func (c *Capsule) checkModule(mod string) *CapsuleError {
	if !slices.Contains(c.AllowedImports, mod) {
		allowed := "no modules"
		if len(c.AllowedImports) > 0 {
			allowed = strings.Join(c.AllowedImports, ", ")
		}
		return c.errorf(CodeImport, "allowed_imports", "load of %q is not allowed; the spec allows %s", mod, allowed)
	}
	if _, ok := hostModules[mod]; !ok {
		return c.errorf(CodeImport, "allowed_imports", "no module %q; capsules can load %s", mod, strings.Join(ModuleNames(), ", "))
	}
	return nil
}

// Program is a checked, initialized capsule, ready to execute its
// entrypoint any number of times in this process. Its globals are frozen,
// so one execution cannot leave state for the next.
type Program struct {
	capsule *Capsule
	fn      *starlark.Function
}

// Result is one execution: the entrypoint's metrics (or, for a capsule
// that returns values, its value) and what it printed.
type Result struct {
	Metrics Metrics `json:"metrics,omitempty"`
	Value   any     `json:"value,omitempty"`
	Output  string  `json:"output,omitempty"`
}

// Compile checks the capsule and runs its top level (under the step
// budget), then checks that the entrypoint is a function of one argument.
func (c *Capsule) Compile(ctx context.Context) (*Program, error) {
	globals, err := c.module(ctx)
	if err != nil {
		return nil, err
	}
	ep := c.entrypoint()
	v, ok := globals[ep]
	if !ok {
		return nil, c.errorf(CodeEntrypoint, "", "no function named %q", ep)
	}
	fn, ok := v.(*starlark.Function)
	if !ok {
		return nil, c.errorf(CodeEntrypoint, "", "%q is a %s, not a function", ep, v.Type())
	}
	if fn.NumParams() == 0 && !fn.HasVarargs() {
		return nil, c.errorf(CodeEntrypoint, "", "%s takes no arguments; it must take the input", ep)
	}
	for i := 1; i < fn.NumParams()-fn.NumKwonlyParams(); i++ {
		if fn.ParamDefault(i) == nil {
			return nil, c.errorf(CodeEntrypoint, "", "%s has more than one required parameter; it must take the input alone", ep)
		}
	}
	return &Program{capsule: c, fn: fn}, nil
}

// module checks the capsule and runs its top level, returning its frozen
// globals.
func (c *Capsule) module(ctx context.Context) (starlark.StringDict, error) {
	prog, err := c.Check()
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	thread, stop := c.thread(ctx, &out)
	defer stop()
	globals, err := prog.Init(thread, predeclared)
	if err != nil {
		return nil, c.classify(thread, err)
	}
	globals.Freeze()
	return globals, nil
}

// transformer holds the custom transforms of an experiment: the
// top-level functions of a Starlark file. They are written by the
// experiment's author, not synthesized, and run in this process under
// the step budget and output cap.
type transformer struct {
	c       *Capsule
	globals starlark.StringDict
}

func (t *transformer) has(name string) bool {
	_, ok := t.globals[name].(*starlark.Function)
	return ok
}

// apply calls the transform name on data and returns its result.
func (t *transformer) apply(ctx context.Context, name string, data any) (any, error) {
	c := t.c
	fn, ok := t.globals[name].(*starlark.Function)
	if !ok {
		return nil, c.errorf(CodeEntrypoint, "", "no transform function named %q", name)
	}
	arg, err := toStarlark(data)
	if err != nil {
		return nil, c.errorf(CodeInput, "", "%v", err)
	}
	var out strings.Builder
	thread, stop := c.thread(ctx, &out)
	defer stop()
	v, err := starlark.Call(thread, fn, starlark.Tuple{arg}, nil)
	if err != nil {
		return nil, c.classify(thread, err)
	}
	res, err := fromStarlark(v)
	if err != nil {
		return nil, c.errorf(CodeResult, "", "transform %s: %v", name, err)
	}
	return res, nil
}

// Exec calls the entrypoint on input. Each call gets a fresh thread, a
// full step budget and a full output allowance.
func (p *Program) Exec(ctx context.Context, input any) (*Result, error) {
	c := p.capsule
	arg, err := toStarlark(input)
	if err != nil {
		return nil, c.errorf(CodeInput, "", "%v", err)
	}
	var out strings.Builder
	thread, stop := c.thread(ctx, &out)
	defer stop()
	v, err := starlark.Call(thread, p.fn, starlark.Tuple{arg}, nil)
	if err != nil {
		return nil, c.classify(thread, err)
	}
	if c.ReturnsValue {
		val, err := fromStarlark(v)
		if err != nil {
			return nil, c.errorf(CodeResult, "", "%v", err)
		}
		return &Result{Value: val, Output: out.String()}, nil
	}
	m, err := metricsFrom(v)
	if err != nil {
		return nil, c.errorf(CodeResult, "", "%v", err)
	}
	return &Result{Metrics: m, Output: out.String()}, nil
}

// Local keys of a capsule thread.
const (
	localOutputExceeded = "synth.output_exceeded"
	// localCancelled holds an *atomic.Bool set by the goroutine that
	// watches the context: thread locals are not safe for concurrent
	// writes, so the watcher only stores into it.
	localCancelled = "synth.cancelled"
)

// thread makes the Starlark thread of one execution: step budget, a
// print that stops the capsule past output_kb, loads through the
// allowlist, and cancellation when ctx ends. stop releases the watcher.
func (c *Capsule) thread(ctx context.Context, out *strings.Builder) (*starlark.Thread, func()) {
	steps, _ := c.stepLimit()
	limit := c.Resources.WithDefaults().OutputKB * 1024
	thread := &starlark.Thread{Name: c.Name}
	thread.SetMaxExecutionSteps(steps)
	thread.Print = func(t *starlark.Thread, msg string) {
		if t.Local(localOutputExceeded) != nil {
			return
		}
		if out.Len()+len(msg)+1 > limit {
			t.SetLocal(localOutputExceeded, true)
			t.Cancel("output limit")
			return
		}
		out.WriteString(msg)
		out.WriteByte('\n')
	}
	thread.Load = func(t *starlark.Thread, module string) (starlark.StringDict, error) {
		if err := c.checkModule(module); err != nil {
			return nil, err
		}
		return hostModules[module].Members, nil
	}
	cancelled := new(atomic.Bool)
	thread.SetLocal(localCancelled, cancelled)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			cancelled.Store(true)
			thread.Cancel("cancelled")
		case <-done:
		}
	}()
	return thread, func() { close(done) }
}

// classify turns a Starlark error into a CapsuleError. Limits are read
// from the thread's state, not from message text, where possible.
func (c *Capsule) classify(thread *starlark.Thread, err error) *CapsuleError {
	var ce *CapsuleError
	if errors.As(err, &ce) {
		return ce
	}
	steps, stepLimit := c.stepLimit()
	line := 0
	msg := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		msg = ee.Msg
		if len(ee.CallStack) > 0 {
			line = int(ee.CallStack.At(0).Pos.Line)
		}
	}
	var e *CapsuleError
	switch {
	case thread.Local(localOutputExceeded) != nil:
		e = c.errorf(CodeOutput, fmt.Sprintf("output_kb = %d", c.Resources.WithDefaults().OutputKB), "print() output exceeded the limit")
	case thread.Local(localCancelled).(*atomic.Bool).Load():
		e = c.errorf(CodeCancelled, "", "execution cancelled")
	case thread.ExecutionSteps() >= steps:
		e = c.errorf(CodeSteps, stepLimit, "step budget exhausted")
	case strings.Contains(msg, "called recursively"):
		e = c.errorf(CodeRecursion, "recursion", "%s", msg)
	default:
		e = c.errorf(CodeRuntime, "", "%s", msg)
	}
	// Only an error the code raised has a meaningful line; a limit can
	// stop a thread anywhere.
	if e.Code == CodeRuntime || e.Code == CodeRecursion {
		e.Line = line
	}
	return e
}
