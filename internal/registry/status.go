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

// String renders the line, e.g.
//
//	[1] release_note running  [2] triage pending  |  2 inbox
//
// or "no active sessions  |  0 inbox".
func (l Line) String() string {
	var b strings.Builder
	for i, e := range l.Sessions {
		if i == MaxShown {
			fmt.Fprintf(&b, "+%d more  ", len(l.Sessions)-MaxShown)
			break
		}
		fmt.Fprintf(&b, "[%d] %s %s  ", e.Number, e.Name, e.State)
	}
	if len(l.Sessions) == 0 {
		b.WriteString("no active sessions  ")
	}
	fmt.Fprintf(&b, "|  %d inbox", l.Inbox)
	return b.String()
}
