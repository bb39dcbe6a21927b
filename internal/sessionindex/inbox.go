package sessionindex

import (
	"strconv"
	"time"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// InboxEntry is one entry of `crystallize session inbox --json`: an item
// a run posted to the registry's inbox (PostedEntry), which a person can
// answer, or a callout of an indexed session log (CalloutEntry), which is
// only shown.
type InboxEntry struct {
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
	Started   string `json:"started"`
	Phase     string `json:"phase"`
	Type      string `json:"type"`
	Title     string `json:"title"`
	Body      string `json:"body"`

	// Set on the items runs posted: the id to answer, the step that
	// asked, and what it asks.
	Item     int64    `json:"item,omitempty"`
	Step     int      `json:"step,omitempty"`
	Boundary string   `json:"boundary,omitempty"`
	Options  []string `json:"options,omitempty"`
	Created  string   `json:"created,omitempty"`
	Answered bool     `json:"answered,omitempty"`
	Answer   string   `json:"answer,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	// Temporal is set on the boundaries runs on Temporal wait at:
	// session_id is the run id, answered by approve-run.
	Temporal bool `json:"temporal,omitempty"`
}

// PostedEntry is the entry of an item a run posted. Its phase is the
// step that posted it ("step-3"), its title the item's text, and its
// creation time in UTC to the millisecond, as the registry prints times.
func PostedEntry(it store.InboxItem) InboxEntry {
	return InboxEntry{
		Item: it.ID, SessionID: it.SessionID, Phase: "step-" + strconv.Itoa(it.Step), Type: it.Type,
		Title: it.Text, Step: it.Step, Boundary: it.Boundary, Options: it.Options,
		Created:  time.UnixMilli(it.Created).UTC().Format("2006-01-02T15:04:05.000Z"),
		Answered: it.Answered, Answer: it.Answer, Reason: it.Reason,
	}
}

// CalloutEntry is the entry of a callout found in an indexed session log.
func CalloutEntry(it store.Item) InboxEntry {
	return InboxEntry{
		SessionID: it.Session.SessionID, Path: it.Session.Path, Started: it.Session.Started,
		Phase: it.Callout.Phase, Type: it.Callout.Type, Title: it.Callout.Title, Body: it.Callout.Body,
	}
}

// Summary is a Result as `crystallize session index --json` prints it:
// the counts, and each problem as its "FILE:LINE: message" line ([] when
// none).
type Summary struct {
	Added     int      `json:"added"`
	Updated   int      `json:"updated"`
	Unchanged int      `json:"unchanged"`
	Removed   int      `json:"removed"`
	Failed    int      `json:"failed"`
	Problems  []string `json:"problems"`
}

// Summary returns r as a Summary.
func (r Result) Summary() Summary {
	s := Summary{Added: r.Added, Updated: r.Updated, Unchanged: r.Unchanged, Removed: r.Removed, Failed: r.Failed, Problems: make([]string, 0, len(r.Problems))}
	for _, p := range r.Problems {
		s.Problems = append(s.Problems, p.Error())
	}
	return s
}
