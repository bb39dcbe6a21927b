package toolexec

import (
	"context"
	"net/http"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// Executor executes a run's tool calls: command, http and MCP bindings,
// the file built-ins confined to the workspace roots and kept out of the
// protected set, and ctx.exec's commands. It holds what a run's calls
// share: the MCP sessions, the pinned workspace roots and the protected
// set, computed once.
type Executor struct {
	ctx context.Context
	cfg *runconfig.Config
	// environ is the base environment of commands; getenv resolves the
	// secrets of templates; a dry run resolves none (dryRun).
	environ    []string
	getenv     func(string) string
	dryRun     bool
	stateDir   string
	httpClient *http.Client
	// secrets are replaced in everything recorded; the executor adds
	// the secrets it resolves.
	secrets *Scrubber

	// servers are the run's MCP sessions, by [mcp.*] key (see mcp.go).
	servers map[string]*mcpServer
	// protected is the protected set of the file built-ins, computed on
	// first use (see guards).
	protected []guard
	// rootChecks caches, per workspace root, what protect needs of the
	// root and the directories above it (see protect).
	rootChecks rootCache
	// roots holds the workspace roots the file built-ins opened.
	roots openRoots
	// checked is what the protected-set check found of the path of the
	// file built-in call about to run (see guardPath).
	checked checkedPath
}

// Settings are what a run gives its executor beyond the
// configuration.
type Settings struct {
	// Environ is the base environment of commands (only the variables
	// every program needs pass, and those a binding names).
	Environ []string
	// Getenv resolves the {secret:ID} of templates; nil resolves none.
	Getenv func(string) string
	// DryRun executes nothing and resolves no secret: a template's
	// secret is written as the placeholder it is recorded as.
	DryRun bool
	// StateDir is the run's state directory, in the protected set.
	StateDir string
	// HTTPClient makes the requests of http bindings and MCP servers
	// over HTTP; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Secrets receives the secrets the executor resolves, to be
	// replaced in everything recorded; nil keeps them nowhere.
	Secrets *Scrubber
}

// New is the executor of one run's tool calls under cfg: ctx
// bounds every call.
func New(ctx context.Context, cfg *runconfig.Config, s Settings) *Executor {
	if s.Secrets == nil {
		s.Secrets = &Scrubber{}
	}
	return &Executor{
		ctx: ctx, cfg: cfg, environ: s.Environ, getenv: s.Getenv, dryRun: s.DryRun,
		stateDir: s.StateDir, httpClient: s.HTTPClient, secrets: s.Secrets,
	}
}

// CloseRoots closes the workspace roots the file built-ins opened.
func (h *Executor) CloseRoots() { h.roots.close() }
