package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// The registry's side of session inbox: the items runs posted (see
// runstate.Message), which can be answered, next to the callouts of
// indexed session logs, which are only shown.

// writeItems prints inbox items, one line each: the item id, the session
// id, [!type], the text, and a decision's options.
func writeItems(w io.Writer, items []store.InboxItem) error {
	tw := newTable(w)
	for _, it := range items {
		text := oneLineText(it.Text)
		if len(it.Options) > 0 {
			text += " (" + strings.Join(it.Options, " | ") + ")"
		}
		if it.Answered {
			text += " → " + it.Answer
		}
		fmt.Fprintf(tw, "#%d\t%s\t[!%s]\t%s\n", it.ID, it.SessionID, it.Type, text)
	}
	return tw.Flush()
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// parseItem parses an item id, written "12" or "#12".
func parseItem(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || n <= 0 {
		return 0, usagef("item %q: want an inbox item id such as 12 (session inbox prints them as #12)", s)
	}
	return n, nil
}

const sessionInboxAnswerDoc = `answer answers the inbox item ITEM (its id, as session inbox prints it)
and resumes the run that asked, as crystallize resume would:

  a [!decision_needed] item takes --decide OPTION, one of its options
      (crystallize resume RUN --decide OPTION);
  an [!approval_required] item takes --approve or --reject
      (crystallize resume RUN --approve|--reject BOUNDARY);
  a [!task_complete] or [!info] item asks nothing: --dismiss marks it
      read, and resumes nothing.

A question of an agent session (session id agent-…, asked through the
session_ask tool of crystallize serve mcp) resumes nothing: --decide
OPTION records the answer, or --dismiss declines it, and the agent reads
it with session_check, with --reason and who answered: --by NAME, by
default $USER. It prints "answered #ITEM (decide OPTION) for SESSION"
(--json: {"item", "session_id", "answer", "reason", "answered_by"}).

An answer that does not fit the item (an option it does not offer,
--approve on a decision, an item answered already) is a usage error. The
item is marked answered, with --reason, once the run gets past the step
that asked; the run's output is printed as crystallize resume prints it
(--json: as crystallize resume --json).

Exit status: as crystallize resume: 0 when the run completed (or the
item was dismissed, or an agent's question answered), 1 when it failed,
was rejected or waits again, 2 on a usage error.`

func newSessionInboxAnswerCmd(e *env, db *string) *cobra.Command {
	var a registry.Answer
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "answer ITEM (--decide OPTION | --approve | --reject | --dismiss) [--reason TEXT]",
		Short: "Answer an inbox item, resuming the run that asked",
		Long:  sessionInboxAnswerDoc,
		Example: `  crystallize session inbox answer 3 --decide JWT
  crystallize session inbox answer 4 --reject --reason "not before the freeze"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseItem(args[0])
			if err != nil {
				return err
			}
			if n := countTrue(a.Decide != "", a.Approve, a.Reject, a.Dismiss); n != 1 {
				return usagef("%w: give exactly one of --decide, --approve, --reject, --dismiss", registry.ErrAnswer)
			}
			if a.By == "" {
				a.By = person(e)
			}
			return answerItem(cmd, e, *db, id, a, asJSON)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&a.Decide, "decide", "", "choose OPTION of a decision")
	fs.BoolVar(&a.Approve, "approve", false, "approve an approval")
	fs.BoolVar(&a.Reject, "reject", false, "reject an approval")
	fs.BoolVar(&a.Dismiss, "dismiss", false, "mark a notification read")
	fs.StringVar(&a.Reason, "reason", "", "why; recorded with the answer")
	fs.StringVar(&a.By, "by", "", "who answers, as the answer records it (default $USER)")
	fs.BoolVar(&asJSON, "json", false, "print the resumed run's summary as JSON")
	return cmd
}

// answerItem answers inbox item id with a and resumes the run that asked,
// as "session inbox answer" does; crystallize review answers through it
// too, so an answer from the page has the same effect.
func answerItem(cmd *cobra.Command, e *env, db string, id int64, a registry.Answer, asJSON bool) error {
	ctx := cmd.Context()
	d, err := openIndex(ctx, db)
	if err != nil {
		return err
	}
	it, err := d.Item(ctx, id)
	if err != nil {
		d.Close()
		return err
	}
	if err := registry.Check(it, a); err != nil {
		d.Close()
		return usageError{err}
	}
	if registry.IsAgentSession(it.SessionID) {
		defer d.Close()
		return answerQuestion(cmd, e, d, it, a, asJSON)
	}
	if a.Dismiss {
		defer d.Close()
		if err := registry.Dismiss(ctx, d, it, a.Reason, a.By, registry.Options{}); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "dismissed #%d\n", it.ID)
		return nil
	}
	s, err := d.LiveSession(ctx, it.SessionID)
	d.Close() // the resumed run opens the registry itself
	if err != nil {
		return err
	}
	f := &resumeFlags{stateDir: s.StateDir, asJSON: asJSON, decide: a.Decide, reason: a.Reason}
	switch {
	case a.Approve:
		f.approve = []string{it.Boundary}
	case a.Reject:
		f.reject = []string{it.Boundary}
	}
	return runResume(cmd, e, f, it.SessionID)
}

// answerQuestion records a's answer to it, a question of an agent
// session, which the agent reads; no run resumes.
func answerQuestion(cmd *cobra.Command, e *env, d *store.DB, it store.InboxItem, a registry.Answer, asJSON bool) error {
	ctx := cmd.Context()
	if err := registry.AnswerQuestion(ctx, d, it, a, registry.Options{}); err != nil {
		if errors.Is(err, registry.ErrAnswer) {
			return usageError{err}
		}
		return err
	}
	it, err := d.Item(ctx, it.ID)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, registry.AnsweredItem(it))
	}
	_, err = fmt.Fprintf(e.stdout, "answered #%d (%s) for %s\n", it.ID, it.Answer, it.SessionID)
	return err
}

// person is who answers from this terminal, as an answer records it:
// $USER, else $LOGNAME, else "".
func person(e *env) string {
	if u := e.getenv("USER"); u != "" {
		return u
	}
	return e.getenv("LOGNAME")
}

const sessionInboxPurgeDoc = `purge deletes the answered inbox items of SESSION (a session id, or a
number of crystallize sessions --all) and prints how many it deleted.
Unanswered items stay, and so does the session's log, which keeps every
callout: the inbox is a view, the log the history.

Exit status: 0 on success, 1 when there is no such session or on error,
2 on a usage error.`

func newSessionInboxPurgeCmd(e *env, db *string) *cobra.Command {
	return &cobra.Command{
		Use:   "purge SESSION",
		Short: "Remove a session's answered inbox items",
		Long:  sessionInboxPurgeDoc,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			d, err := openIndex(ctx, *db)
			if err != nil {
				return err
			}
			defer d.Close()
			s, err := registry.Find(ctx, d, args[0], true, registry.Options{})
			if err != nil {
				return err
			}
			id := s.SessionID
			n, err := d.PurgeItems(ctx, id)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "purged %d answered items of %s\n", n, id)
			return nil
		},
	}
}

// countTrue counts the conditions that hold.
func countTrue(conds ...bool) int {
	n := 0
	for _, c := range conds {
		if c {
			n++
		}
	}
	return n
}
