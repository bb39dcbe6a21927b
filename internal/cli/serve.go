package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/serve"
)

const serveDoc = "serve hands approved workflows back to agents, so they call the workflow instead of repeating its steps."

func newServeCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve approved workflows to agents",
		Long:  serveDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("serve needs a subcommand: crystallize serve mcp")
		},
	}
	cmd.AddCommand(newServeMCPCmd(e), newServeAgentsCmd(e))
	return cmd
}

const serveAgentsDoc = `serve agents serves the session tools of serve mcp as a small HTTP API
with JSON, for an agent that speaks no MCP (a script, a CI job): it
registers in --state-dir's registry, asks a person for decisions through
the inbox, reads the answers and ends, with the same bounds and
refusals.

  POST /v1/sessions                        {"agent", "model"?, "branch"?, "cwd"?} → 201 {"session_id"}
  POST /v1/sessions/ID/questions           {"question", "options", "default"?, "timeout_seconds"?} → 201 {"item", "state"}
  GET  /v1/sessions/ID/questions/ITEM      → 200 {"item", "state", "option"?, "by"?, "reason"?, "answered_at"?}
  POST /v1/sessions/ID/end                 {"status": "completed"|"failed"|"cancelled"} → 200 {"session_id", "status"}

It listens on --addr, a loopback address only (default 127.0.0.1:0, a
free port), and prints the address on stderr. Every request must carry
"Authorization: Bearer TOKEN": a fresh token is written at each start to
<state-dir>/` + registry.TokenFile + ` (mode 0600), which a local agent of the
same user reads. A refusal is 400 with {"error"}, a missing or wrong
token 401, a body over 64 KiB 413.

A session of the API is live by its calls: each renews its heartbeat,
and it turns stale 30 seconds after the last one (an agent waiting for an
answer polls its question, which keeps it live). The person answers with
crystallize review or crystallize session inbox answer.

Exit status: 0 when stopped (Ctrl-C), 1 on error, 2 on a usage error.`

