package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/starfile"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
) // PreflightReport is what a workflow needs before its first step under a
// configuration, found without running it: the tools it calls and those
// nothing binds, the commands its ctx.exec calls run with the grants they
// need, and the option positions of its command bindings. Its JSON form
// is the output of "crystallize run --check --json".
type PreflightReport struct {
	Workflow        string          `json:"workflow"`
	Tools           []string        `json:"tools"`
	Unbound         []string        `json:"unbound"`
	Commands        []ExecCommand   `json:"commands"`
	Grants          []string        `json:"grants"`
	MissingGrants   []string        `json:"missing_grants"`
	Undeclared      []string        `json:"undeclared"`
	OptionPositions []OptionWarning `json:"option_positions"`

	// bindErr is CheckMCP's answer: unbound names and servers that could
	// not be listed; grantErr is CheckExec's.
	bindErr, grantErr error
}

// Bound reports whether every tool the workflow calls is bound.
func (r *PreflightReport) Bound() bool { return r.bindErr == nil }

// Err is the check's verdict: an *UnboundError for tools nothing binds,
// a server that could not be listed, and a *GrantError for commands
// whose capabilities are not declared or granted, joined; nil when the
// workflow can run.
func (r *PreflightReport) Err() error { return errors.Join(r.bindErr, r.grantErr) }

// Preflight checks w against cfg without running it: the bindings of its
// tools (starting each MCP server to list its tools, see CheckMCP) and
// the capabilities of its commands, with tools as the in-process tools
// the run would have and environ the environment of the servers. The
// error is for a check that could not take place; what the check finds
// is in the report and its Err.
func Preflight(ctx context.Context, w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool, environ []string) (*PreflightReport, error) {
	bindErr := CheckMCP(ctx, w, cfg, Options{Environ: environ, Tools: tools})
	var ue *UnboundError
	if bindErr != nil && !errors.As(bindErr, &ue) {
		return nil, bindErr
	}
	r := &PreflightReport{Workflow: w.Name, Tools: w.Tools, Unbound: []string{}, bindErr: bindErr}
	if r.Tools == nil {
		r.Tools = []string{}
	}
	if ue != nil {
		r.Unbound = ue.Names
	}
	r.Commands = ExecCommands(w, cfg, tools)
	if r.Commands == nil {
		r.Commands = []ExecCommand{}
	}
	r.Grants, r.MissingGrants, r.Undeclared = ExecGrants(r.Commands)
	// The built-in file tools, too, run with no binding, and need only
	// their grant.
	for _, c := range builtinCapabilities(w, cfg, tools) {
		switch {
		case !slices.Contains(w.Capabilities, c):
			r.Undeclared = append(r.Undeclared, c)
		case cfg == nil || !slices.Contains(cfg.Grants.Capabilities, c):
			r.MissingGrants = append(r.MissingGrants, c)
		}
		r.Grants = append(r.Grants, c)
	}
	// So do the bound tools, with the capabilities they declare.
	names, toolCaps := boundToolCapabilities(w, cfg, tools)
	for _, name := range names {
		for _, c := range toolCaps[name] {
			switch {
			case !slices.Contains(w.Capabilities, c):
				r.Undeclared = append(r.Undeclared, c)
			case cfg == nil || !slices.Contains(cfg.Grants.Capabilities, c):
				r.MissingGrants = append(r.MissingGrants, c)
			}
			r.Grants = append(r.Grants, c)
		}
	}
	slices.Sort(r.Grants)
	slices.Sort(r.MissingGrants)
	slices.Sort(r.Undeclared)
	r.Grants = slices.Compact(r.Grants)
	r.MissingGrants = slices.Compact(r.MissingGrants)
	r.Undeclared = slices.Compact(r.Undeclared)
	r.grantErr = CheckExec(w, cfg, tools, false)
	r.OptionPositions = OptionWarnings(w, cfg, tools)
	return r, nil
}

