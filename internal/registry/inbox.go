package registry

import (
	"context"
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// The inbox is the view of what sessions asked or told a person that is
// still unanswered. Every item is also a callout in its session's log,
// which keeps the full history: answering an item marks it, purging a
// session's answered items deletes them from the inbox, and neither
// touches the log.

// Item types, the callout types of the agent API (runstate.Message).
const (
	ItemTaskComplete     = "task_complete"
	ItemInfo             = "info"
	ItemDecisionNeeded   = "decision_needed"
	ItemApprovalRequired = "approval_required"
)

// Post adds an item to the inbox and returns its id. A session asks one
// thing per step: an unanswered item of the same session, step and type
// is the one being asked again (a resume that did not answer it), and
// Post returns its id instead of adding another.
func Post(ctx context.Context, db *store.DB, it store.InboxItem, opts Options) (int64, error) {
	opts = opts.withDefaults()
	switch it.Type {
	case ItemTaskComplete, ItemInfo, ItemDecisionNeeded, ItemApprovalRequired:
	default:
		return 0, fmt.Errorf("inbox item of %s: unknown type %q", it.SessionID, it.Type)
	}
	if it.Type == ItemDecisionNeeded || it.Type == ItemApprovalRequired {
		open, err := db.Items(ctx, it.SessionID, false)
		if err != nil {
			return 0, err
		}
		for _, o := range open {
			if o.Step == it.Step && o.Type == it.Type {
				return o.ID, nil
			}
		}
	}
	it.Created = opts.Now().UnixMilli()
	return db.AddItem(ctx, it)
}

// Answer is how a person answers an item: one of Decide (a decision's
// option), Approve, Reject or Dismiss (a notification read).
type Answer struct {
	Decide          string
	Approve, Reject bool
	Dismiss         bool
	Reason          string
	// By names who answers, as the item records it; "" when not known.
	By string
}

// String is the answer as recorded in the inbox: "decide OPTION",
// "approve", "reject", "dismiss", or "resume" for a run resumed without
// any of them that got past the step anyway (a person answered the
// terminal's prompt).
func (a Answer) String() string {
	switch {
	case a.Decide != "":
		return "decide " + a.Decide
	case a.Approve:
		return "approve"
	case a.Reject:
		return "reject"
	case a.Dismiss:
		return "dismiss"
	}
	return "resume"
}

// Answered is an answered question as the person who answered it is
// told (session inbox answer --json): the item, its session, the
// recorded answer (Answer.String), the reason and who answered.
type Answered struct {
	Item       int64  `json:"item"`
	SessionID  string `json:"session_id"`
	Answer     string `json:"answer"`
	Reason     string `json:"reason"`
	AnsweredBy string `json:"answered_by"`
}

// AnsweredItem is it, read back after its answer was recorded, as
// Answered.
func AnsweredItem(it store.InboxItem) Answered {
	return Answered{Item: it.ID, SessionID: it.SessionID, Answer: it.Answer, Reason: it.Reason, AnsweredBy: it.AnsweredBy}
}

// ErrAnswer is an answer that does not fit the item it answers; the cli
// reports it as a usage error.
var ErrAnswer = fmt.Errorf("answer does not fit the item")

// AnswerError is an answer of the wrong kind for its item. Need is the
// item's type, which says what it asks for: ItemDecisionNeeded, a
// decision among Options; ItemApprovalRequired, approve or reject; any
// other, a notification, dismiss. A command line words that as its own
// flags. It matches ErrAnswer.
type AnswerError struct {
	Item    int64
	Need    string
	Options []string
}

func (e *AnswerError) Error() string {
	switch e.Need {
	case ItemDecisionNeeded:
		return fmt.Sprintf("%v: item %d asks for a decision", ErrAnswer, e.Item)
	case ItemApprovalRequired:
		return fmt.Sprintf("%v: item %d asks for an approval", ErrAnswer, e.Item)
	}
	return fmt.Sprintf("%v: item %d is a notification; it asks nothing", ErrAnswer, e.Item)
}

func (e *AnswerError) Unwrap() error { return ErrAnswer }

// Check reports whether a answers it: exactly one kind of answer, the
// kind the item asks for (an option of a decision, approve or reject for
// an approval, dismiss for a notification; an agent session's question
// may be dismissed too, since no run waits on it), and the item not
// answered already.
func Check(it store.InboxItem, a Answer) error {
	n := 0
	for _, set := range []bool{a.Decide != "", a.Approve, a.Reject, a.Dismiss} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%w: give exactly one answer: a decision, approve, reject or dismiss", ErrAnswer)
	}
	if it.Answered {
		return fmt.Errorf("%w: item %d was answered already (%s)", ErrAnswer, it.ID, it.Answer)
	}
	switch it.Type {
	case ItemDecisionNeeded:
		if a.Dismiss && IsAgentSession(it.SessionID) {
			return nil // a person may decline an agent's question
		}
		if a.Decide == "" {
			return &AnswerError{Item: it.ID, Need: ItemDecisionNeeded, Options: it.Options}
		}
		for _, o := range it.Options {
			if o == a.Decide {
				return nil
			}
		}
		return fmt.Errorf("%w: %q is not an option of item %d (options: %s)", ErrAnswer, a.Decide, it.ID, strings.Join(it.Options, ", "))
	case ItemApprovalRequired:
		if !a.Approve && !a.Reject {
			return &AnswerError{Item: it.ID, Need: ItemApprovalRequired}
		}
	default:
		if !a.Dismiss {
			return &AnswerError{Item: it.ID, Need: it.Type}
		}
	}
	return nil
}

// MarkAnswered records a as the answer of the unanswered questions
// (decisions and approvals) of session id at step. Notifications of the
// same step are left alone: answering a question does not read them.
func MarkAnswered(ctx context.Context, db *store.DB, id string, step int, a Answer, opts Options) error {
	opts = opts.withDefaults()
	_, err := db.AnswerItems(ctx, id, step, []string{ItemDecisionNeeded, ItemApprovalRequired}, a.String(), a.Reason, oneWord(a.By), opts.Now().UnixMilli())
	return err
}

// Dismiss marks the notification it read (or the question of an agent
// session a person declines to answer), by who.
func Dismiss(ctx context.Context, db *store.DB, it store.InboxItem, reason, by string, opts Options) error {
	opts = opts.withDefaults()
	_, err := db.AnswerItem(ctx, it.ID, Answer{Dismiss: true}.String(), reason, oneWord(by), opts.Now().UnixMilli())
	return err
}
