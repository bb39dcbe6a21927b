package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// MaxShown is how many sessions a status line names; the rest are
// counted ("+3 more"), so the line fits a prompt or a tmux bar however
// many runs are active.
const MaxShown = 5

// Line is the status line's content: the active sessions and the number
// of unanswered inbox items.
type Line struct {
	Sessions []Entry `json:"sessions"`
	Inbox    int     `json:"inbox"`
}

// LineSummary is the status line as `crystallize status --json` prints
// it: each session as sessions --json prints it, the inbox count, and the
// line itself.
type LineSummary struct {
	Sessions []Summary `json:"sessions"`
	Inbox    int       `json:"inbox"`
	// Temporal counts the runs on a Temporal server that wait at a
	// boundary, when the caller asked one; left out otherwise.
	Temporal *int   `json:"temporal_pending,omitempty"`
	Line     string `json:"line"`
}

// Summary returns l as a LineSummary.
func (l Line) Summary() LineSummary {
	return LineSummary{Sessions: Summaries(l.Sessions), Inbox: l.Inbox, Line: l.String()}
}

// Status reads the status line: two indexed queries (the active rows and
// the count of unanswered items) and a liveness check per running row,
// cheap enough for every shell prompt.
func Status(ctx context.Context, db *store.DB, opts Options) (Line, error) {
	list, err := List(ctx, db, false, opts)
	if err != nil {
		return Line{}, err
	}
	n, err := db.CountItems(ctx)
	if err != nil {
		return Line{}, err
	}
	return Line{Sessions: list, Inbox: n}, nil
}

// String renders the line in the format of the session daemon's status
// bar, e.g.
//
//	[1] main/claude  [2] feat/auth/ollama  |  2  /sessions
//
// each active session as its number and Label, then the number of
// unanswered inbox items and the hint where the sessions are listed; or
// "no active sessions  |  0  /sessions".
func (l Line) String() string {
	var b strings.Builder
	for i, e := range l.Sessions {
		if i == MaxShown {
			fmt.Fprintf(&b, "+%d more  ", len(l.Sessions)-MaxShown)
			break
		}
		fmt.Fprintf(&b, "[%d] %s  ", e.Number, e.Label())
	}
	if len(l.Sessions) == 0 {
		b.WriteString("no active sessions  ")
	}
	fmt.Fprintf(&b, "|  %d  /sessions", l.Inbox)
	return b.String()
}

// Label names a session on the status line as BRANCH/WHO: the git branch
// of its workspace, then the agent behind it, else its model, else the
// workflow or plan it runs; without a branch (a workspace outside git, a
// detached HEAD) WHO alone.
func (e Entry) Label() string {
	who := e.Agent
	if who == "" {
		who = e.Model
	}
	if who == "" {
		who = e.Name
	}
	if e.Branch == "" {
		return who
	}
	return e.Branch + "/" + who
}

// Who names a session in a listing: its Label, and its model in
// parentheses when the label names its agent, e.g.
// "feat/auth/claude-code (opus-4)".
func (e Entry) Who() string {
	if e.Agent != "" && e.Model != "" {
		return e.Label() + " (" + e.Model + ")"
	}
	return e.Label()
}
