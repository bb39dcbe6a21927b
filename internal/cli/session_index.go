package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/sessionindex"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// dbHelp is the --db flag's help, shared by the index commands.
const dbHelp = "the index database (SQLite)"

// openIndex opens the database at path for a command.
func openIndex(ctx context.Context, path string) (*store.DB, error) {
	if path == "" {
		return nil, usagef("--db: empty path")
	}
	return store.Open(ctx, path)
}

const sessionIndexDoc = `index keeps a derived index of the session logs (*.md) under DIR, in the
embedded SQLite database --db (default ` + store.DefaultPath + `), for
session list, search and inbox. Paths are recorded relative to DIR.

crystallize run keeps the index of its own logs: each run's session.md is
indexed into <state-dir>/state.db (the default --db) when the run writes
it, relative to <state-dir>/runs, as "session index .crystallize/runs"
would index it.

Indexing is incremental: a file whose sha256 is unchanged is skipped, a new
or changed file is parsed and replaces its entry, and an entry whose file
is gone is removed. A file with problems (see session lint) is left out of
the index, and its old entry removed; its problems are printed on stderr as
FILE:LINE: message.

It prints the counts: "added A, updated U, unchanged N, removed R, failed F".
--toon prints the whole index as TOON instead: one field, sessions, a
tabular array of {path, session_id, status, started, ended, model, tokens,
title}, newest session first (by started, then path). --json prints the
counts as {"added", "updated", "unchanged", "removed", "failed",
"problems"} (problems: the FILE:LINE: message lines, [] when none).

Exit status: 0 on success, 1 when a file has problems (the rest is still
indexed) or on error, 2 on a usage error.`

func newSessionIndexCmd(e *env) *cobra.Command {
	var db string
	var asTOON, asJSON bool
	cmd := &cobra.Command{
		Use:   "index DIR [--db FILE] [--toon | --json]",
		Short: "Index the session logs under a directory",
		Long:  sessionIndexDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asTOON && asJSON {
				return usagef("--toon and --json are two formats for the output; pass one")
			}
			ctx := cmd.Context()
			d, err := openIndex(ctx, db)
			if err != nil {
				return err
			}
			defer d.Close()
			r, err := sessionindex.Update(ctx, d, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(e.stdout, r.Summary()); err != nil {
					return err
				}
			} else if asTOON {
				list, err := d.Sessions(ctx)
				if err != nil {
					return err
				}
				b, err := sessionindex.TOON(list)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", b)
			} else {
				fmt.Fprintf(e.stdout, "added %d, updated %d, unchanged %d, removed %d, failed %d\n",
					r.Added, r.Updated, r.Unchanged, r.Removed, r.Failed)
			}
			if r.Failed > 0 {
				for _, p := range r.Problems {
					fmt.Fprintln(e.stderr, p)
				}
				noun := "files"
				if r.Failed == 1 {
					noun = "file"
				}
				return failuref("session index: %d %s with problems, not indexed", r.Failed, noun)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", store.DefaultPath, dbHelp)
	cmd.Flags().BoolVar(&asTOON, "toon", false, "print the index as TOON instead of the counts")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts and problems as JSON")
	return cmd
}

const sessionListDoc = `list prints the sessions in the index (see session index), newest first
(by started, then path): one line each with the session id, status,
start time, path and title.

--json prints them as a JSON array of {"path", "sha256", "mtime",
"session_id", "status", "started", "ended", "model", "tokens", "title"};
--toon prints the TOON of session index --toon.

Exit status: 0 on success, 1 on error, 2 on a usage error.`

func newSessionListCmd(e *env) *cobra.Command {
	var db string
	var asJSON, asTOON bool
	cmd := &cobra.Command{
		Use:   "list [--db FILE] [--json|--toon]",
		Short: "List the indexed sessions",
		Long:  sessionListDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asTOON {
				return usagef("--json and --toon exclude each other")
			}
			ctx := cmd.Context()
			d, err := openIndex(ctx, db)
			if err != nil {
				return err
			}
			defer d.Close()
			list, err := d.Sessions(ctx)
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				return writeJSON(e.stdout, list)
			case asTOON:
				b, err := sessionindex.TOON(list)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(e.stdout, "%s\n", b)
				return err
			}
			return writeSessions(e.stdout, list)
		},
	}
	cmd.Flags().StringVar(&db, "db", store.DefaultPath, dbHelp)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON")
	cmd.Flags().BoolVar(&asTOON, "toon", false, "print the sessions as TOON")
	return cmd
}

// writeSessions prints sessions as an aligned table, "-" for an empty
// start time.
func writeSessions(w io.Writer, list []store.Session) error {
	tw := newTable(w)
	for _, s := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.SessionID, s.Status, orDash(s.Started), s.Path, s.Title)
	}
	return tw.Flush()
}

