// Package serve hands approved workflows back to agents: an MCP server
// (official Go SDK) whose tools are the approved, valid bundles of a set
// of directories, each call running its workflow on package runtime.
//
// The main invariant: a bundle is listed, and runs, only while it is
// ready. Readiness is decided by one function (ready) from bundle.Validate's
// recomputed checks, not from the status the manifest records: an
// unapproved bundle, a workflow edited after its approval (the approval
// is for other bytes), or any validation problem keeps it off the list,
// the server log says why, and a call naming it is a JSON-RPC error that
// says why too. The check is repeated when a call arrives, since the
// files may have changed since the listing.
//
// # Tools
//
// A bundle's tool is named after its workflow function. Its inputSchema
// (JSON Schema 2020-12) has one property per workflow parameter, typed
// and exemplified from the candidate's parameters in report.json, with
// the parameters without a default required and no other property
// allowed. Its description is SKILL.md's description when the bundle has
// an accepted skill, else the manifest's title and the workflow's
// docstring. Its annotations come from the candidate's side effects: no
// side effect is readOnlyHint; a side effect that is not marked
// "additive" (a write that may replace or delete) is destructiveHint.
// Two bundles with one workflow name serve the first (in path order),
// and the log names the other.
//
// # Calls
//
// A call runs the workflow with runner.Run and the Options the server
// was given (the project's config, grants, secrets and state directory),
// so the run is the one "crystallize run" would make: capability policy,
// receipts, trace.json and session.md. Its result is structured content
// {run_id, workflow, status, output, steps, …} and a one-line text
// summary. A run that reaches an approval nobody granted suspends, as
// runs do without a terminal, and the result says so with status
// "pending_approval", the boundary and the crystallize resume command
// that continues it. A call cannot carry an approval: the caller is the
// agent the boundary is there to stop, so only a person, through resume,
// decides it. A failed run, and arguments the workflow does not
// take, are tool errors (isError), which a model can read and correct.
//
// With Options.Register set, each call also registers as a live session
// while it runs (its runtime OnStart and Inbox hooks) and records how it
// ended, so that a call waiting for a person is listed as pending with
// its inbox item.
//
// # Session tools
//
// With Options.Agents set, four more tools let the agent on the other
// side of the connection appear in the live session registry (package
// registry, Agents) and ask a person for decisions: session_register
// (agent, model, branch, cwd, all optional; the agent defaults to the
// client's handshake name) returns a session id; session_ask (session
// id, question, options, optional default and timeout_seconds) posts a
// decision to the inbox and returns its item id at once; session_check
// (session id, item) reads pending, answered (option, by whom, why) or
// dismissed; session_end (session id, completed|failed|cancelled) ends
// the session and dismisses its unanswered questions. The person answers
// with crystallize review or session inbox answer.
//
// A session's heartbeat is renewed by the server while the connection
// that last called for it is open, and at each call: it shows as running
// however long the agent thinks between calls, and turns stale
// StaleAfter after its connection closed without session_end. Every
// argument is untrusted: registry.Agents bounds and checks it, a refusal
// is a tool error the model reads, and a session id that is not an agent
// session's is refused, so a client cannot post into a workflow run's
// inbox or read another session's answers. A bundle whose workflow is
// named like a session tool is not served.
//
// AgentsAPI serves the same operations as plain HTTP with JSON, for an
// agent without MCP, behind a bearer token (see api.go).
//
// # Transports
//
// Over stdio (RunStdio) a line the server cannot take (not JSON, an
// object for an id, a batch, a line over the size limit) is answered with
// a JSON-RPC error and the server goes on: the SDK's own stdio transport
// would end the session at the first one. Over streamable HTTP
// (ListenHTTP) the SDK's handler answers such a request itself.
//
// # Changes
//
// Watch polls the bundle directories (every Options.Poll, one second by
// default): a bundle is re-evaluated when the SHA-256 of its candidate.json
// or workflow file changes, or when it appears or disappears, and the
// tool list changes with it, which the SDK announces to clients as
// notifications/tools/list_changed. Polling two small files a second per
// bundle costs less than a file-watching dependency and behaves the same
// on every platform.
package serve
