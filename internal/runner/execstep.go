package runner

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/starfile"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// CapShellExec is the capability that lets ctx.exec run any program; a
// workflow or a grant names one program with "exec:<program>".
const CapShellExec = "shell.exec"

// Command is a program a ctx.exec step ran, or in a dry run would have
// run: its argv after expansion (secrets replaced), its working directory,
// and its exit code (nil in a dry run or when it did not start).
type Command struct {
	Step     int      `json:"step"`
	Name     string   `json:"name"`
	Argv     []string `json:"argv"`
	Dir      string   `json:"dir"`
	ExitCode *int     `json:"exit_code"`
}

// execBuiltin implements ctx.exec(name, argv, **kwargs): run the argv
// template, its placeholders replaced by the keyword arguments, as a
// program in the workspace. A binding of name in the config or in
// Options.Tools takes precedence: the call is then ctx.tool(name,
// **kwargs), and the template is not used.
func (h *host) execBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var list starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 2, &name, &list); err != nil {
		return nil, err
	}
	tmpl, err := stringList(list)
	if err != nil {
		return nil, fmt.Errorf("exec %s: argv: %w", name, err)
	}
	callArgs, err := kwargsMap(kwargs)
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", name, err)
	}
	var out any
	if bindingOverrides(h.cfg, h.opts.Tools, name) {
		out, _, err = h.callTool(toolCall{name: name, args: callArgs})
	} else {
		out, err = h.callExec(name, tmpl, callArgs)
	}
	if err != nil {
		return nil, err
	}
	return toStarlark(out)
}

// bindingOverrides reports whether name has a binding of its own, which
// then runs ctx.exec(name, …) in place of the template: an in-process
// tool or a [tools] entry (exact or glob), not a default built-in.
func bindingOverrides(cfg *runconfig.Config, tools map[string]toolexec.Tool, name string) bool {
	b, ok := toolexec.Resolve(cfg, tools, name)
	return ok && (b.Inproc != nil || b.Pattern != "")
}

func stringList(v starlark.Value) ([]string, error) {
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("got %s, want a list of strings", v.Type())
	}
	out := make([]string, seq.Len())
	for i := range out {
		s, ok := starlark.AsString(seq.Index(i))
		if !ok {
			return nil, fmt.Errorf("element %d is %s, not a string", i, seq.Index(i).Type())
		}
		out[i] = s
	}
	if len(out) == 0 || out[0] == "" {
		return nil, errors.New("no program")
	}
	return out, nil
}

