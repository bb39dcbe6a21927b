// Package runner runs crystallized workflows: it loads a workflow (a bare
// .star file or a bundle directory), binds the tool names it calls to
// executors through the project configuration (crystallize.toml), and calls
// the workflow function with a ctx host object, recording every step.
//
// The main invariant: nothing a workflow does escapes the host. A workflow
// reaches the world only through ctx.tool, ctx.exec, ctx.model, ctx.approve
// and ctx.secret (and ctx.try_tool, ctx.agent and ctx.map, which are made of
// tool and model calls); every one of those calls is checked before it happens (the
// tool is bound, its capabilities are in the workflow's declared set
// intersected with the config's grants, the secret is declared) and is
// recorded after, successful or not. A run always leaves a record in
// <StateDir>/runs/<run-id>/: trace.json in the crystallization trace format
// (so mining can read runs) and session.md, a markdown session log (the format of package
// session). Records are kept in memory as the run goes, one entry appended
// per step, and written once when it ends (see canon.go for how the trace
// is encoded without re-encoding it whole). Secret values resolved for the run are replaced in everything
// recorded (arguments, outputs, log lines, errors, digests are taken after
// that replacement), so no file the run writes contains one.
//
// # Interpreter
//
// Workflows are Starlark in the dialect codegen checks (codegen.Check):
// the only predeclared names are json and struct, load is refused, and
// Starlark itself has no clock, randomness or I/O. A thread has a step
// budget (Options.MaxSteps, default DefaultMaxSteps) and is cancelled, via
// Thread.Cancel, when the run's context is: a cancelled run is recorded
// with status "cancelled", and a tool command in flight is killed.
// Its memory budget (Options.MaxMemory, see budget.go) is checked before
// every large allocation: the workflow is compiled with its *, + and %
// operators and the built-ins that allocate by size replaced by checked
// ones (allocguard.go).
//
// # Tools
//
// Tool names resolve to bindings, and calls are executed, by package
// toolexec: in-process tools, command, http and MCP bindings, and the
// file built-ins fs.read, fs.write and fs.edit, confined to the workspace
// roots and kept out of the protected set. Its package comment says how
// a name resolves and what each executor does; the host decides before
// each call whether the workflow may make it, and records it after.
//
// Every ctx.tool name written as a string literal is resolved before the
// first step runs; Check does only that, listing every unbound name. A
// call of a name the workflow does not write as a literal (computed at
// run time) is refused (ErrToolNotLiteral), so the names checked are all
// the names a run can call.
//
// # Commands
//
// ctx.exec(name, argv, **kwargs) runs a program without a binding: it is
// what code generation writes for a step mined from a shell command, with
// the name and keyword arguments ctx.tool would take (so the run records
// the action its source traces recorded) and the step's argv template,
// a list literal (codegen.Check refuses anything else, so every program a
// workflow runs is known before it starts). The template is expanded by
// the rules of command bindings: each {key} is replaced by that keyword
// argument inside its one element, never split and never seen by a shell.
// ctx.exec adds three refusals: {secret:ID} (pass ctx.secret("ID") as an
// argument instead, which the workflow must declare), a placeholder in the
// program, and a value starting with "-" for an element that is exactly
// one placeholder (ErrOptionArgument): the program would read it as an
// option, not as the operand the template means. A value after a literal
// prefix ("--title={title}") is that option's own value and passes.
//
// Running a program needs the capability exec:<program> (the base name of
// argv[0]) or shell.exec, for any program: declared by the workflow (its
// header's capabilities line, or its bundle's manifest) and granted in
// crystallize.toml [grants] capabilities. Deny by default: with no config
// nothing is granted. Both are checked before the first step (CheckExec,
// a *GrantError naming the [grants] line to add); a dry run needs the
// declaration but no grant, since it runs nothing. A grant is worth what
// the program does with its arguments: exec:git lets the workflow's git
// commands run with any parameter values, and exec:python for a template
// with a {code} parameter runs whatever the caller passes.
//
// The program runs in the first workspace root (the current directory
// without a config; a relative program path is relative to it), with no
// stdin, DefaultToolTimeout, and an environment reduced to HOME, LANG,
// LANGUAGE, LC_ALL, LC_CTYPE, LC_MESSAGES, LOGNAME, PATH, TMPDIR, TZ and
// USER (and, on Windows, what starting a process needs), so tokens in the
// environment do not reach it.
// Its result is {"stdout", "stderr", "exit_code"}, each stream kept up to
// 1 MiB; a non-zero exit fails the step, quoting stderr. The action is
// recorded like a tool call: kind tool_call, the call's name and
// arguments, capabilities [exec:<program>], and metadata argv (expanded,
// secrets replaced) and exit_code; Result.Commands lists the argv of each.
//
// A binding of the name ([tools."git checkout"], exact or glob, or an
// in-process tool) runs the call instead, as ctx.tool(name, **kwargs)
// with the binding's capabilities: the way to give a command a different
// program, environment or working directory.
//
// A run of a bundle records each tool call as the bundle's candidate
// describes the step it performs: its kind, capabilities and side effects
// (a parameterized side-effect target filled in from the call), unless the
// binding declares them itself. The check before the call uses the same
// capabilities, so a step the candidate says writes files needs fs.write.
// A run's trace therefore mines with the traces its bundle was mined from
// whatever the bindings say. A dry run executes no tool: it answers each
// call with the candidate step's expected output, else a placeholder of
// the recorded shape whose leaves say they are placeholders (see
// dryRunAnswer), and lists every call in Result.DryRunCalls.
//
// # Secrets
//
// A secret is a logical id: ctx.secret("ID") in a workflow (which must
// declare it), "{secret:ID}" in a binding's command, cwd, env or http
// headers (never an http URL, which is recorded), or a model's api_key.
// Its value comes from Options.Getenv (the cli passes the environment),
// else from the KEY=VALUE file [secrets] file names, which is refused when
// group or others can read it. ctx.secret reads the environment only for
// an id [secrets] env lists, and only the file otherwise: a workflow's
// own declaration names what it needs, the configuration decides what it
// gets (a bare .star file could otherwise read any variable). Values are
// replaced in everything recorded as they are and in the transformed
// forms redact.ReplaceTransformed finds. Every secret a binding of the workflow's
// tools names is checked to be set before the first step.
//
// # Models
//
// A ctx.model step named name is answered by Options.Model when set, by
// the bundle's fixtures in a dry run, and otherwise by the provider of
// [models.name] or [models.default]: an OpenAI-compatible chat-completions
// client, an Anthropic Messages client (both net/http, see NewProvider),
// or replay. Every model step the source names is checked to have a
// provider, and every API key secret to be set, before the first step.
// Tokens and cost (at the entry's per-million-token prices) are recorded
// in the step's receipt, its action's cost and the trace's usage; the key
// is sent only in the authentication header and, like every secret, is
// replaced in everything recorded.
//
// A step with a schema (ctx.model(…, schema = {…}); a mined workflow's
// fuzzy step carries the shape of the output the steps after it read) is
// sent it in the provider's structured-output mode (OpenAI-compatible
// response_format json_schema; an Anthropic tool whose input_schema it
// is). An answer that does not conform, prose included, is asked for once
// more with the reason; a second one that does not either fails the step
// with ErrModelOutput, which the run's fallback policy handles as a
// failed tool call. Provider errors end the run.
//
// # Approvals
//
// ctx.approve is decided by Options.Reject, Options.Approve, a dry run or
// Options.Prompter; with none of them the run stops in state
// pending_approval and writes journal.json, and Resume continues it by
// replaying the journal (see journal.go for why that is safe). The journal,
// its MAC and the state key are synced to disk before Run returns; a run
// that completes syncs nothing.
//
// # Steps of several calls
//
// ctx.try_tool is ctx.tool with a failure the workflow handles: it returns
// {"ok": False, "error": …} instead of ending the run, and the failure is
// journaled so a resumed run sees it again; refusals still end the run.
// ctx.agent is a model that calls tools: each turn may answer {"tool":
// NAME, "args": {…}}, a tool from the step's list, and gets the result in
// its transcript; it stops at an answer (or the done sentinel), at
// max_iterations, or after max_failures failed tool calls in a row. With
// read_only it may not reach a binding that declares side effects; with
// worker="name" it runs as the [workers.name] preset of the config. ctx.map
// asks one model turn per item, max_concurrency at a time, and records
// them in item order. ctx.budget sets run-time ceilings (wall clock, cost,
// tool calls, model calls), ErrBudget when passed. See agent.go; task
// plans (crystallize plan run) are lowered onto these.
//
// # Preconditions and fallback
//
// ctx.check(kind, **kwargs) evaluates a precondition of the next step
// (see precond.go) and is recorded as an observation, not a step. A
// failed check, or a ctx.tool or ctx.exec step that ran and failed,
// follows the run's fallback policy, fail, agent or ask (see
// fallback.go); every divergence is recorded in trace.json and
// session.md.
//
// # Verification
//
// With Options.Verify a bundle's run is compared, when it ends, with its
// candidate's expected receipts through the replay oracle, masked by the
// allowlist rules of the candidate's examples; drift is verify.ErrDrift with the
// JSON pointer of the first divergence, recorded in trace.json and
// session.md. See verify.go.
package runner