const sessionSearchDoc = `search prints the indexed sessions whose session id or title, or the title
or body of one of whose callouts, contains QUERY, ignoring ASCII case;
newest first, as session list prints them.

--json prints them as session list --json does.

Exit status: 0 on success, even when nothing matches; 1 on error, 2 on a
usage error.`

func newSessionSearchCmd(e *env) *cobra.Command {
	var db string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search QUERY [--db FILE] [--json]",
		Short: "Find indexed sessions by text",
		Long:  sessionSearchDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			d, err := openIndex(ctx, db)
			if err != nil {
				return err
			}
			defer d.Close()
			list, err := d.Search(ctx, args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(e.stdout, list)
			}
			return writeSessions(e.stdout, list)
		},
	}
	cmd.Flags().StringVar(&db, "db", store.DefaultPath, dbHelp)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON")
	return cmd
}

var sessionInboxDoc = `inbox prints what sessions ask or tell a person, in two parts.

First the unanswered items the runs of the registry posted (crystallize
sessions; the registry lives in the same database): the decisions,
approvals and notifications of ctx.request_decision, ctx.request_approval,
ctx.approve and ctx.notify, newest first, one line each: #item id,
session id, [!type], the text and a decision's options. --all lists the
answered items too, with their answer. "session inbox answer ITEM"
answers one and resumes its run; "session inbox purge SESSION" deletes a
session's answered items.

Then the actionable callouts of every indexed session log (session
index; crystallize run indexes each run's session.md as it writes it):
` + strings.Join(sessionindex.Actionable, ", ") + `. A question
(decision_needed, approval_required) that was answered is left out: a
[!decision] or [!user] callout follows it in its phase, or its session
has finished (completed, failed, cancelled, rejected). The questions and
completions of a session the registry knows (a run) are its items, above,
and are not listed again from its log; its errors are. The newest
session comes first (by started, then path), and each session's callouts
in document order, one line each: session id, phase id ("-" for the
preamble), [!type] and the callout's title, or its first line of text
when it has no title (the format's "> [!error]" then "> text").

--json prints one JSON array of both: the items first, as {"item",
"session_id", "phase" ("step-N"), "type", "title" (the text), "step",
"boundary", "options", "created", "answered", "answer", "reason"} (empty
fields left out), then the callouts as {"session_id", "path", "started",
"phase", "type", "title", "body"}.

With --temporal ADDR it also lists, first, the boundaries runs on that
Temporal server wait at (crystallize runs --temporal): run id, step,
[!approval_required] or [!decision_needed], the prompt and options, and
the approve-run command that decides it; in --json as items with
"temporal": true and the run id as "session_id".

Exit status: 0 on success, 1 on error, 2 on a usage error.`

func newSessionInboxCmd(e *env) *cobra.Command {
	var db string
	var asJSON, all bool
	var tf temporalFlags
	cmd := &cobra.Command{
		Use:   "inbox [--db FILE] [--json] [--all] [--temporal ADDR]",
		Short: "Gather what sessions ask or tell a person",
		Long:  sessionInboxDoc,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			d, err := openIndex(ctx, db)
			if err != nil {
				return err
			}
			defer d.Close()
			posted, err := d.Items(ctx, "", all)
			if err != nil {
				return err
			}
			items, err := sessionindex.Inbox(ctx, d)
			if err != nil {
				return err
			}
			waiting, err := temporalPending(cmd, e, &tf)
			if err != nil {
				return err
			}
			if asJSON {
				out := make([]sessionindex.InboxEntry, 0, len(waiting)+len(posted)+len(items))
				for _, r := range waiting {
					out = append(out, temporalItem(r))
				}
				for _, it := range posted {
					out = append(out, sessionindex.PostedEntry(it))
				}
				for _, it := range items {
					out = append(out, sessionindex.CalloutEntry(it))
				}
				return writeJSON(e.stdout, out)
			}
			if err := writeTemporalItems(e.stdout, waiting, tf.address); err != nil {
				return err
			}
			if err := writeItems(e.stdout, posted); err != nil {
				return err
			}
			tw := newTable(e.stdout)
			for _, it := range items {
				fmt.Fprintf(tw, "%s\t%s\t[!%s]\t%s\n", it.Session.SessionID, orDash(it.Callout.Phase), it.Callout.Type, oneLineText(sessionindex.Headline(it.Callout)))
			}
			return tw.Flush()
		},
	}
	cmd.PersistentFlags().StringVar(&db, "db", store.DefaultPath, dbHelp)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the callouts as JSON")
	cmd.Flags().BoolVar(&all, "all", false, "list answered items too")
	tf.register(cmd.Flags(), false)
	cmd.AddCommand(newSessionInboxAnswerCmd(e, &db), newSessionInboxPurgeCmd(e, &db))
	return cmd
}
