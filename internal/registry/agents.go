package registry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// Agents outside crystallize (a Claude Code session, any MCP client)
// register here through a server (crystallize serve mcp), ask a person
// questions through the inbox, read the answers and say when they end.
// Everything they send is untrusted: names are cut to one printable word
// (oneWord, the rule of Live.As), texts and options are bounded and
// refused when they hold control or formatting characters (an escape
// sequence must not reach a terminal, a bidirectional override must not
// reorder what a person reads), and a call naming a session that is not
// an agent session registered here is refused, so an agent can neither
// post into a workflow run's inbox nor read another session's answers.
//
// Liveness. An agent session's row carries the pid of the server that
// registered it, and that server renews its heartbeat every Interval
// while the client's connection is open (Release stops it when the
// connection closes), and at each call. A client that goes away without
// ending its session leaves a row that turns stale StaleAfter later,
// which "sessions prune" removes with its questions; a call after the
// server restarted (a client reconnects with the session id it was
// given) takes the row over, with the new server's pid and heartbeat.
// Renewing only at each call would show an agent that thinks for a
// minute between calls as stale, and a prune would delete the question
// it waits on. A server without connections (the agents API over plain
// HTTP) releases a session after each call, so that one is live by its
// calls alone.

// AgentPrefix starts the id of every agent session, which no run id
// does (a run id starts with its date): the id alone says that the inbox
// answer to its question is recorded for the agent to read, not a run to
// resume.
const AgentPrefix = "agent-"

// Bounds on what an agent sends.
const (
	// MaxField bounds the bytes of a name, model or branch before it
	// is cut to one word.
	MaxField = 256
	// MaxPath bounds the bytes of a workspace path.
	MaxPath = 4096
	// MaxQuestion bounds the bytes of a question's text.
	MaxQuestion = 4096
	// MaxOptions bounds the options of a question; it needs two.
	MaxOptions = 16
	// MaxOption bounds the bytes of one option.
	MaxOption = 200
	// MaxOpen bounds the unanswered questions of one session.
	MaxOpen = 16
	// MaxAgents bounds the running agent sessions of one registry, so
	// that a client registering in a loop fills neither the registry
	// nor the status line.
	MaxAgents = 64
	// MaxTimeout bounds how long a question may wait for its default.
	MaxTimeout = 7 * 24 * time.Hour
)

// ErrRefused is wrapped by every refusal of what an agent sent: bad
// input, an unknown or ended session, a bound reached.
var ErrRefused = errors.New("refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// IsAgentSession reports whether id is the id of an agent session
// (AgentPrefix), whose questions a person answers for the agent to read.
func IsAgentSession(id string) bool { return strings.HasPrefix(id, AgentPrefix) }

// Agent is an agent registering: its name (required), model, the git
// branch it works on and its working directory, each optional. Without a
// branch, the workspace's is read (Branch); without a workspace, the
// server's working directory is recorded.
type Agent struct {
	Name, Model, Branch, Workspace string
}

// Question is what an agent asks a person: a text and the options to
// choose from. With a Timeout, Default (one of Options) is the answer
// when nobody answers within it.
type Question struct {
	Text    string
	Options []string
	Default string
	Timeout time.Duration
}

// States of a Reply.
const (
	ReplyPending   = "pending"
	ReplyAnswered  = "answered"
	ReplyDismissed = "dismissed"
)

// Reply is the state of a question as its agent reads it: pending;
// answered with Option, By whom ("timeout" for the default taken at the
// deadline), with the person's Reason; or dismissed (a person declined to
// answer, or the session ended). At is when, in RFC 3339.
type Reply struct {
	Item   int64  `json:"item"`
	State  string `json:"state"`
	Option string `json:"option,omitempty"`
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
	At     string `json:"answered_at,omitempty"`
}

// TimeoutBy is who a default taken at a question's deadline is recorded
// as answered by.
const TimeoutBy = "timeout"

// Agents serves the agent sessions of one registry (the state.db of
// StateDir) for one server process. It opens the registry at its first
// use, so a server no agent registers with creates nothing. Close stops
// every heartbeat and closes the registry.
type Agents struct {
	stateDir string
	opts     Options

	mu    sync.Mutex
	db    *store.DB
	beats map[string]*Handle // the sessions this process renews
}

// NewAgents returns the agent sessions of the registry of stateDir.
func NewAgents(stateDir string, opts Options) *Agents {
	return &Agents{stateDir: stateDir, opts: opts.withDefaults(), beats: map[string]*Handle{}}
}

func (a *Agents) open(ctx context.Context) (*store.DB, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.db == nil {
		db, err := store.Open(ctx, Path(a.stateDir))
		if err != nil {
			return nil, err
		}
		a.db = db
	}
	return a.db, nil
}

// Close stops the heartbeats of the sessions this process renews,
// without ending them, and closes the registry.
func (a *Agents) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, h := range a.beats {
		h.Stop()
		delete(a.beats, id)
	}
	if a.db == nil {
		return nil
	}
	err := a.db.Close()
	a.db = nil
	return err
}