// callExec checks, runs and records one command. It is refused, and
// recorded as a refusal, when the workflow does not declare the program's
// capability or (in a real run) the config does not grant it, or when
// the template does not expand to a safe argv.
func (h *host) callExec(name string, tmpl []string, args map[string]any) (any, error) {
	if err := h.checkBudget(); err != nil {
		return nil, err
	}
	h.step++
	step := h.step
	if h.replaying(step) {
		out, _, err := h.replayCall(step, "tool", name, stepvalue.Digest(h.secrets.Value(args)))
		return out, err
	}
	if h.yielding(step) {
		return nil, errYield
	}
	if err := h.checkCalls(1, 0); err != nil {
		return nil, err
	}
	program := candidate.ArgvProgram(tmpl)
	capability := "exec:" + program
	declared, granted := execPermitted(h.w.Capabilities, h.cfg.Grants.Capabilities, program)
	if !declared || (!granted && !h.opts.DryRun) {
		err := h.execDenied(name, capability, declared)
		h.refuse(step, name, err.Error(), []string{capability})
		return nil, err
	}
	dir, err := filepath.Abs(h.cfg.Roots()[0])
	if err != nil {
		return nil, fmt.Errorf("exec %s: %w", name, err)
	}
	argv, err := h.tools.ExpandArgv(tmpl, args)
	if err != nil {
		err = h.publicError(fmt.Errorf("exec %s: %w", name, err))
		h.refuse(step, name, err.Error(), nil)
		return nil, err
	}
	if p := argv[0]; strings.ContainsRune(p, '/') && !filepath.IsAbs(p) {
		argv[0] = filepath.Join(dir, p)
	}

	recArgs := h.secrets.Value(args).(map[string]any)
	// A command has no binding to declare what it is, so the record
	// takes the kind, capabilities and side effects of the candidate step
	// it performs, as callTool does for a binding that declares nothing:
	// a run's trace then mines with the traces it was mined from.
	plain := &toolexec.Binding{}
	kind := h.callKind(step, name, plain)
	caps := []string{capability}
	for _, c := range h.callCapabilities(step, name, plain) {
		if !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	effects := h.callSideEffects(step, name, plain, recArgs)
	start := time.Now()
	status := ReceiptOK
	var out any
	var exitCode *int
	if h.opts.DryRun {
		status = ReceiptDryRun
		out = h.dryRunAnswer(step, name, kind, recArgs)
	} else {
		out, exitCode, err = h.tools.RunArgv(argv, dir)
	}
	dur := time.Since(start)
	if err != nil {
		status = ReceiptError
	}
	recOut := h.secrets.Value(out)
	recArgv := slices.Clone(argv) // record replaces secrets in place
	argsDigest := h.record(step, kind, name, recArgs, recOut, caps, effects, status, dur, recArgv, err)
	if exitCode != nil {
		h.actions[len(h.actions)-1].Metadata["exit_code"] = *exitCode
	}
	h.res.Commands = append(h.res.Commands, Command{Step: step, Name: name, Argv: recArgv, Dir: dir, ExitCode: exitCode})
	h.res.ToolCalls++
	if err != nil {
		err = h.publicError(fmt.Errorf("exec %s: %w", name, err))
		if berr := h.checkBudget(); berr != nil {
			return nil, errors.Join(err, berr)
		}
		return nil, err
	}
	h.journalCall(step, "tool", name, argsDigest, recOut)
	return out, nil
}

// execPermitted reports whether a workflow declaring declared may run
// program (it declares exec:<program> or shell.exec), and whether the
// grants allow it (they name exec:<program> or shell.exec). A command runs
// only when both hold: the reviewed workflow says it runs the program,
// and the project lets it.
func execPermitted(declared, grants []string, program string) (isDeclared, isGranted bool) {
	has := func(list []string) bool {
		return slices.Contains(list, "exec:"+program) || slices.Contains(list, CapShellExec)
	}
	return has(declared), has(grants)
}

// execDenied is the refusal of a command whose capability is not
// declared or not granted.
func (h *host) execDenied(name, capability string, declared bool) error {
	if !declared {
		return fmt.Errorf("%w: exec %s runs %s, but the workflow does not declare %s or %s (its capabilities: %s)",
			ErrCapability, name, strings.TrimPrefix(capability, "exec:"), capability, CapShellExec, orNone(h.w.Capabilities))
	}
	return fmt.Errorf("%w: exec %s needs %s, which %s does not grant; %s",
		ErrCapability, name, capability, configName(h.cfg), grantHint(h.cfg.Grants.Capabilities, []string{capability}))
}

// needers names what needs the capabilities caps: commands when each
// is an exec capability, else steps (a built-in file tool among them).
func needers(caps []string) string {
	for _, c := range caps {
		if !strings.HasPrefix(c, "exec:") {
			return "steps"
		}
	}
	return "commands"
}

// grantHint is the [grants] line that would grant missing on top of
// grants; CapShellExec is offered instead when commands are missing.
func grantHint(grants, missing []string) string {
	all := slices.Clone(grants)
	for _, m := range missing {
		if !slices.Contains(all, m) {
			all = append(all, m)
		}
	}
	q := make([]string, len(all))
	for i, g := range all {
		q[i] = strconv.Quote(g)
	}
	hint := fmt.Sprintf("add [grants] capabilities = [%s]", strings.Join(q, ", "))
	if slices.ContainsFunc(missing, func(m string) bool { return strings.HasPrefix(m, "exec:") }) {
		hint += fmt.Sprintf(" (or %q for every program)", CapShellExec)
	}
	return hint
}

func configName(cfg *runconfig.Config) string {
	if cfg != nil && cfg.File != "" {
		return cfg.File
	}
	return runconfig.ConfigFile
}

// ExecCommand is one ctx.exec call of a workflow and what running it
// needs.
type ExecCommand struct {
	// Name is the step's name and Argv its template.
	Name string   `json:"name"`
	Argv []string `json:"argv"`
	// Capability is "exec:<program>".
	Capability string `json:"capability"`
	// Binding is the [tools] key that runs Name instead of the template
	// ("" when none; the name itself for an in-process tool). Such a
	// command needs its binding's capabilities, not Capability.
	Binding string `json:"binding,omitempty"`
	// Declared and Granted say whether the workflow declares Capability
	// (or shell.exec) and whether the config grants it (or shell.exec).
	Declared bool `json:"declared"`
	Granted  bool `json:"granted"`
}

// ExecCommands lists the ctx.exec calls of w, in order of first
// appearance (one entry per distinct name and template), with what each
// needs under cfg. codegen.Check, which Load runs, guarantees that every
// one is written out, so the list is complete before the first step.
func ExecCommands(w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool) []ExecCommand {
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	var out []ExecCommand
	for _, s := range starfile.ExecSites(w.File, w.Src) {
		program := candidate.ArgvProgram(s.Argv)
		c := ExecCommand{Name: s.Name, Argv: s.Argv, Capability: "exec:" + program}
		if b, ok := toolexec.Resolve(cfg, tools, s.Name); ok && (b.Inproc != nil || b.Pattern != "") {
			c.Binding = cmp.Or(b.Pattern, s.Name)
		}
		c.Declared, c.Granted = execPermitted(w.Capabilities, cfg.Grants.Capabilities, program)
		out = append(out, c)
	}
	return out
}

// GrantError lists, before the first step, the capabilities the
// workflow's commands need and do not have: those it does not declare,
// and those the config does not grant.
type GrantError struct {
	Undeclared []string
	Missing    []string
	// Grants are the config's grants and Config its file, for the hint.
	Grants []string
	Config string
	// Tools names, for a capability of Undeclared or Missing that a
	// bound tool needs, the tools that need it.
	Tools map[string][]string
}

// list is caps, each followed by the tools that need it.
func (e *GrantError) list(caps []string) string {
	out := make([]string, len(caps))
	for i, c := range caps {
		out[i] = c
		if t := e.Tools[c]; len(t) > 0 {
			out[i] += " (tool " + strings.Join(t, ", ") + ")"
		}
	}
	return strings.Join(out, ", ")
}

func (e *GrantError) Error() string {
	var parts []string
	if len(e.Undeclared) > 0 {
		parts = append(parts, fmt.Sprintf("the workflow runs %s needing %s, which it does not declare", needers(e.Undeclared), e.list(e.Undeclared)))
	}
	if len(e.Missing) > 0 {
		parts = append(parts, fmt.Sprintf("the workflow runs %s needing %s, which %s does not grant; %s",
			needers(e.Missing), e.list(e.Missing), e.Config, grantHint(e.Grants, e.Missing)))
	}
	return ErrCapability.Error() + ": " + strings.Join(parts, "; ")
}

func (e *GrantError) Unwrap() error { return ErrCapability }

// CheckExec reports, as a *GrantError, every capability the commands of w
// and the built-in file tools it calls need that w does not declare or,
// unless dryRun, cfg does not grant: both run with no binding, so a run
// is refused before its first step rather than at the step. It reports
// as well every capability a bound or in-process tool w may call needs
// (boundToolCapabilities) that w does not declare or cfg does not grant,
// dry run or not, as the check before each call does: a plan's verify
// node needing plan.verify is refused before the plan's first node, not
// after a human approved the gate before it.
func CheckExec(w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool, dryRun bool) error {
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	e := &GrantError{Grants: cfg.Grants.Capabilities, Config: configName(cfg)}
	for _, c := range builtinCapabilities(w, cfg, tools) {
		switch {
		case !slices.Contains(w.Capabilities, c):
			e.Undeclared = append(e.Undeclared, c)
		case !slices.Contains(cfg.Grants.Capabilities, c) && !dryRun:
			e.Missing = append(e.Missing, c)
		}
	}
	names, toolCaps := boundToolCapabilities(w, cfg, tools)
	for _, name := range names {
		for _, c := range toolCaps[name] {
			var list *[]string
			switch {
			case !slices.Contains(w.Capabilities, c):
				list = &e.Undeclared
			case !slices.Contains(cfg.Grants.Capabilities, c):
				list = &e.Missing
			default:
				continue
			}
			if !slices.Contains(*list, c) {
				*list = append(*list, c)
			}
			if e.Tools == nil {
				e.Tools = map[string][]string{}
			}
			e.Tools[c] = append(e.Tools[c], name)
		}
	}
	for _, c := range ExecCommands(w, cfg, tools) {
		switch {
		case c.Binding != "":
		case !c.Declared:
			if !slices.Contains(e.Undeclared, c.Capability) {
				e.Undeclared = append(e.Undeclared, c.Capability)
			}
		case !c.Granted && !dryRun:
			if !slices.Contains(e.Missing, c.Capability) {
				e.Missing = append(e.Missing, c.Capability)
			}
		}
	}
	if len(e.Undeclared) == 0 && len(e.Missing) == 0 {
		return nil
	}
	slices.Sort(e.Undeclared)
	slices.Sort(e.Missing)
	return e
}

// QuoteArgv renders an argv for reading, each argument quoted as a POSIX
// shell would need it. It is only for display: commands never go
// through a shell.
func QuoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
