// Package registry is the live registry of sessions: the workflow runs,
// plan runs and agent sessions that started in a state directory, while
// they run and after, and the inbox of what they asked or told a person.
//
// A session registers when it starts (status running, its pid, a
// heartbeat) and a goroutine renews the heartbeat every Interval while it
// runs; when it ends it records its final status (completed, failed,
// rejected, cancelled) or pending when it stopped to wait for a person.
// A process that dies without saying so (SIGKILL, a crash, a power cut)
// leaves a row that still says running: the registry shows it as stale
// when its pid is gone or its heartbeat is older than StaleAfter, and
// Prune removes it. Both signals are needed: a pid alone can be reused by
// another process, and a heartbeat alone takes StaleAfter to notice a
// death the pid shows at once.
//
// The rows live in the embedded store (state.db in the state directory),
// which many processes share: SQLite in WAL mode with a busy timeout, so
// that runs started together each register without failing on another's
// lock.
package registry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/crystallize-dev/crystallize/internal/proc"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// Agent types: what kind of session a row is.
const (
	TypeWorkflow = "workflow"
	TypePlan     = "plan"
	TypeAgent    = "agent"
)

// Statuses. Running and pending sessions are active; the others ended.
// Stale is never stored: it is what a running row whose process is gone
// is shown as.
const (
	StatusRunning   = "running"
	StatusPending   = "pending"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusRejected  = "rejected"
	StatusCancelled = "cancelled"
	StatusStale     = "stale"
)

// Defaults of Options.
const (
	DefaultInterval   = 5 * time.Second
	DefaultStaleAfter = 30 * time.Second
)

// DBFile is the registry's database in a state directory: the same file
// as the session index by default (store.DefaultPath).
const DBFile = "state.db"

// Path returns the registry database of stateDir.
func Path(stateDir string) string { return filepath.Join(stateDir, DBFile) }

// Options tune the registry. The zero value is the documented default.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Interval is how often a running session renews its heartbeat;
	// 0 means DefaultInterval.
	Interval time.Duration
	// StaleAfter is how old a running session's heartbeat may get
	// before it is stale; 0 means DefaultStaleAfter. It should be
	// several Intervals, so that one slow write is not a death.
	StaleAfter time.Duration
	// Alive reports whether a process exists; nil means the operating
	// system's answer (see alive_unix.go).
	Alive func(pid int) bool
}

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.StaleAfter <= 0 {
		o.StaleAfter = DefaultStaleAfter
	}
	if o.Alive == nil {
		o.Alive = proc.Alive
	}
	return o
}

// Start describes a session that is starting.
type Start struct {
	ID        string // the run id
	Workspace string // the directory it runs in; "" means the working directory
	StateDir  string // where it is recorded
	AgentType string // TypeWorkflow, TypePlan or TypeAgent
	Name      string // the workflow's or plan's name
	// Branch is the git branch of Workspace; "" means Register reads
	// it (see Branch).
	Branch string
	Agent  string // the agent behind the session, "" when not known
	Model  string // its model, "" when not known
}

// Handle is a registered session. Its heartbeat goroutine runs until End.
type Handle struct {
	db   *store.DB
	id   string
	opts Options
	stop chan struct{}
	done sync.WaitGroup
	once sync.Once // End records once
	halt sync.Once // the heartbeat stops once
}

// Register records s as running, with this process's pid, and starts
// renewing its heartbeat. Paths are recorded absolute, so that a
// session can be found and resumed from any directory. The caller must
// call End.
func Register(ctx context.Context, db *store.DB, s Start, opts Options) (*Handle, error) {
	opts = opts.withDefaults()
	if s.ID == "" || s.Name == "" {
		return nil, fmt.Errorf("registering session: empty id or name")
	}
	switch s.AgentType {
	case TypeWorkflow, TypePlan, TypeAgent:
	default:
		return nil, fmt.Errorf("registering session %s: unknown agent type %q", s.ID, s.AgentType)
	}
	ws := s.Workspace
	if ws == "" {
		ws = "."
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return nil, fmt.Errorf("registering session %s: %w", s.ID, err)
	}
	sd, err := filepath.Abs(s.StateDir)
	if err != nil {
		return nil, fmt.Errorf("registering session %s: %w", s.ID, err)
	}
	if s.Branch == "" {
		s.Branch = Branch(ws)
	}
	now := opts.Now().UnixMilli()
	err = db.PutLive(ctx, store.LiveSession{
		SessionID: s.ID, Workspace: ws, StateDir: sd, AgentType: s.AgentType, Name: s.Name,
		Status: StatusRunning, PID: os.Getpid(), Started: now, Heartbeat: now,
		Branch: s.Branch, Agent: s.Agent, Model: s.Model,
	})
	if err != nil {
		return nil, err
	}
	h := &Handle{db: db, id: s.ID, opts: opts, stop: make(chan struct{})}
	h.done.Add(1)
	go h.beat()
	return h, nil
}

// beat renews the heartbeat until End. A failed write is not fatal to the
// run: the next tick tries again, and a row that misses enough of them
// shows as stale, which is the truth about a session nobody can see.
func (h *Handle) beat() {
	defer h.done.Done()
	t := time.NewTicker(h.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
			_ = h.db.Beat(context.Background(), h.id, h.opts.Now().UnixMilli())
		}
	}
}