// Register records ag as a running agent session and returns its id.
func (a *Agents) Register(ctx context.Context, ag Agent) (string, error) {
	for _, f := range []struct{ name, v string }{{"name", ag.Name}, {"model", ag.Model}, {"branch", ag.Branch}} {
		if len(f.v) > MaxField {
			return "", refuse("%s: %d bytes, at most %d", f.name, len(f.v), MaxField)
		}
	}
	name := oneWord(ag.Name)
	if name == "" {
		return "", refuse("name: empty: say which agent registers (claude-code, codex…)")
	}
	ws := ag.Workspace
	if ws != "" {
		if err := checkText("workspace", ws, MaxPath, false); err != nil {
			return "", err
		}
		if !filepath.IsAbs(ws) {
			return "", refuse("workspace %q: not an absolute path", ws)
		}
		ws = filepath.Clean(ws)
	}
	db, err := a.open(ctx)
	if err != nil {
		return "", err
	}
	list, err := List(ctx, db, false, a.opts)
	if err != nil {
		return "", err
	}
	n := 0
	for _, e := range list {
		if IsAgentSession(e.SessionID) && e.State == StatusRunning {
			n++
		}
	}
	if n >= MaxAgents {
		return "", refuse("%d agent sessions are running, at most %d: end one (session_end) or prune the stale ones", n, MaxAgents)
	}
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather)
	id := AgentPrefix + hex.EncodeToString(b[:])
	start := Start{ID: id, Workspace: ws, StateDir: a.stateDir, AgentType: TypeAgent, Name: name,
		Branch: oneWord(ag.Branch), Agent: name, Model: oneWord(ag.Model)}
	if start.Branch == "" && ws != "" {
		start.Branch = oneWord(Branch(ws))
	}
	h, err := Register(ctx, db, start, a.opts)
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	a.beats[id] = h
	a.mu.Unlock()
	return id, nil
}

// session returns the running agent session id and renews its
// heartbeat, taking it over when no process renews it here.
func (a *Agents) session(ctx context.Context, id string) (*store.DB, store.LiveSession, error) {
	var none store.LiveSession
	if len(id) > 64 || !IsAgentSession(id) {
		return nil, none, refuse("session %s: not an agent session id (session_register gives one)", clip(id))
	}
	db, err := a.open(ctx)
	if err != nil {
		return nil, none, err
	}
	s, err := db.LiveSession(ctx, id)
	if errors.Is(err, store.ErrNoSession) {
		return nil, none, refuse("session %s: no such session (never registered, or pruned): register again", id)
	}
	if err != nil {
		return nil, none, err
	}
	if s.AgentType != TypeAgent {
		return nil, none, refuse("session %s: not an agent session", id)
	}
	if s.Status != StatusRunning {
		return nil, none, refuse("session %s has ended (%s)", id, s.Status)
	}
	a.mu.Lock()
	_, mine := a.beats[id]
	a.mu.Unlock()
	if mine {
		return db, s, db.Beat(ctx, id, a.opts.Now().UnixMilli())
	}
	h, err := Register(ctx, db, Start{ID: id, Workspace: s.Workspace, StateDir: a.stateDir, AgentType: TypeAgent,
		Name: s.Name, Branch: s.Branch, Agent: s.Agent, Model: s.Model}, a.opts)
	if err != nil {
		return nil, none, err
	}
	a.mu.Lock()
	if old, ok := a.beats[id]; ok {
		old.Stop() // two calls took it over at once
	}
	a.beats[id] = h
	a.mu.Unlock()
	return db, s, nil
}