func newServeAgentsCmd(e *env) *cobra.Command {
	var addr, stateDir string
	cmd := &cobra.Command{
		Use:   "agents [--addr 127.0.0.1:0] [--state-dir DIR]",
		Short: "Serve the session tools as a local HTTP API",
		Long:  serveAgentsDoc,
		Example: `  crystallize serve agents --addr 127.0.0.1:8932
  curl -H "Authorization: Bearer $(cat .crystallize/agents.token)" \
       -d '{"agent":"ci-bot"}' http://127.0.0.1:8932/v1/sessions`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := serve.CheckLoopback(addr, false); err != nil {
				return usagef("--addr %q: want a loopback host:port, such as 127.0.0.1:8932: the API posts into a person's inbox", addr)
			}
			token, file, err := registry.NewToken(stateDir)
			if err != nil {
				return err
			}
			agents := registry.NewAgents(stateDir, registry.Options{})
			defer agents.Close()
			err = serve.ListenAgentsAPI(cmd.Context(), addr, serve.AgentsAPI(agents, token), func(a net.Addr) {
				fmt.Fprintf(e.stderr, "serve: agents API on http://%s (token in %s)\n", a, file)
			})
			if err != nil {
				return fmt.Errorf("serve agents: %w", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "the loopback host:port to listen on")
	runStateDirFlag(cmd.Flags(), &stateDir)
	return cmd
}

const serveMCPDoc = `serve mcp is an MCP server whose tools are the approved, valid bundles
found in --bundles (each a bundle directory, or a directory of bundle
directories; default the current directory). It speaks MCP on stdin and
stdout, or streamable HTTP with --http ADDR.

Each bundle is one tool named after its workflow. Its inputSchema (JSON
Schema 2020-12) has the workflow's parameters, typed and with examples from
the candidate, the ones without a default required; its description is the
bundle's SKILL.md description (else its title and docstring); its
annotations come from the workflow's side effects (none: readOnlyHint; a
write not marked additive: destructiveHint).

A bundle is served only while crystallize validate passes on it and its
promotion status is ready: not approved, approved for other workflow bytes
(edited after approval), or invalid, it is not listed, the log on stderr
says why, and a call naming it is an MCP error saying why. The directories
are checked every second, and clients are sent notifications/tools/
list_changed when a bundle is approved, changed or removed.

A call runs the workflow like crystallize run, with the project's
configuration (--config, default ./crystallize.toml when it exists): its
tool bindings, [grants] capabilities and secrets; the run is recorded in
--state-dir (trace.json, session.md). The result's structuredContent is
the object crystallize run --json prints ({"run_id", "workflow", "status",
"output", "steps", "tool_calls", "model_calls", "approvals", "receipts",
"duration_ms", "dir", "error", ...}; see crystallize run --help), with the
text content a one-line summary. A run that reaches an approval suspends and
returns status "pending_approval" with "approval" ({"step", "boundary",
"prompt"}) and "resume", the crystallize resume command a person runs to
continue it; a call cannot approve, since the caller is the agent the
boundary is there to stop. A failed run, or arguments the workflow does not take, is a
tool result with isError.

--http serves streamable HTTP at ADDR (host:port) on loopback only; another
interface is refused unless --allow-remote is given, since a caller can run
every served workflow with the project's grants. A session that gets no
request for --session-idle (default 30m; the time a call runs does not
count) is closed, and its client must initialize a new one; 0 keeps
sessions until their client ends them.

Over stdio, a line that is not JSON is answered with a JSON-RPC error
-32700, and one that is not a message the server takes (an object for an
id, a batch, a line over 16 MiB) with -32600; serving goes on.

Next to the workflows it serves four session tools, so that the agent
calling (Claude Code, any MCP client) appears in crystallize sessions and
the status line and can ask a person for decisions:

  session_register {agent?, model?, branch?, cwd?} → {"session_id"}
      (agent defaults to the client's name; branch to cwd's git branch)
  session_ask {session_id, question, options, default?, timeout_seconds?}
      → {"item", "state": "pending"}, at once; the question is an inbox
      item a person answers with crystallize review or crystallize
      session inbox answer ITEM --decide OPTION
  session_check {session_id, item} → {"item", "state": pending, answered
      or dismissed, "option", "by", "reason", "answered_at"}; with a
      timeout, default holds once it passed unanswered (by "timeout")
  session_end {session_id, status: completed|failed|cancelled}

The session is registered in --state-dir's registry as agent type
"agent": it stays running while the connection is open (the server
renews its heartbeat) and turns stale when the connection closes without
session_end; a call with its id takes it over again (a restarted server).
Names are cut to one printable word; a question over 4096 bytes, more
than 16 options, control characters, an unknown session id or one that
is not an agent session's are refused as tool errors. A bundle whose
workflow is named like a session tool is not served.
--session-tools=false serves the workflows alone.

--list prints which bundles would be served, and why the others would not,
and exits; with --json, {"bundles": [{"dir", "tool", "served", "reason",
"input_schema", "description", "annotations"}]}.

To use it from a client, add to its MCP configuration:
  "workflows": {"command": "crystallize", "args": ["serve", "mcp", "--bundles", "/abs/bundles"]}`

type serveFlags struct {
	bundles     []string
	config      string
	httpAddr    string
	allowRemote bool
	sessionIdle time.Duration
	stateDir    string
	list        bool
	asJSON      bool
	// sessionTools serves the session tools next to the workflows.
	sessionTools bool
}

func newServeMCPCmd(e *env) *cobra.Command {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "mcp [--bundles DIR]... [--config FILE] [--http ADDR] [--list [--json]]",
		Short: "Serve approved bundles as MCP tools",
		Long:  serveMCPDoc,
		Example: `  crystallize serve mcp --bundles bundles/
  crystallize serve mcp --bundles bundles/ --http 127.0.0.1:8931
  crystallize serve mcp --bundles bundles/ --list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServeMCP(cmd.Context(), e, f)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.bundles, "bundles", []string{"."}, "a bundle directory or a directory of bundles (repeatable)")
	configFlag(fs, &f.config)
	fs.StringVar(&f.httpAddr, "http", "", "serve streamable HTTP at this host:port instead of stdio")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "allow --http on an address that is not loopback")
	fs.DurationVar(&f.sessionIdle, "session-idle", serve.DefaultSessionIdle, "with --http, close a session after this long without a request (0: never)")
	runStateDirFlag(fs, &f.stateDir)
	fs.BoolVar(&f.list, "list", false, "print which bundles would be served and exit")
	fs.BoolVar(&f.asJSON, "json", false, "with --list, print JSON")
	fs.BoolVar(&f.sessionTools, "session-tools", true, "serve the session tools (session_register, session_ask, session_check, session_end)")
	return cmd
}

func runServeMCP(ctx context.Context, e *env, f *serveFlags) error {
	if f.asJSON && !f.list {
		return usagef("--json goes with --list")
	}
	if f.httpAddr != "" {
		if err := checkLoopback(f.httpAddr, f.allowRemote); err != nil {
			return err
		}
	}
	if err := serve.Check(f.bundles); err != nil {
		return err
	}
	cfg, err := (&runFlags{config: f.config}).loadConfig()
	if err != nil {
		return err
	}
	environ := os.Environ()
	log := e.stderr
	if f.list {
		log = nil
	}
	var agents *registry.Agents
	if f.sessionTools {
		// Opened at the first session call, so serving creates no
		// registry until an agent registers.
		agents = registry.NewAgents(f.stateDir, registry.Options{})
		defer agents.Close()
	}
	s := serve.New(serve.Options{
		Bundles: f.bundles,
		Run: runner.Options{
			Config:   cfg,
			Tools:    runner.InprocTools(cfg, environ),
			Getenv:   e.getenv,
			Environ:  environ,
			StateDir: f.stateDir,
		},
		Log:         log,
		Version:     toolVersion(),
		SessionIdle: sessionIdle(f.sessionIdle),
		Register:    serveRegistry(e, f.stateDir),
		Agents:      agents,
	})
	if f.list {
		return writeServeList(e, s.Status(), f.asJSON)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	if f.httpAddr == "" {
		return s.RunStdio(ctx, os.Stdin, e.stdout, serve.StdioOptions{})
	}
	err = s.ListenHTTP(ctx, f.httpAddr, func(a net.Addr) { fmt.Fprintf(e.stderr, "serve: listening on http://%s\n", a) })
	if err != nil {
		return fmt.Errorf("serve mcp: %w", err)
	}
	return nil
}

// sessionIdle is --session-idle as serve.Options takes it: 0 there is the
// default, and "never" is negative.
func sessionIdle(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// checkLoopback refuses an --http address off the loopback interface
// unless allowed (serve.CheckLoopback), worded as its flags.
func checkLoopback(addr string, allow bool) error {
	err := serve.CheckLoopback(addr, allow)
	switch {
	case errors.Is(err, serve.ErrRemote):
		return usagef("--http %q is not a loopback address; anyone who can reach it can run the served workflows with this project's grants (pass --allow-remote to serve it anyway)", addr)
	case err != nil:
		return usagef("--http %q: want host:port, such as 127.0.0.1:8931", addr)
	}
	return nil
}

func writeServeList(e *env, entries []serve.Entry, asJSON bool) error {
	if asJSON {
		return writeJSON(e.stdout, serve.Listing{Bundles: entries})
	}
	if len(entries) == 0 {
		fmt.Fprintln(e.stdout, "no bundles found")
	}
	for _, b := range entries {
		if b.Served {
			fmt.Fprintf(e.stdout, "served   %s: tool %s\n", b.Dir, b.Tool)
		} else {
			fmt.Fprintf(e.stdout, "refused  %s: %s\n", b.Dir, b.Reason)
		}
	}
	return nil
}

// serveRegistry registers each served call in the live session registry
// of stateDir, as agent type "agent" named after the MCP client that
// called (claude-code, codex…): the run is started by an agent calling a
// tool, not by a person running a workflow or a plan, and that is who
// "crystallize sessions" and the status line should say is behind it.
func serveRegistry(e *env, stateDir string) func(string, string) serve.Registration {
	return func(workflow, client string) serve.Registration {
		l := newLive(e, stateDir, registry.TypeAgent, workflow).As(client, "")
		return serve.Registration{OnStart: l.Start, Inbox: l.Inbox, End: l.End}
	}
}
