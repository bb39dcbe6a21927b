package cli

import (
	"fmt"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/capture"
)

const captureDoc = `capture records what agents do, as traces crystallize mine reads.`

func newCaptureCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "Record an agent's tool calls as traces",
		Long:  captureDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("capture needs a subcommand: crystallize capture mcp -- SERVER_COMMAND [ARGS...]")
		},
	}
	cmd.AddCommand(newCaptureMCPCmd(e))
	return cmd
}

const captureMCPDoc = `capture mcp is a recording MCP proxy. An MCP client (Claude Code, Codex,
any MCP host) starts it instead of the server; it starts the server
(SERVER_COMMAND, over stdio) or connects to it (--upstream, streamable
HTTP), and relays every JSON-RPC message between the two unchanged: the
client sees the server's capabilities, tools and annotations, notifications,
progress and cancellations exactly as the server sends them. Nothing is
written to stdout but the server's messages; the server's stderr passes
through.

Every tools/call is recorded: the tool, its arguments, its result
(structured content, else text), isError and its duration. When the client
session ends, it is written to --out as one crystallization trace (version
1), <session-id>.json, which crystallize mine reads: each call is an action
(kind tool_call, or observation for a tool the server marks readOnlyHint;
any other tool's call records a side effect, destructive or additive by
destructiveHint, and idempotentHint), metadata.agent "mcp-capture" and
metadata.server the server's name. Secrets in arguments and results are
redacted before they are written. The file is rewritten atomically as calls
complete, so a proxy that is killed leaves the calls it saw; a session with
no tool call writes nothing.

To record a server, put crystallize in front of it in the client's MCP
configuration; for a server configured as
  "notes": {"command": "npx", "args": ["-y", "notes-server"]}
write
  "notes": {"command": "crystallize", "args": ["capture", "mcp", "--out", "/abs/captures", "--", "npx", "-y", "notes-server"]}
and for a streamable HTTP server
  "notes": {"command": "crystallize", "args": ["capture", "mcp", "--upstream", "http://127.0.0.1:8931/mcp"]}
Then mine the captures: crystallize mine --from /abs/captures ...

With --upstream and a server speaking a protocol version before 2026-07-28,
the proxy also opens the server's standalone stream (an HTTP GET with the
session's id) and relays what the server sends outside a request
(notifications/tools/list_changed, log messages, progress) to the client in
order; a server that offers none (405) is relayed without it, and one that
refuses it otherwise is named on stderr. A broken stream is reopened with
Last-Event-ID, so a server that keeps its events replays what was missed.
A request that a proxy in front of the server answers with 429, 500, 502,
503 or 504 and no JSON-RPC message, or that gets no answer, fails alone:
the client gets a JSON-RPC error naming the URL and status with the first
1 KiB of the body's text, and the trace records the call's http_status. A
notification refused that way is named on stderr. Three messages in a row
without an answer end the relay.

A message a server started as a command writes that cannot be relayed
(larger than 16 MiB, nested deeper than a JSON decoder goes, or not
JSON-RPC) fails alone too: a response reaches the client as a JSON-RPC
error (-32603) with its id, a request of the server's is answered to the
server with that error, and a notification is named on stderr. The same
holds for a JSON answer of an --upstream server to a request.

Exit status: 0 when the session ended (the client closed its input), 1 when
the server could not be started or the relay failed, 2 on a usage error.`

func newCaptureMCPCmd(e *env) *cobra.Command {
	var out, upstream string
	cmd := &cobra.Command{
		Use:   "mcp [--out DIR] [--upstream URL] [-- SERVER_COMMAND [ARGS...]]",
		Short: "Relay an MCP server to a client and record its tool calls",
		Long:  captureMCPDoc,
		Example: `  crystallize capture mcp -- npx -y @modelcontextprotocol/server-filesystem /tmp
  crystallize capture mcp --out traces/ --upstream http://127.0.0.1:8931/mcp`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCaptureMCP(cmd, e, out, upstream, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", capture.DefaultOut, "directory the session's trace is written to")
	fs.StringVar(&upstream, "upstream", "", "URL of a streamable HTTP MCP server to relay instead of starting one")
	return cmd
}

func runCaptureMCP(cmd *cobra.Command, e *env, out, upstream string, args []string) error {
	var server mcp.Transport
	var name string
	switch {
	case upstream != "" && len(args) > 0:
		return usagef("capture mcp: give a server command or --upstream, not both")
	case upstream != "":
		up, host, err := capture.NewHTTPUpstream(upstream, func(msg string) {
			fmt.Fprintf(e.stderr, "crystallize: capture mcp: %s\n", msg)
		})
		if err != nil {
			return usagef("capture mcp: --upstream %q is not an http or https URL", upstream)
		}
		server, name = up, host
	case len(args) == 0:
		return usagef("capture mcp: no server; give its command after --, or --upstream URL")
	default:
		server, name = capture.NewCommand(args, e.stderr, func(msg string) {
			fmt.Fprintf(e.stderr, "crystallize: capture mcp: %s\n", msg)
		})
	}
	// A client usually stops a server with SIGTERM once it has closed
	// its input; the session is written either way.
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM)
	defer stop()
	file, err := capture.Run(ctx, &mcp.StdioTransport{}, server, capture.Options{Out: out, Server: name})
	if err != nil {
		if file != "" {
			fmt.Fprintf(e.stderr, "crystallize: capture mcp: the calls before the failure are recorded in %s\n", file)
		}
		return fmt.Errorf("capture mcp: %w", err)
	}
	if file != "" {
		fmt.Fprintf(e.stderr, "crystallize: capture mcp: session recorded in %s\n", file)
	} else {
		fmt.Fprintln(e.stderr, "crystallize: capture mcp: the session made no tool call; nothing recorded")
	}
	return nil
}