// Release stops renewing the heartbeat of session id (its client's
// connection closed); the session is not ended, and turns stale unless
// a call comes again.
func (a *Agents) Release(id string) {
	a.mu.Lock()
	h := a.beats[id]
	delete(a.beats, id)
	a.mu.Unlock()
	if h != nil {
		h.Stop()
	}
}

// Ask posts q as a decision of session id in the inbox and returns the
// item's id at once; the agent reads the answer with Poll.
func (a *Agents) Ask(ctx context.Context, id string, q Question) (int64, error) {
	if err := checkText("question", q.Text, MaxQuestion, true); err != nil {
		return 0, err
	}
	text := strings.TrimSpace(q.Text)
	if text == "" {
		return 0, refuse("question: empty")
	}
	if len(q.Options) < 2 || len(q.Options) > MaxOptions {
		return 0, refuse("options: %d, want 2 to %d choices", len(q.Options), MaxOptions)
	}
	seen := map[string]bool{}
	for i, o := range q.Options {
		if err := checkText(fmt.Sprintf("options[%d]", i), o, MaxOption, false); err != nil {
			return 0, err
		}
		if strings.TrimSpace(o) != o || o == "" {
			return 0, refuse("options[%d] %q: empty, or spaces around it", i, o)
		}
		if seen[o] {
			return 0, refuse("options[%d] %q: given twice", i, o)
		}
		seen[o] = true
	}
	if q.Default != "" && !seen[q.Default] {
		return 0, refuse("default %s: not one of the options", clip(q.Default))
	}
	switch {
	case q.Timeout < 0 || q.Timeout > MaxTimeout:
		return 0, refuse("timeout %s: want 0 (none) up to %s", q.Timeout, MaxTimeout)
	case q.Timeout > 0 && q.Default == "":
		return 0, refuse("timeout without a default: say which option holds when nobody answers in time")
	}
	db, s, err := a.session(ctx, id)
	if err != nil {
		return 0, err
	}
	all, err := db.Items(ctx, id, true)
	if err != nil {
		return 0, err
	}
	open := 0
	for _, it := range all {
		if !it.Answered {
			open++
		}
	}
	if open >= MaxOpen {
		return 0, refuse("session %s has %d unanswered questions, at most %d: wait for their answers", s.SessionID, open, MaxOpen)
	}
	it := store.InboxItem{SessionID: id, Type: ItemDecisionNeeded, Step: len(all) + 1, Text: text,
		Options: q.Options, Default: q.Default}
	if q.Timeout > 0 {
		it.Deadline = a.opts.Now().Add(q.Timeout).UnixMilli()
		// The page and the inbox show the text: the person must see
		// what holds when they do not answer.
		it.Text += fmt.Sprintf("\n(%s holds when nobody answers by %s)", q.Default, FormatTime(it.Deadline))
	}
	return Post(ctx, db, it, a.opts)
}

// Poll returns the state of question item of session id. A question
// past its deadline that nobody answered takes its default here, the
// first time it is read, recorded as answered by TimeoutBy: until then a
// person may still answer it.
func (a *Agents) Poll(ctx context.Context, id string, item int64) (Reply, error) {
	db, _, err := a.session(ctx, id)
	if err != nil {
		return Reply{}, err
	}
	it, err := db.Item(ctx, item)
	if errors.Is(err, store.ErrNoItem) || err == nil && it.SessionID != id {
		// Another session's item is no item of this one: its
		// existence is not for this agent to learn.
		return Reply{}, refuse("inbox item %d: no such question of session %s", item, id)
	}
	if err != nil {
		return Reply{}, err
	}
	now := a.opts.Now().UnixMilli()
	if !it.Answered && it.Deadline > 0 && now >= it.Deadline && it.Default != "" {
		if _, err := db.AnswerItem(ctx, it.ID, Answer{Decide: it.Default}.String(), "nobody answered by the deadline", TimeoutBy, now); err != nil {
			return Reply{}, err
		}
		if it, err = db.Item(ctx, item); err != nil {
			return Reply{}, err
		}
	}
	return replyOf(it), nil
}

