// Package toolexec executes the tool calls of a run and holds the
// confinement boundary: a tool name resolved to its binding (an
// in-process Tool, a command template, an HTTP request, an MCP server's
// tool, a file built-in), argv templates expanded without a shell and
// with no parameter where the program reads an option, secrets resolved
// into templates and added to the run's Scrubber, and the file built-ins
// (fs.read, fs.write, fs.edit) confined to the workspace roots, opened
// through pinned roots, and kept out of the protected set: the
// configuration, the programs the bindings run, the secrets file, state
// directories and .git.
//
// An Executor holds what one run's calls share (the MCP sessions, the
// pinned roots, the protected set); the runner makes one per run and
// decides, before each call, whether the workflow may make it.
//
// # Tools
//
// A tool name resolves (Resolve), in this order, to an in-process tool
// given in the runner's Options.Tools, an exact [tools."name"] entry of
// the config, the longest matching glob entry ([tools."git.*"];
// path.Match syntax; ties broken by the pattern's text), or one of the built-ins fs.read, fs.write and
// fs.edit. fs.read(path) returns {"path", "content", "bytes"};
// fs.write(path, content) creates or replaces the file; fs.edit(path,
// old, new, replace_all?) or fs.edit(path, edits = [{old, new,
// replace_all?}, …]) makes exact replacements in an existing file, in
// order, and writes it only when every one applies: an old text that is
// not there, or is there more than once without replace_all, fails the
// call (ErrEdit) and leaves the file as it was. fs.write and fs.edit need
// the capability fs.write and are recorded as file_mutation actions, as
// agents' edits are normalized, so a workflow mined from a coding
// session calls them with no binding. A
// command binding runs its argv template directly (never through a shell):
// every "{name}" inside an element is replaced by the call's argument of
// that name, so a value stays one argument whatever it contains, and an
// element that is exactly "{name...}" becomes one argument per item of the
// list argument name (a command's operands, as mining writes git add
// {paths...}); an element that starts with a placeholder ("{ref}",
// "{owner}/{repo}") and would start with "-", or a list's item starting
// with "-", is refused (ErrOptionArgument, see OptionPosition) unless the
// element follows a literal "--" or the binding lists its leading
// parameter in allow_options. ctx.exec expands its argv template
// by the same rules (Executor.ExpandArgv). The
// arguments are also given to the command as a JSON object on stdin, and
// its stdout is parsed as JSON when it is JSON, else returned as a string.
// An http binding makes one request per call (see HTTPBinding): URL
// parameters escaped, the other arguments as a JSON body or query, a JSON
// response parsed, a status outside 2xx an error naming it and the URL.
// The built-ins are confined to the workspace roots with os.Root, which
// refuses paths that leave the root through ".." or symlinks; on Linux,
// fs.read opens the file the protected-set check looked at with openat2
// beneath the root's descriptor, following no symlink, and reads it only
// when it is that same file (readBeneath), else through os.Root. A root
// is pinned when a built-in first names it: the run holds its directory
// open and checks and opens every later path in it, so re-pointing the
// root's path during the run changes nothing. Inside the
// roots they never read or write the protected set (ProtectedError): the
// loaded configuration and any crystallize.toml, every program a command
// binding or MCP server runs and every file its arguments name (an
// interpreter's script, ["sh", "tools/x.sh"]), with the directory of
// the program or script unless that is a root,
// the secrets file, the state directory, any other directory holding a
// state key, any state.key or approvals.jsonl, and any .crystallize or
// .git directory. Without that, a granted fs.write could rewrite a script a
// binding runs and then call it, or widen the next run's configuration.
//
// # MCP tools
//
// A binding with mcp = "docs" calls a tool of the Model Context Protocol
// server [mcp.docs], through the official Go SDK: a server started over
// stdio from its command (with the entry's cwd and env), or reached over
// streamable HTTP at its url. The tool called is the binding's tool when
// set; otherwise the called name without the literal prefix of a glob key
// ("docs.search" through [tools."docs.*"] calls "search"), or the called
// name itself for an exact key. The call's keyword arguments are the
// tool's JSON arguments; its structured content, else its text (parsed as
// JSON when it is JSON), is the step's result; a result flagged as an
// error fails the step (ErrMCP, naming the server and the tool). A run
// opens one session per server, at its first call, and closes it when the
// workflow returns. The server's annotations of the tool (readOnlyHint,
// destructiveHint, idempotentHint, openWorldHint, with the protocol's
// defaults for hints it leaves unset) are recorded in the action's
// metadata under "mcp" and in session.md; they are the server's claims,
// so capabilities still come from the binding. Before a run the binding
// is only checked to name a configured server; the runner's CheckMCP
// also starts the servers and counts a name as bound only when its
// server declares the tool.
package toolexec
