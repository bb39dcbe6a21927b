package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/install"
)

const installDoc = `install puts an approved bundle where an agent picks it up: its Agent
Skill in the agent's skills directory, and "crystallize serve mcp" for the
bundle as an MCP server in the agent's configuration, named
crystallize-SKILL. The skill tells the agent to call the server's tool
instead of doing the steps itself.

  agent        skills (project | user)                MCP servers (project | user)
  claude-code  .claude/skills/NAME | ~/.claude/skills   .mcp.json | ~/.claude.json
  codex        .agents/skills/NAME | ~/.agents/skills   .codex/config.toml | ~/.codex/config.toml
                                                         (or $CODEX_HOME/config.toml without --home)
  gemini       .gemini/skills/NAME | ~/.gemini/skills   .gemini/settings.json | ~/.gemini/settings.json

Only a bundle crystallize validate passes and that is approved for its
workflow's bytes is installed. The configuration is merged: other servers
and settings are kept; a different server of the same name, or another
skill in the skill's directory, is refused. Installing again changes
nothing. --dry-run prints the changes as a diff and writes nothing.

Install keeps a record under .crystallize/installs in the project (or the
home, for --scope user); uninstall reads it and restores each file it
wrote to the bytes it had, or, for a configuration edited since, takes out
only the server.`

type installFlags struct {
	agent, scope, project, home, command string
	dryRun                               bool
}

func newInstallCmd(e *env) *cobra.Command {
	f := &installFlags{}
	cmd := &cobra.Command{
		Use:     "install BUNDLE --agent claude-code|codex|gemini [--scope project|user]",
		Short:   "Install an approved bundle's skill and MCP server for an agent",
		Long:    installDoc,
		Example: "  crystallize install bundles/cut-release --agent claude-code\n  crystallize install bundles/cut-release --agent codex --scope user --dry-run",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(e, f, args[0], false)
		},
	}
	installFlagSet(cmd, f)
	return cmd
}

func newUninstallCmd(e *env) *cobra.Command {
	f := &installFlags{}
	cmd := &cobra.Command{
		Use:   "uninstall BUNDLE --agent claude-code|codex|gemini [--scope project|user]",
		Short: "Take out what install put in for an agent",
		Long:  "uninstall takes out what crystallize install wrote for the bundle and agent in the scope, from install's record: each file goes back to the bytes it had, or, for a configuration edited since, loses only the server install added.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInstall(e, f, args[0], true)
		},
	}
	installFlagSet(cmd, f)
	return cmd
}

func installFlagSet(cmd *cobra.Command, f *installFlags) {
	fs := cmd.Flags()
	fs.StringVar(&f.agent, "agent", "", "the agent: "+strings.Join(install.Agents, ", "))
	fs.StringVar(&f.scope, "scope", install.ScopeProject, "project (this project only) or user (every project)")
	fs.StringVar(&f.project, "project", "", "the project directory (default the current directory)")
	fs.StringVar(&f.home, "home", "", "the user's home directory (default $HOME)")
	fs.StringVar(&f.command, "command", "", "the crystallize executable the agent starts (default this one)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the changes as a diff and write nothing")
}

func runInstall(e *env, f *installFlags, bundleDir string, remove bool) error {
	if f.agent == "" {
		return usagef("--agent is required: one of %s", strings.Join(install.Agents, ", "))
	}
	o := install.Options{Bundle: bundleDir, Agent: f.agent, Scope: f.scope, Project: f.project, Home: f.home, Command: f.command}
	if o.Project == "" {
		o.Project = "."
	}
	if o.Home == "" {
		o.Home = e.getenv("HOME")
		// Codex keeps its configuration in CODEX_HOME when that is set;
		// with --home, everything is under the home given.
		o.CodexHome = e.getenv("CODEX_HOME")
	}
	for _, p := range []*string{&o.Project, &o.Home, &o.CodexHome} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return err
			}
			*p = abs
		}
	}
	if o.Command == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding the crystallize executable (give --command): %w", err)
		}
		o.Command = exe
	}
	var plan *install.Plan
	var err error
	if remove {
		plan, err = install.Uninstall(o)
	} else {
		plan, err = install.Install(o)
	}
	if err != nil {
		return err
	}
	verb, done := "Installed", "install"
	if remove {
		verb, done = "Uninstalled", "uninstall"
	}
	if f.dryRun {
		fmt.Fprint(e.stdout, plan.Diff())
	} else if err := plan.Apply(); err != nil {
		return fmt.Errorf("%s: %w", done, err)
	}
	switch {
	case len(plan.Files) == 0 && !remove:
		fmt.Fprintf(e.stdout, "Already installed for %s (%s scope); nothing changed\n", plan.Agent, plan.Scope)
	case f.dryRun:
		fmt.Fprintf(e.stdout, "Dry run: %d files would change; nothing written\n", len(plan.Files))
	default:
		fmt.Fprintf(e.stdout, "%s for %s (%s scope):\n", verb, plan.Agent, plan.Scope)
		fmt.Fprintf(e.stdout, "  skill: %s\n", plan.SkillDir)
		fmt.Fprintf(e.stdout, "  MCP server: %s in %s", plan.Server, plan.Config)
		if plan.Tool != "" {
			fmt.Fprintf(e.stdout, " (tool %s)", plan.Tool)
		}
		fmt.Fprintln(e.stdout)
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(e.stdout, "Note: %s\n", n)
	}
	return nil
}
