package runtime

import (
	"context"
	"net/http"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// executor executes a run's tool calls: command, http and MCP bindings,
// the file built-ins confined to the workspace roots and kept out of the
// protected set, and ctx.exec's commands. It holds what a run's calls
// share: the MCP sessions, the pinned workspace roots and the protected
// set, computed once.
type executor struct {
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
	secrets *scrubber

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