// ErrToolNotLiteral is returned for a call of a tool whose name the
// workflow does not write as a string literal.
var ErrToolNotLiteral = errors.New("tool name not written in the workflow")

// literalTool refuses a tool call whose name is not one the workflow
// writes as a string literal: the first argument of ctx.tool or
// ctx.try_tool, an element of ctx.agent's tools list, or the name of a
// ctx.exec step. Load, Check, run --check and the capability checks
// before the first step see only those names; a name computed at run
// time ("fs." + "write") would otherwise be called without any of them
// having seen it. Code generation always writes literals.
func literalTool(w *Workflow, name string) error {
	if slices.Contains(w.Tools, name) {
		return nil
	}
	for _, s := range starfile.ExecSites(w.File, w.Src) {
		if s.Name == name {
			return nil
		}
	}
	return fmt.Errorf("%w: tool_not_literal: %q is not among the tool names the workflow writes as string literals (%s); write the name as a literal so that run --check and the checks before the first step see it", ErrToolNotLiteral, name, orNone(w.Tools))
}

// OptionWarning is a parameter a command binding of a workflow's tool
// puts where the program may read an option (see OptionPosition).
type OptionWarning struct {
	Tool      string `json:"tool"`
	Binding   string `json:"binding"`
	Index     int    `json:"index"`
	Element   string `json:"element"`
	Parameter string `json:"parameter"`
}

func (o OptionWarning) String() string {
	return fmt.Sprintf("tools.%q command argv[%d] %s takes parameter %s where an option can go: a value starting with \"-\" is refused; put it after a literal \"--\" or list it in allow_options if it may be an option",
		o.Binding, o.Index, o.Element, o.Parameter)
}

// OptionWarnings lists, for run --check, the option positions of the
// command bindings of the tools w calls.
func OptionWarnings(w *Workflow, cfg *runconfig.Config, tools map[string]toolexec.Tool) []OptionWarning {
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	out := []OptionWarning{}
	seen := map[string]bool{}
	for _, name := range w.Tools {
		b, ok := toolexec.Resolve(cfg, tools, name)
		if !ok || b.Tool == nil || seen[b.Pattern] {
			continue
		}
		seen[b.Pattern] = true
		for i, el := range b.Tool.Command {
			if p, ok := toolexec.OptionPosition(b.Tool, i); ok {
				out = append(out, OptionWarning{Tool: name, Binding: b.Pattern, Index: i, Element: el, Parameter: p})
			}
		}
	}
	return out
}

// CheckMCP is Check, and it also asks the servers of MCP bindings: a name
// bound to an MCP server counts as bound only when the server declares
// the tool the name calls. It starts each server those names need once
// (with opts.Environ and opts.HTTPClient, as a run would), lists its
// tools and closes it. The result joins an *UnboundError listing every
// unbound name and an error for each server that could not be started or
// listed (wrapping ErrMCP); the names bound to such a server are not
// listed as unbound, since whether they are is unknown.
func CheckMCP(ctx context.Context, w *Workflow, cfg *runconfig.Config, opts Options) error {
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	e := newExecutor(ctx, cfg, opts, &toolexec.Scrubber{})
	defer e.CloseMCP()
	var unbound []string
	var errs []error
	for _, name := range w.Tools {
		b, ok := toolexec.Resolve(cfg, opts.Tools, name)
		if !ok {
			unbound = append(unbound, name)
			continue
		}
		if b.Tool == nil || b.Tool.MCP == "" {
			continue
		}
		declared, opened, err := e.MCPTool(b.Tool.MCP, toolexec.MCPToolName(b.Pattern, b.Tool, name))
		if err != nil {
			if opened {
				errs = append(errs, err)
			}
			continue
		}
		if !declared {
			unbound = append(unbound, name)
		}
	}
	if len(unbound) > 0 {
		errs = append([]error{&UnboundError{Names: unbound}}, errs...)
	}
	return errors.Join(errs...)
}
