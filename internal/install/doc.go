// Package install puts an approved bundle where an agent picks it up: its
// Agent Skill in the agent's skills directory (skill.ForAgent, which tells
// the agent to call the tool) and "crystallize serve mcp" for the bundle
// as an MCP server in the agent's configuration, for one project or for
// the user. Uninstall takes out exactly what install put in.
//
// Where each agent looks (from each agent's documentation):
//
//	agent        skills (project | user)                MCP servers (project | user)
//	claude-code  .claude/skills/NAME | ~/.claude/skills   .mcp.json | ~/.claude.json, "mcpServers"
//	codex        .agents/skills/NAME | ~/.agents/skills   .codex/config.toml | ~/.codex/config.toml, [mcp_servers.NAME]
//	gemini       .gemini/skills/NAME | ~/.gemini/skills   .gemini/settings.json | ~/.gemini/settings.json, "mcpServers"
//
// Codex reads a project's .codex/config.toml only when the project is
// trusted; install says so. Codex's user configuration is in CODEX_HOME
// when that is set (Options.CodexHome).
//
// The invariants:
//
//   - Only a bundle bundle.Ready accepts is installed: approved for the
//     workflow bytes on disk and valid. The skill written passes
//     skill.Check.
//   - A configuration is merged, never replaced: servers of other names
//     and every other setting are kept, in their order. A different
//     server of the same name, or a different skill in the skill's
//     directory, is refused, not overwritten.
//   - Installing what is installed changes nothing.
//   - Install keeps a record (.crystallize/installs/AGENT-SKILL.json under
//     the project or home) of every file it wrote, with the bytes it
//     found there. Uninstall restores those bytes exactly when the file
//     is still as install left it; a configuration edited since loses
//     only the server install added, and a skill edited since is left
//     where it is, with a note.
//   - A record names only the files an install of its skill writes for
//     its agent and scope, and directories above them; any other is
//     refused. A record in a project is a file whoever wrote the project
//     could forge, to make uninstall write or remove files elsewhere.
//   - A path through a symbolic link is followed, so a linked
//     configuration is edited where it lives and stays a link; in the
//     project scope, a link that leads out of the project is refused.
package install
