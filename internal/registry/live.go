package registry

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/sessionindex"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// Live is a run's entry in the registry of its state directory, kept for
// as long as the caller runs it: its Start, Inbox and End are the
// runner's hooks (its Options.OnStart and Inbox, and the outcome of the result
// Run or Resume returns). It registers when the runner starts the run, not
// before: a run refused before its first step records nothing, not even
// a registry row or a state directory.
//
// Registration is best effort: a registry that cannot be written (a
// read-only state directory, a database locked past the busy timeout) is
// reported to OnError and the run goes on, since refusing to do the work
// because it cannot be shown would be worse.
type Live struct {
	stateDir, typ, name string
	agent, model        string
	onError             func(error)
	db                  *store.DB
	h                   *Handle
	id                  string
}

// NewLive prepares the registration of a run of agentType (TypeWorkflow,
// TypePlan, TypeAgent) named name in the registry of stateDir. onError
// receives what could not be recorded; it may be nil.
func NewLive(stateDir, agentType, name string, onError func(error)) *Live {
	if onError == nil {
		onError = func(error) {}
	}
	return &Live{stateDir: stateDir, typ: agentType, name: name, onError: onError}
}

// As records the agent behind the run and its model ("" when not known),
// which the status line shows; call it before Start. It returns l. Both
// may come from outside (an MCP client names itself), and the status line
// goes to a terminal or a tmux bar: each is kept as one word of printable
// characters, at most maxWho of them.
func (l *Live) As(agent, model string) *Live {
	l.agent, l.model = oneWord(agent), oneWord(model)
	return l
}

// maxWho bounds the agent and model names a session records.
const maxWho = 40

// oneWord is s with what is not printable dropped, spaces joined by
// "-", and cut to maxWho runes.
func oneWord(s string) string {
	clean := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsPrint(r) {
			return r
		}
		return -1
	}, s)
	w := []rune(strings.Join(strings.Fields(clean), "-"))
	if len(w) > maxWho {
		w = w[:maxWho]
	}
	return string(w)
}

// Start registers run id; it is the runner's Options.OnStart.
func (l *Live) Start(id string) {
	l.id = id
	ctx := context.Background()
	db, err := store.Open(ctx, Path(l.stateDir))
	if err != nil {
		l.onError(err)
		return
	}
	h, err := Register(ctx, db, Start{ID: id, StateDir: l.stateDir, AgentType: l.typ, Name: l.name, Agent: l.agent, Model: l.model}, Options{})
	if err != nil {
		db.Close()
		l.onError(err)
		return
	}
	l.db, l.h = db, h
}

// Inbox stores a message of the agent API in the inbox; it is
// the runner's Options.Inbox.
func (l *Live) Inbox(m runstate.Message) {
	if l.db == nil {
		return
	}
	_, err := Post(context.Background(), l.db, store.InboxItem{
		SessionID: l.id, Type: m.Type, Step: m.Step, Boundary: m.Boundary, Text: m.Text, Options: m.Options,
	}, Options{})
	if err != nil {
		l.onError(err)
	}
}

// RunStatus is the registry status of a run that ended with status s
// (runstate.Status…): a run suspended at an approval is pending, and any
// status the registry does not know is a failure.
func RunStatus(s string) string {
	switch s {
	case runstate.StatusCompleted:
		return StatusCompleted
	case runstate.StatusCancelled:
		return StatusCancelled
	case runstate.StatusRejected:
		return StatusRejected
	case runstate.StatusPendingApproval:
		return StatusPending
	}
	return StatusFailed
}

// End records how the run ended; res nil is a run that failed before it
// had a result. A run suspended at a plain ctx.approve has not told the
// inbox (only the agent API does); its pending approval is posted here,
// so that every run waiting for a person is in the inbox.
func (l *Live) End(res *runstate.Outcome) {
	if l.db == nil {
		return // never started, or not registered
	}
	defer l.db.Close()
	if res == nil {
		res = &runstate.Outcome{Status: runstate.StatusFailed}
	}
	if p := res.Pending; p != nil && p.Kind == "" {
		text := p.Prompt
		if text == "" {
			text = "Approve " + p.Boundary
		}
		l.Inbox(runstate.Message{Type: runstate.MessageApprovalRequired, Step: p.Step, Boundary: p.Boundary, Text: text})
	}
	if err := l.h.End(context.Background(), RunStatus(string(res.Status))); err != nil {
		l.onError(err)
	}
	l.syncLog()
}

// syncLog indexes the run's session.md, which the runner has written by
// the time the run returns, in the session index of the same database:
// the index is synced when a log is written, so session list, search
// and inbox show a run without a session index of the runs first. Paths
// are relative to <state-dir>/runs, as "session index <state-dir>/runs"
// records them. A run that wrote no log (refused before its first step)
// has nothing to index.
func (l *Live) syncLog() {
	runs := filepath.Join(l.stateDir, "runs")
	file := filepath.Join(runs, l.id, runstate.SessionFile)
	if _, err := os.Stat(file); err != nil {
		return
	}
	if err := sessionindex.Sync(context.Background(), l.db, runs, file); err != nil {
		l.onError(err)
	}
}

// Answered marks the inbox items of the step a resumed run was waiting
// at (waited, its journal's Pending) answered by a, once the run got past
// that step; res nil is a resume that failed before it had a result.
func (l *Live) Answered(waited *runstate.Pending, res *runstate.Outcome, a Answer) {
	if l.db == nil || res == nil || waited == nil {
		return
	}
	if res.Pending != nil && res.Pending.Step == waited.Step {
		return // still waiting there
	}
	if err := MarkAnswered(context.Background(), l.db, l.id, waited.Step, a, Options{}); err != nil {
		l.onError(err)
	}
}

// ResumeAnswer is the answer a resume of a run waiting at p (its
// journal's Pending) gives its pending item, for Answered: decide, and
// whether the boundary it waits at is among approve or reject.
func ResumeAnswer(p *runstate.Pending, approve, reject []string, decide, reason string) Answer {
	a := Answer{Decide: decide, Reason: reason}
	if p != nil {
		a.Approve = slices.Contains(approve, p.Boundary)
		a.Reject = slices.Contains(reject, p.Boundary)
	}
	return a
}

// LogTail returns the session log of the run of e and its last n lines.
// A run writes its log when it ends or suspends: before that the error
// wraps fs.ErrNotExist, and file still names where it will be.
func LogTail(e Entry, n int) (file string, lines []string, err error) {
	file = filepath.Join(e.StateDir, "runs", e.SessionID, runstate.SessionFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return file, nil, err
	}
	lines = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return file, lines, nil
}
