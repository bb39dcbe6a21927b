package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// newLive prepares the registration of a run in the registry of
// stateDir (registry.Live), reporting what cannot be recorded on stderr.
func newLive(e *env, stateDir, agentType, name string) *registry.Live {
	return registry.NewLive(stateDir, agentType, name, func(err error) {
		fmt.Fprintf(e.stderr, "crystallize: registry: %v\n", err)
	})
}

// liveModel is the model a run of cfg is registered with, for the
// status line: the model of [models.default], "" without one.
func liveModel(cfg *runconfig.Config) string {
	if cfg == nil {
		return ""
	}
	return cfg.Models["default"].Model
}

const sessionsDoc = `sessions lists the sessions of the state directory's registry: the
workflow runs (crystallize run), plan runs (plan run) and resumed runs
that started there. A run registers when it starts and renews a
heartbeat every few seconds while it runs; when it ends it records its
status, or pending when it waits for a person (see session inbox).

Without --all only the active sessions are listed: running and pending.
--all lists every session, ended and stale ones too. A stale session
is one registered as running whose process is gone or whose heartbeat
stopped (it was killed, or crashed); sessions prune removes those.

Sessions are numbered from 1, oldest first, within a listing: a session
that starts later gets the next number, so the numbers of the others do
not move while it runs. sessions show takes such a number (of the active
listing, or with --all of the full one) or a session id.

One line per session: number, state, agent type (workflow, plan,
agent), name, session id, workspace, and who it is as the status line
names it (BRANCH/WHO), with the model in parentheses when WHO is the
agent: "feat/auth/claude-code (opus-4)". An agent outside crystallize
registers through the session tools of crystallize serve mcp, with an
id starting "agent-".

--json prints an array of {"number", "session_id", "name",
"agent_type", "state", "status", "workspace", "state_dir", "pid",
"started", "heartbeat", "ended"?, "branch", "agent", "model"}: state is
status, or stale; times are RFC 3339 in UTC; branch, agent and model are
"" when not known.

Exit status: 0 on success, 1 on error, 2 on a usage error.`

func newSessionsCmd(e *env) *cobra.Command {
	var stateDir string
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "sessions [--all] [--json] [--state-dir DIR]",
		Short: "List the running and pending sessions",
		Long:  sessionsDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := registry.ListDir(cmd.Context(), stateDir, all)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, registry.Summaries(list))
			}
			return writeLive(e.stdout, list)
		},
	}
	registryStateDirFlag(cmd.PersistentFlags(), &stateDir)
	cmd.Flags().BoolVar(&all, "all", false, "list ended and stale sessions too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON")
	cmd.AddCommand(newSessionsShowCmd(e, &stateDir), newSessionsPruneCmd(e, &stateDir))
	return cmd
}

// writeLive prints sessions as an aligned table.
func writeLive(w io.Writer, list []registry.Entry) error {
	tw := newTable(w)
	for _, s := range list {
		fmt.Fprintf(tw, "[%d]\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Number, s.State, s.AgentType, s.Name, s.SessionID, s.Workspace, s.Who())
	}
	return tw.Flush()
}

const sessionsShowDoc = `show prints one session of the registry: a header line (number, state,
name, session id, workspace), the last --lines lines (default 20) of its
session log (<state-dir>/runs/<id>/session.md, written when the run ends
or suspends), and its unanswered inbox items, newest first, as session
inbox prints them. An agent session (registered through serve mcp) has
no log here: the agent keeps its own.

N is the session's number in the listing of crystallize sessions (with
--all, of crystallize sessions --all); ID is a session id, or a prefix
of exactly one. --next and --prev show the session after or before the
one shown last (remembered in <state-dir>/` + registry.LastShownFile + `), wrapping
around the listing; with none shown yet, or the last one gone from the
listing, --next starts at the first and --prev at the last.

Exit status: 0 on success, 1 when there is no such session or on error,
2 on a usage error.`

func newSessionsShowCmd(e *env, stateDir *string) *cobra.Command {
	var all, next, prev bool
	var lines int
	cmd := &cobra.Command{
		Use:   "show (N|ID | --next | --prev) [--all] [--lines N]",
		Short: "Show a session's log tail and pending inbox items",
		Long:  sessionsShowDoc,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lines < 0 {
				return usagef("--lines %d: want a count of lines, 0 or more", lines)
			}
			delta := 0
			switch {
			case next && prev:
				return usagef("--next and --prev exclude each other")
			case next:
				delta = 1
			case prev:
				delta = -1
			}
			if (delta != 0) == (len(args) == 1) {
				return usagef("give a session (N or ID), or --next or --prev")
			}
			ref := ""
			if len(args) == 1 {
				ref = args[0]
			}
			ctx := cmd.Context()
			db, ok, err := registry.OpenExisting(ctx, *stateDir)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("session %s: %w (no registry in %s)", ref, store.ErrNoSession, *stateDir)
			}
			defer db.Close()
			s, err := registry.Show(ctx, db, *stateDir, ref, delta, all)
			if err != nil {
				return err
			}
			items, err := db.Items(ctx, s.SessionID, false)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "[%d] %s %s %s  %s\n", s.Number, s.State, s.Name, s.SessionID, s.Workspace)
			log, tail, err := registry.LogTail(s, lines)
			switch {
			case registry.IsAgentSession(s.SessionID):
				fmt.Fprintf(e.stdout, "\nan agent session of %s: the agent keeps its own log; crystallize holds its questions\n", s.Who())
			case errors.Is(err, fs.ErrNotExist):
				fmt.Fprintf(e.stdout, "\nno session log yet: %s is written when the run ends or suspends\n", log)
			case err != nil:
				return err
			default:
				fmt.Fprintf(e.stdout, "\n%s\n", log)
				for _, l := range tail {
					fmt.Fprintf(e.stdout, "  %s\n", l)
				}
			}
			if len(items) > 0 {
				fmt.Fprintf(e.stdout, "\ninbox:\n")
				return writeItems(e.stdout, items)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "N numbers the listing of sessions --all")
	cmd.Flags().BoolVar(&next, "next", false, "show the session after the one shown last")
	cmd.Flags().BoolVar(&prev, "prev", false, "show the session before the one shown last")
	cmd.Flags().IntVar(&lines, "lines", 20, "how many lines of the log to print")
	return cmd
}

const sessionsPruneDoc = `prune removes the stale sessions from the registry (those registered as
running whose process is gone or whose heartbeat stopped) with their
inbox items, and prints one line per session removed, as sessions does.
--finished removes the ended sessions too (completed, failed, rejected,
cancelled). Pending sessions are never removed: they wait for a person.
Session logs and run records are not touched.

--json prints the removed sessions as sessions --json does.

Exit status: 0 on success, 1 on error, 2 on a usage error.`

func newSessionsPruneCmd(e *env, stateDir *string) *cobra.Command {
	var finished, asJSON bool
	cmd := &cobra.Command{
		Use:   "prune [--finished] [--json]",
		Short: "Remove stale sessions from the registry",
		Long:  sessionsPruneDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			db, ok, err := registry.OpenExisting(ctx, *stateDir)
			if err != nil {
				return err
			}
			gone := []registry.Entry{}
			if ok {
				defer db.Close()
				if gone, err = registry.Prune(ctx, db, finished, registry.Options{}); err != nil {
					return err
				}
			}
			if asJSON {
				return writeJSON(e.stdout, registry.Summaries(gone))
			}
			return writeLive(e.stdout, gone)
		},
	}
	cmd.Flags().BoolVar(&finished, "finished", false, "remove ended sessions too")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the removed sessions as JSON")
	return cmd
}
