package runtime

import (
	"context"
	"errors"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"slices"
)

// PreflightReport is what a workflow needs before its first step under a
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
func Preflight(ctx context.Context, w *Workflow, cfg *runconfig.Config, tools map[string]Tool, environ []string) (*PreflightReport, error) {
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