// End stops the heartbeat and records the session's final status
// (StatusPending for one that waits for a person). It may be called
// more than once; only the first call records.
func (h *Handle) End(ctx context.Context, status string) error {
	var err error
	h.once.Do(func() {
		h.Stop()
		err = h.db.EndLive(ctx, h.id, status, h.opts.Now().UnixMilli())
	})
	return err
}

// Stop stops the heartbeat without recording an end: the row stays
// running and turns stale StaleAfter later, which is the truth about a
// session whose process can no longer see it (an agent whose connection
// closed without saying it ended). It may be called more than once.
func (h *Handle) Stop() {
	h.halt.Do(func() {
		close(h.stop)
		h.done.Wait()
	})
}

// Entry is a registry row as shown: its number in the listing it came
// from, and its state (the stored status, or stale).
type Entry struct {
	Number int `json:"number"`
	store.LiveSession
	State string `json:"state"`
}

// Active reports whether the entry is running or pending.
func (e Entry) Active() bool { return e.State == StatusRunning || e.State == StatusPending }

// List returns the registry's sessions numbered from 1, oldest first: the
// active ones (running or pending), or with all every one, stale and
// ended included. Numbers are stable within a listing: a session that
// starts later gets a higher number, so the numbers of those before it
// do not move while it runs.
func List(ctx context.Context, db *store.DB, all bool, opts Options) ([]Entry, error) {
	opts = opts.withDefaults()
	var rows []store.LiveSession
	var err error
	if all {
		rows, err = db.LiveSessions(ctx)
	} else {
		rows, err = db.LiveSessions(ctx, StatusRunning, StatusPending)
	}
	if err != nil {
		return nil, err
	}
	now := opts.Now()
	list := make([]Entry, 0, len(rows))
	for _, r := range rows {
		e := Entry{LiveSession: r, State: state(r, now, opts)}
		if !all && !e.Active() {
			continue
		}
		e.Number = len(list) + 1
		list = append(list, e)
	}
	return list, nil
}

// state is r's status, or stale for a running row whose process is gone
// or whose heartbeat is older than StaleAfter.
func state(r store.LiveSession, now time.Time, opts Options) string {
	if r.Status != StatusRunning {
		return r.Status
	}
	if now.Sub(time.UnixMilli(r.Heartbeat)) > opts.StaleAfter || !opts.Alive(r.PID) {
		return StatusStale
	}
	return r.Status
}

// Find returns the entry ref names in the listing of all sessions: a
// number of the active listing (as "crystallize sessions" prints it, or of
// the full one with all), or a session id, or the one id that starts
// with ref.
func Find(ctx context.Context, db *store.DB, ref string, all bool, opts Options) (Entry, error) {
	list, err := List(ctx, db, all, opts)
	if err != nil {
		return Entry{}, err
	}
	if n, ok := number(ref); ok {
		if n < 1 || n > len(list) {
			return Entry{}, fmt.Errorf("session %d: %w (the listing has %d)", n, store.ErrNoSession, len(list))
		}
		return list[n-1], nil
	}
	full, err := List(ctx, db, true, opts)
	if err != nil {
		return Entry{}, err
	}
	var match []Entry
	for _, e := range full {
		if e.SessionID == ref {
			return e, nil
		}
		if strings.HasPrefix(e.SessionID, ref) {
			match = append(match, e)
		}
	}
	switch len(match) {
	case 0:
		return Entry{}, fmt.Errorf("session %s: %w", ref, store.ErrNoSession)
	case 1:
		return match[0], nil
	}
	return Entry{}, fmt.Errorf("session %s is ambiguous: %d sessions start with it", ref, len(match))
}

// number parses a listing number: decimal digits only, so that a run id
// (which starts with a date) is never taken for one.
func number(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Prune removes the stale sessions, and with finished also the ended
// ones (completed, failed, rejected, cancelled), with their inbox items,
// and returns what it removed. Pending sessions are kept: they wait for a
// person, not for a process.
func Prune(ctx context.Context, db *store.DB, finished bool, opts Options) ([]Entry, error) {
	list, err := List(ctx, db, true, opts)
	if err != nil {
		return nil, err
	}
	var gone []Entry
	var ids []string
	for _, e := range list {
		if e.State == StatusStale || finished && !e.Active() {
			gone = append(gone, e)
			ids = append(ids, e.SessionID)
		}
	}
	if err := db.DeleteLive(ctx, ids); err != nil {
		return nil, err
	}
	return gone, nil
}

// Rotate returns the entry delta places after the one with session id
// from in list, wrapping around at either end, as /next and /prev move
// through the sessions of a chat. When from is not in list (it ended, or
// nothing was shown yet) it starts before the first entry for a forward
// move and after the last for a backward one. ok is false for an empty
// list.
func Rotate(list []Entry, from string, delta int) (e Entry, ok bool) {
	n := len(list)
	if n == 0 {
		return Entry{}, false
	}
	i := -1
	for j, x := range list {
		if x.SessionID == from {
			i = j
		}
	}
	if i < 0 && delta < 0 {
		i = n
	}
	return list[((i+delta)%n+n)%n], true
}
