// Package capture records the tool calls an MCP client makes, as traces
// that mining reads: it sits between a client (Claude Code, Codex, any MCP
// host) and the real server, relays every JSON-RPC message unchanged, and
// writes each client session as one crystallization trace (version 1).
//
// The main invariant: the proxy adds no visible behaviour. It does not
// speak MCP itself; it copies messages between two connections of the
// official Go SDK (a stdio connection to the client, and either a command
// transport or a streamable HTTP connection to the server) and only reads
// what passes. An SDK client and server pair in the middle would answer
// initialize with the proxy's own capabilities, re-validate arguments,
// renumber requests and drop methods it does not know; a message relay
// keeps initialize, tools/list (with annotations), notifications,
// progress, cancellation, pings, server-to-client requests (sampling,
// elicitation, roots) and methods newer than this build exactly as the
// two sides wrote them, in the order they wrote them. Each direction is
// one goroutine that reads a message and writes it before reading the
// next, so order within a direction is kept by construction.
//
// Towards a server started as a command (Command), the server's stdout
// is read line by line and a message that cannot be relayed (over the
// size limit, nested too deep, not JSON-RPC) is answered in place (a
// response becomes an error response with its id) instead of ending the
// relay, which the SDK's own command transport would do.
//
// Towards a streamable HTTP server (HTTPUpstream) the SDK's connection is
// likewise used below its session layer, so the connection adds what that
// layer would: the negotiated protocol version on each request, and the
// standalone GET stream of protocol versions before 2026-07-28, whose
// messages (what the server sends outside a request) are read from the
// same connection as the rest and so relayed like them. A JSON answer to
// a request that cannot be relayed (over the size limit, which the SDK
// does not bound, or one the SDK cannot decode, which would end its
// connection) is replaced by an error response for that request.
//
// # What a session records
//
// A tools/call request is remembered by its JSON-RPC id, and the response
// with that id from the server completes it: one action named after the
// tool, its arguments as parameters, the result as output (structured
// content when the tool returns some, else its text, parsed as JSON when
// it is JSON, the value the runtime gives a workflow for the same call),
// isError and the wall time. A tool the server annotates readOnlyHint is an
// observation (mining neither requires nor breaks on one); any other
// tool's call carries a side effect naming the server and tool, its
// mutation "destructive" or "additive" from destructiveHint (true when the
// server does not say, as the protocol defines), and idempotentHint is
// recorded with the annotations. The annotations are read from the
// server's tools/list responses as they pass; a call of a tool the client
// never listed is recorded without them, as a tool call.
//
// Arguments and results are redacted (package redact) before they are
// kept, and the whole trace, names included (a tool's, the server's, the
// client's), before it is written, so no secret reaches the disk. A session is written when it ends,
// and rewritten after every completed call, each time atomically (a
// temporary file renamed over the trace), so a proxy killed mid-session
// leaves the calls it saw and never a half-written file.
package capture
