package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The live registry: one row per run (workflow, plan or agent session)
// that started in this state directory, and the inbox of what those runs
// asked or told a person. Unlike the session index these rows are not
// derived from files; they say what is happening now. Times are Unix
// milliseconds, so that ordering and staleness are integer comparisons.

// LiveSession is one row of the registry.
type LiveSession struct {
	SessionID string `json:"session_id"`
	Workspace string `json:"workspace"`
	StateDir  string `json:"state_dir"`
	AgentType string `json:"agent_type"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	PID       int    `json:"pid"`
	Started   int64  `json:"started"`
	Heartbeat int64  `json:"heartbeat"`
	Ended     int64  `json:"ended"`  // 0 while the session has not ended
	Branch    string `json:"branch"` // the workspace's git branch; "" outside git or detached
	Agent     string `json:"agent"`  // the agent behind the session, "" when not known
	Model     string `json:"model"`  // its model, "" when not known
}

// InboxItem is one row of the inbox: a callout a run wrote that a person
// should see. Options are the choices of a decision; Answered says a
// person (or the run's own resume) has answered it.
type InboxItem struct {
	ID         int64    `json:"id"`
	SessionID  string   `json:"session_id"`
	Type       string   `json:"type"`
	Step       int      `json:"step"`
	Boundary   string   `json:"boundary"`
	Text       string   `json:"text"`
	Options    []string `json:"options"`
	Created    int64    `json:"created"`
	Answered   bool     `json:"answered"`
	Answer     string   `json:"answer"`
	Reason     string   `json:"reason"`
	AnsweredAt int64    `json:"answered_at"`
	// AnsweredBy names who answered: the person, or "timeout" for the
	// default taken at the deadline; "" when not known.
	AnsweredBy string `json:"answered_by"`
	// Default is the option a question takes when nobody answers it by
	// Deadline (Unix milliseconds; 0 is none).
	Default  string `json:"default"`
	Deadline int64  `json:"deadline"`
}

// ErrNoSession is returned for a session id the registry does not hold.
var ErrNoSession = errors.New("no such session")

// ErrNoItem is returned for an inbox item id the inbox does not hold.
var ErrNoItem = errors.New("no such inbox item")

// PutLive registers r. A session already registered under r.SessionID
// (a suspended run being resumed) keeps its agent type, name and start
// time, so that it keeps its place in listings, and takes r's workspace,
// state directory, status, pid, heartbeat, branch, agent and model.
func (s *DB) PutLive(ctx context.Context, r LiveSession) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO live_sessions
		(session_id, workspace, state_dir, agent_type, name, status, pid, started, heartbeat, ended, branch, agent, model)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(session_id) DO UPDATE SET workspace = excluded.workspace, state_dir = excluded.state_dir,
			status = excluded.status, pid = excluded.pid, heartbeat = excluded.heartbeat, ended = excluded.ended,
			branch = excluded.branch, agent = excluded.agent, model = excluded.model`,
		r.SessionID, r.Workspace, r.StateDir, r.AgentType, r.Name, r.Status, r.PID, r.Started, r.Heartbeat, r.Ended, r.Branch, r.Agent, r.Model)
	if err != nil {
		return fmt.Errorf("registering session %s: %w", r.SessionID, err)
	}
	return nil
}