// replyOf is it as its agent reads it.
func replyOf(it store.InboxItem) Reply {
	r := Reply{Item: it.ID, State: ReplyPending}
	if !it.Answered {
		return r
	}
	r.By, r.Reason, r.At = it.AnsweredBy, it.Reason, FormatTime(it.AnsweredAt)
	if opt, ok := strings.CutPrefix(it.Answer, "decide "); ok {
		r.State, r.Option = ReplyAnswered, opt
	} else {
		r.State = ReplyDismissed
	}
	return r
}

// End records the final status of session id (completed, failed or
// cancelled) and dismisses its unanswered questions, which nobody needs
// to answer any more.
func (a *Agents) End(ctx context.Context, id, status string) error {
	switch status {
	case StatusCompleted, StatusFailed, StatusCancelled:
	default:
		return refuse("status %s: want %s, %s or %s", clip(status), StatusCompleted, StatusFailed, StatusCancelled)
	}
	db, s, err := a.session(ctx, id)
	if err != nil {
		return err
	}
	open, err := db.Items(ctx, id, false)
	if err != nil {
		return err
	}
	now := a.opts.Now().UnixMilli()
	for _, it := range open {
		if _, err := db.AnswerItem(ctx, it.ID, Answer{Dismiss: true}.String(), "the session ended", s.Agent, now); err != nil {
			return err
		}
	}
	a.mu.Lock()
	h := a.beats[id]
	delete(a.beats, id)
	a.mu.Unlock()
	if h == nil { // released meanwhile: its connection closed
		return db.EndLive(ctx, id, status, now)
	}
	return h.End(ctx, status)
}

// AnswerQuestion records a person's answer a (a decision among the
// options, or a dismissal) to it, a question of an agent session, after
// Check accepted it; the agent reads it with Poll. It is refused when the
// item was answered meanwhile (another person, or the deadline's
// default read by the agent).
func AnswerQuestion(ctx context.Context, db *store.DB, it store.InboxItem, a Answer, opts Options) error {
	opts = opts.withDefaults()
	if !IsAgentSession(it.SessionID) {
		return fmt.Errorf("inbox item %d: not a question of an agent session", it.ID)
	}
	ok, err := db.AnswerItem(ctx, it.ID, a.String(), a.Reason, oneWord(a.By), opts.Now().UnixMilli())
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: item %d was answered meanwhile", ErrAnswer, it.ID)
	}
	return nil
}

// checkText refuses s when it is longer than max bytes, not UTF-8, or
// holds a control or formatting character (newlines and tabs allowed
// where lines is set): an escape sequence would reach the terminal of
// whoever lists the inbox, and a bidirectional override would reorder
// what the person reads.
func checkText(what, s string, max int, lines bool) error {
	if len(s) > max {
		return refuse("%s: %d bytes, at most %d", what, len(s), max)
	}
	if !utf8.ValidString(s) {
		return refuse("%s: not UTF-8", what)
	}
	for i, r := range s {
		if lines && (r == '\n' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return refuse("%s: control character %U at byte %d", what, r, i)
		}
	}
	return nil
}

// clip is s quoted for an error message, cut to 64 bytes, with what
// cannot be printed escaped.
func clip(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return fmt.Sprintf("%q", s)
}

// TokenFile is the file in the state directory that holds the token of
// the agents API (crystallize serve agents), readable by its owner only.
const TokenFile = "agents.token"

// NewToken makes a fresh token for the agents API of stateDir, writes it
// to TokenFile there (mode 0600, replacing the last server's, so a token
// dies with the server that made it) and returns it and the file.
func NewToken(stateDir string) (token, file string, err error) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather)
	token = hex.EncodeToString(b[:])
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return "", "", err
	}
	file = filepath.Join(stateDir, TokenFile)
	if err := atomicfile.Write(file, []byte(token+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("writing the agents API token: %w", err)
	}
	return token, file, nil
}
