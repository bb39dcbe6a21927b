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
package toolexec