// Beat sets the heartbeat of a running session to now.
func (s *DB) Beat(ctx context.Context, id string, now int64) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE live_sessions SET heartbeat = ? WHERE session_id = ?`, now, id); err != nil {
		return fmt.Errorf("session %s heartbeat: %w", id, err)
	}
	return nil
}

// EndLive records the status a session ended with.
func (s *DB) EndLive(ctx context.Context, id, status string, now int64) error {
	res, err := s.db.ExecContext(ctx, `UPDATE live_sessions SET status = ?, heartbeat = ?, ended = ? WHERE session_id = ?`, status, now, now, id)
	if err != nil {
		return fmt.Errorf("ending session %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("ending session %s: %w", id, ErrNoSession)
	}
	return nil
}

// DeleteLive removes sessions from the registry; their inbox items go
// with them. Ids not in the registry are ignored.
func (s *DB) DeleteLive(ctx context.Context, ids []string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM live_sessions WHERE session_id = ?`, id); err != nil {
				return fmt.Errorf("deleting session %s: %w", id, err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM inbox WHERE session_id = ?`, id); err != nil {
				return fmt.Errorf("deleting session %s: %w", id, err)
			}
		}
		return nil
	})
}

const liveCols = `session_id, workspace, state_dir, agent_type, name, status, pid, started, heartbeat, ended, branch, agent, model`

// LiveSessions returns the registry's rows whose status is one of
// statuses (all rows when statuses is empty), oldest first (by started,
// then id), so that numbering them gives a new session the next number
// and leaves the others' alone.
func (s *DB) LiveSessions(ctx context.Context, statuses ...string) ([]LiveSession, error) {
	q := `SELECT ` + liveCols + ` FROM live_sessions`
	args := make([]any, len(statuses))
	if len(statuses) > 0 {
		q += ` WHERE status IN (` + strings.Repeat(", ?", len(statuses))[2:] + `)`
		for i, st := range statuses {
			args[i] = st
		}
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY started, session_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading registry: %w", err)
	}
	defer rows.Close()
	list := []LiveSession{}
	for rows.Next() {
		var r LiveSession
		if err := rows.Scan(&r.SessionID, &r.Workspace, &r.StateDir, &r.AgentType, &r.Name, &r.Status, &r.PID, &r.Started, &r.Heartbeat, &r.Ended, &r.Branch, &r.Agent, &r.Model); err != nil {
			return nil, fmt.Errorf("reading registry: %w", err)
		}
		list = append(list, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading registry: %w", err)
	}
	return list, nil
}

// LiveSession returns the registry row of id, or ErrNoSession.
func (s *DB) LiveSession(ctx context.Context, id string) (LiveSession, error) {
	var r LiveSession
	err := s.db.QueryRowContext(ctx, `SELECT `+liveCols+` FROM live_sessions WHERE session_id = ?`, id).
		Scan(&r.SessionID, &r.Workspace, &r.StateDir, &r.AgentType, &r.Name, &r.Status, &r.PID, &r.Started, &r.Heartbeat, &r.Ended, &r.Branch, &r.Agent, &r.Model)
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("session %s: %w", id, ErrNoSession)
	}
	if err != nil {
		return r, fmt.Errorf("reading registry: %w", err)
	}
	return r, nil
}

// AddItem appends it to the inbox and returns its id.
func (s *DB) AddItem(ctx context.Context, it InboxItem) (int64, error) {
	opts := it.Options
	if opts == nil {
		opts = []string{}
	}
	enc, err := json.Marshal(opts)
	if err != nil {
		return 0, err
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO inbox (session_id, type, step, boundary, text, options, created, default_option, deadline)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, it.SessionID, it.Type, it.Step, it.Boundary, it.Text, string(enc), it.Created, it.Default, it.Deadline)
	if err != nil {
		return 0, fmt.Errorf("adding inbox item: %w", err)
	}
	return res.LastInsertId()
}

const itemCols = `id, session_id, type, step, boundary, text, options, created, answered, answer, reason, answered_at, answered_by, default_option, deadline`

// Items returns inbox items, newest first: the unanswered ones, or all
// of them when all is set, of the session sessionID when it is not "".
func (s *DB) Items(ctx context.Context, sessionID string, all bool) ([]InboxItem, error) {
	q := `SELECT ` + itemCols + ` FROM inbox WHERE 1`
	var args []any
	if !all {
		q += ` AND answered = 0`
	}
	if sessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, sessionID)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading inbox: %w", err)
	}
	defer rows.Close()
	list := []InboxItem{}
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading inbox: %w", err)
	}
	return list, nil
}

// Item returns the inbox item id, or ErrNoItem.
func (s *DB) Item(ctx context.Context, id int64) (InboxItem, error) {
	it, err := scanItem(s.db.QueryRowContext(ctx, `SELECT `+itemCols+` FROM inbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return it, fmt.Errorf("inbox item %d: %w", id, ErrNoItem)
	}
	return it, err
}

// CountItems counts the unanswered inbox items.
func (s *DB) CountItems(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM inbox WHERE answered = 0`).Scan(&n); err != nil {
		return 0, fmt.Errorf("reading inbox: %w", err)
	}
	return n, nil
}

// AnswerItems marks the unanswered items of session sessionID at step
// whose type is one of types answered with answer and reason by by, and
// returns how many it marked.
func (s *DB) AnswerItems(ctx context.Context, sessionID string, step int, types []string, answer, reason, by string, now int64) (int, error) {
	if len(types) == 0 {
		return 0, nil
	}
	q := `UPDATE inbox SET answered = 1, answer = ?, reason = ?, answered_by = ?, answered_at = ?
		WHERE answered = 0 AND session_id = ? AND step = ? AND type IN (` + strings.Repeat(", ?", len(types))[2:] + `)`
	args := []any{answer, reason, by, now, sessionID, step}
	for _, t := range types {
		args = append(args, t)
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("answering inbox items of %s: %w", sessionID, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PurgeItems deletes the answered inbox items of session sessionID and
// returns how many it deleted.
func (s *DB) PurgeItems(ctx context.Context, sessionID string) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM inbox WHERE answered = 1 AND session_id = ?`, sessionID)
	if err != nil {
		return 0, fmt.Errorf("purging inbox of %s: %w", sessionID, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

type scanner interface{ Scan(...any) error }

func scanItem(r scanner) (InboxItem, error) {
	var it InboxItem
	var opts string
	var answered int
	err := r.Scan(&it.ID, &it.SessionID, &it.Type, &it.Step, &it.Boundary, &it.Text, &opts, &it.Created, &answered, &it.Answer, &it.Reason, &it.AnsweredAt, &it.AnsweredBy, &it.Default, &it.Deadline)
	if errors.Is(err, sql.ErrNoRows) {
		return it, err
	}
	if err != nil {
		return it, fmt.Errorf("reading inbox: %w", err)
	}
	it.Answered = answered != 0
	if err := json.Unmarshal([]byte(opts), &it.Options); err != nil {
		return it, fmt.Errorf("reading inbox: item %d: options: %w", it.ID, err)
	}
	return it, nil
}

// AnswerItem marks the unanswered inbox item id answered by by, and
// reports whether it was unanswered: of two answers racing, one wins and
// the other is told so.
func (s *DB) AnswerItem(ctx context.Context, id int64, answer, reason, by string, now int64) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE inbox SET answered = 1, answer = ?, reason = ?, answered_by = ?, answered_at = ? WHERE answered = 0 AND id = ?`,
		answer, reason, by, now, id)
	if err != nil {
		return false, fmt.Errorf("answering inbox item %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
