package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// agentsFor returns the agent sessions of a fresh registry with a
// settable clock, and the database to look at it with.
func agentsFor(t *testing.T) (*Agents, *store.DB, *clock, Options) {
	t.Helper()
	dir := t.TempDir()
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	opts := Options{Now: c.now, Interval: time.Hour}
	a := NewAgents(dir, opts)
	t.Cleanup(func() { a.Close() })
	db, err := store.Open(context.Background(), filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return a, db, c, opts
}

func statusLine(t *testing.T, db *store.DB, opts Options) string {
	t.Helper()
	l, err := Status(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l.String()
}

// TestAgentSession: an agent registers and is on the status line as
// BRANCH/AGENT, asks, its question is in the inbox, a person answers it,
// the agent reads the answer with who gave it, and after End the session
// is no longer active.
func TestAgentSession(t *testing.T) {
	ctx := context.Background()
	a, db, c, opts := agentsFor(t)
	id, err := a.Register(ctx, Agent{Name: "claude-code", Model: "opus-4", Branch: "feat/auth"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, AgentPrefix) {
		t.Errorf("Register = %q, want an id starting with %q", id, AgentPrefix)
	}
	if got, want := statusLine(t, db, opts), "[1] feat/auth/claude-code  |  0  /sessions"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}
	s, err := db.LiveSession(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.AgentType != TypeAgent || s.Agent != "claude-code" || s.Model != "opus-4" || s.Branch != "feat/auth" || s.Status != StatusRunning {
		t.Errorf("row = %+v, want a running agent row of claude-code, opus-4, feat/auth", s)
	}

	item, err := a.Ask(ctx, id, Question{Text: "Which auth strategy?", Options: []string{"JWT", "Session", "OAuth"}})
	if err != nil {
		t.Fatal(err)
	}
	open, err := db.Items(ctx, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].ID != item || open[0].SessionID != id || open[0].Type != ItemDecisionNeeded || open[0].Text != "Which auth strategy?" {
		t.Fatalf("inbox = %+v, want the question as item %d", open, item)
	}
	if got, want := statusLine(t, db, opts), "[1] feat/auth/claude-code  |  1  /sessions"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}
	r, err := a.Poll(ctx, id, item)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Reply{Item: item, State: ReplyPending}, r); diff != "" {
		t.Errorf("Poll before the answer (-want +got):\n%s", diff)
	}

	// The person's path: Check, then AnswerQuestion.
	c.t = c.t.Add(time.Minute)
	ans := Answer{Decide: "OAuth", Reason: "SSO is required", By: "ana\x1b[31m"}
	if err := Check(open[0], ans); err != nil {
		t.Fatal(err)
	}
	if err := AnswerQuestion(ctx, db, open[0], ans, opts); err != nil {
		t.Fatal(err)
	}
	if err := AnswerQuestion(ctx, db, open[0], Answer{Decide: "JWT"}, opts); !errors.Is(err, ErrAnswer) {
		t.Errorf("second AnswerQuestion = %v, want ErrAnswer", err)
	}
	r, err = a.Poll(ctx, id, item)
	if err != nil {
		t.Fatal(err)
	}
	want := Reply{Item: item, State: ReplyAnswered, Option: "OAuth", By: "ana[31m", Reason: "SSO is required", At: "2026-01-01T09:01:00.000Z"}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Poll after the answer (-want +got):\n%s", diff)
	}

	// An unanswered question is dismissed when the session ends.
	left, err := a.Ask(ctx, id, Question{Text: "Squash?", Options: []string{"yes", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.End(ctx, id, StatusCompleted); err != nil {
		t.Fatal(err)
	}
	if got, want := statusLine(t, db, opts), "no active sessions  |  0  /sessions"; got != want {
		t.Errorf("status line after End = %q, want %q", got, want)
	}
	it, err := db.Item(ctx, left)
	if err != nil {
		t.Fatal(err)
	}
	if !it.Answered || it.Answer != "dismiss" || it.AnsweredBy != "claude-code" {
		t.Errorf("question left at End = %+v, want dismissed by claude-code", it)
	}
	s, _ = db.LiveSession(ctx, id)
	if s.Status != StatusCompleted {
		t.Errorf("status after End = %q, want completed", s.Status)
	}
	for _, call := range []func() error{
		func() error {
			_, err := a.Ask(ctx, id, Question{Text: "again?", Options: []string{"a", "b"}})
			return err
		},
		func() error { _, err := a.Poll(ctx, id, item); return err },
		func() error { return a.End(ctx, id, StatusFailed) },
	} {
		if err := call(); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "has ended (completed)") {
			t.Errorf("a call after End = %v, want refused: has ended", err)
		}
	}
}

// TestAgentTimeout: a question past its deadline takes its default when
// the agent reads it, recorded as answered by timeout; a person's answer
// before that wins.
func TestAgentTimeout(t *testing.T) {
	ctx := context.Background()
	a, db, c, _ := agentsFor(t)
	id, err := a.Register(ctx, Agent{Name: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	q := Question{Text: "Deploy now?", Options: []string{"yes", "no"}, Default: "no", Timeout: 10 * time.Minute}
	item, err := a.Ask(ctx, id, q)
	if err != nil {
		t.Fatal(err)
	}
	it, _ := db.Item(ctx, item)
	if it.Text != "Deploy now?\n(no holds when nobody answers by 2026-01-01T09:10:00.000Z)" {
		t.Errorf("item text = %q: the person must see the default and the deadline", it.Text)
	}
	c.t = c.t.Add(9 * time.Minute)
	if r, _ := a.Poll(ctx, id, item); r.State != ReplyPending {
		t.Errorf("Poll before the deadline = %+v, want pending", r)
	}
	c.t = c.t.Add(time.Minute)
	r, err := a.Poll(ctx, id, item)
	if err != nil {
		t.Fatal(err)
	}
	want := Reply{Item: item, State: ReplyAnswered, Option: "no", By: TimeoutBy, Reason: "nobody answered by the deadline", At: "2026-01-01T09:10:00.000Z"}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Poll at the deadline (-want +got):\n%s", diff)
	}

	early, _ := a.Ask(ctx, id, q)
	it, _ = db.Item(ctx, early)
	if err := AnswerQuestion(ctx, db, it, Answer{Decide: "yes", By: "ana"}, Options{Now: c.now}); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(time.Hour)
	if r, _ := a.Poll(ctx, id, early); r.Option != "yes" || r.By != "ana" {
		t.Errorf("Poll of a question answered before its deadline = %+v, want yes by ana", r)
	}
}

// TestAgentDismiss: a person may decline an agent's question, which the
// agent reads as dismissed; a run's decision still takes only an option.
func TestAgentDismiss(t *testing.T) {
	ctx := context.Background()
	a, db, _, opts := agentsFor(t)
	id, _ := a.Register(ctx, Agent{Name: "codex"})
	item, err := a.Ask(ctx, id, Question{Text: "Rename the package?", Options: []string{"yes", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := db.Item(ctx, item)
	d := Answer{Dismiss: true, Reason: "ask the owner", By: "ana"}
	if err := Check(it, d); err != nil {
		t.Fatalf("Check(dismiss of an agent's question) = %v, want nil", err)
	}
	if err := AnswerQuestion(ctx, db, it, d, opts); err != nil {
		t.Fatal(err)
	}
	if r, _ := a.Poll(ctx, id, item); r.State != ReplyDismissed || r.By != "ana" || r.Reason != "ask the owner" {
		t.Errorf("Poll = %+v, want dismissed by ana", r)
	}
	run := store.InboxItem{ID: 7, SessionID: "20260101T090000Z-0123456789ab", Type: ItemDecisionNeeded, Options: []string{"a"}}
	if err := Check(run, d); !errors.Is(err, ErrAnswer) {
		t.Errorf("Check(dismiss of a run's decision) = %v, want ErrAnswer", err)
	}
}

// TestAgentHostile: what an agent sends is refused when it is too big,
// holds control or formatting characters, or names a session that is not
// its own; names are cut to one printable word.
func TestAgentHostile(t *testing.T) {
	ctx := context.Background()
	a, db, _, opts := agentsFor(t)
	id, err := a.Register(ctx, Agent{Name: "evil\x1b[2J agent\u202e\n", Model: "m\x07odel", Branch: "<b>main</b>"})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := db.LiveSession(ctx, id)
	if s.Agent != "evil[2J-agent" || s.Name != "evil[2J-agent" || s.Model != "model" || s.Branch != "<b>main</b>" {
		t.Errorf("row = agent %q, name %q, model %q, branch %q; want each one printable word", s.Agent, s.Name, s.Model, s.Branch)
	}
	if line := statusLine(t, db, opts); strings.ContainsAny(line, "\x1b\x07\n\u202e") {
		t.Errorf("status line %q holds a control character", line)
	}

	// A workflow run of the same registry, whose inbox no agent may use.
	h, err := Register(ctx, db, Start{ID: "20260101T090000Z-0123456789ab", StateDir: ".", AgentType: TypeAgent, Name: "wf"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.End(ctx, StatusCompleted)
	other, _ := a.Register(ctx, Agent{Name: "other"})
	otherItem, err := a.Ask(ctx, other, Question{Text: "Mine?", Options: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}

	ok := Question{Text: "Which?", Options: []string{"a", "b"}}
	for _, tc := range []struct {
		what string
		call func() error
		want string
	}{
		{"empty name", func() error { _, err := a.Register(ctx, Agent{Name: " \x00 "}); return err }, "name: empty"},
		{"oversized name", func() error { _, err := a.Register(ctx, Agent{Name: strings.Repeat("a", MaxField+1)}); return err }, "name: 257 bytes, at most 256"},
		{"relative workspace", func() error { _, err := a.Register(ctx, Agent{Name: "a", Workspace: "../x"}); return err }, `workspace "../x": not an absolute path`},
		{"workspace with a newline", func() error { _, err := a.Register(ctx, Agent{Name: "a", Workspace: "/x\n/y"}); return err }, "workspace: control character U+000A at byte 2"},
		{"oversized question", func() error {
			_, err := a.Ask(ctx, id, Question{Text: strings.Repeat("x", MaxQuestion+1), Options: ok.Options})
			return err
		}, "question: 4097 bytes, at most 4096"},
		{"escape in question", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "Which?\x1b[2J", Options: ok.Options})
			return err
		}, "question: control character U+001B at byte 6"},
		{"bidi override in question", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "Pay \u202e001$", Options: ok.Options})
			return err
		}, "question: control character U+202E at byte 4"},
		{"empty question", func() error { _, err := a.Ask(ctx, id, Question{Text: " \n", Options: ok.Options}); return err }, "question: empty"},
		{"one option", func() error { _, err := a.Ask(ctx, id, Question{Text: "?", Options: []string{"a"}}); return err }, "options: 1, want 2 to 16 choices"},
		{"too many options", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "?", Options: strings.Split(strings.Repeat("o,", MaxOptions)+"last", ",")})
			return err
		}, "options: 17, want 2 to 16 choices"},
		{"newline in an option", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "?", Options: []string{"a\nb", "c"}})
			return err
		}, "options[0]: control character U+000A at byte 1"},
		{"oversized option", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "?", Options: []string{strings.Repeat("o", MaxOption+1), "c"}})
			return err
		}, "options[0]: 201 bytes, at most 200"},
		{"twice the same option", func() error { _, err := a.Ask(ctx, id, Question{Text: "?", Options: []string{"a", "a"}}); return err }, `options[1] "a": given twice`},
		{"default not an option", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "?", Options: ok.Options, Default: "c", Timeout: time.Minute})
			return err
		}, `default "c": not one of the options`},
		{"timeout without a default", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "?", Options: ok.Options, Timeout: time.Minute})
			return err
		}, "timeout without a default"},
		{"timeout too long", func() error {
			_, err := a.Ask(ctx, id, Question{Text: "?", Options: ok.Options, Default: "a", Timeout: MaxTimeout + time.Second})
			return err
		}, "timeout 168h0m1s: want 0 (none) up to 168h0m0s"},
		{"unknown session", func() error { _, err := a.Ask(ctx, AgentPrefix+"0000000000000000", ok); return err }, "no such session"},
		{"a run's id", func() error { _, err := a.Ask(ctx, "20260101T090000Z-0123456789ab", ok); return err }, "not an agent session id"},
		{"a path for an id", func() error { return a.End(ctx, "../agent-x", StatusCompleted) }, "not an agent session id"},
		{"another session's question", func() error { _, err := a.Poll(ctx, id, otherItem); return err }, "no such question of session " + id},
		{"no such question", func() error { _, err := a.Poll(ctx, id, 999); return err }, "inbox item 999: no such question"},
		{"unknown end status", func() error { return a.End(ctx, id, "pending") }, `status "pending": want completed, failed or cancelled`},
	} {
		err := tc.call()
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want refused: %s", tc.what, err, tc.want)
		}
	}
	// Nothing refused reached the inbox.
	open, _ := db.Items(ctx, id, true)
	if len(open) != 0 {
		t.Errorf("inbox of the refused session = %+v, want empty", open)
	}

	// An agent with MaxOpen unanswered questions asks no more.
	for range MaxOpen {
		if _, err := a.Ask(ctx, id, ok); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Ask(ctx, id, ok); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "16 unanswered questions, at most 16") {
		t.Errorf("question %d: %v, want refused", MaxOpen+1, err)
	}
}

// TestAgentsBound: no more than MaxAgents agent sessions run at once.
func TestAgentsBound(t *testing.T) {
	ctx := context.Background()
	a, _, _, _ := agentsFor(t)
	for i := range MaxAgents {
		if _, err := a.Register(ctx, Agent{Name: "a"}); err != nil {
			t.Fatalf("agent %d: %v", i, err)
		}
	}
	if _, err := a.Register(ctx, Agent{Name: "a"}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "64 agent sessions are running") {
		t.Errorf("agent %d: %v, want refused", MaxAgents+1, err)
	}
}

// TestAgentLiveness: the server renews an agent session's heartbeat while
// its connection is open; released, the session turns stale StaleAfter
// later, and a call afterwards (a client reconnecting) takes it over.
func TestAgentLiveness(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// The heartbeat goroutine reads the clock the test moves.
	var mu sync.Mutex
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return t0 }
	advance := func(d time.Duration) time.Time { mu.Lock(); defer mu.Unlock(); t0 = t0.Add(d); return t0 }
	opts := Options{Now: now, Interval: 10 * time.Millisecond, StaleAfter: time.Minute}
	a := NewAgents(dir, opts)
	defer a.Close()
	db, err := store.Open(ctx, filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := a.Register(ctx, Agent{Name: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	state := func() string {
		t.Helper()
		e, err := Find(ctx, db, id, true, opts)
		if err != nil {
			t.Fatal(err)
		}
		return e.State
	}
	waitBeat := func(after time.Time) {
		t.Helper()
		for range 500 {
			s, _ := db.LiveSession(ctx, id)
			if s.Heartbeat >= after.UnixMilli() {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("no heartbeat")
	}
	// Without a call for two StaleAfters, the open connection's
	// heartbeat keeps it running.
	waitBeat(advance(2 * time.Minute))
	if got := state(); got != StatusRunning {
		t.Errorf("state with the connection open = %s, want running", got)
	}
	a.Release(id)
	advance(2 * time.Minute)
	time.Sleep(50 * time.Millisecond)
	if got := state(); got != StatusStale {
		t.Errorf("state after release = %s, want stale", got)
	}
	if _, err := a.Ask(ctx, id, Question{Text: "Still there?", Options: []string{"yes", "no"}}); err != nil {
		t.Fatal(err)
	}
	if got := state(); got != StatusRunning {
		t.Errorf("state after a call = %s, want running", got)
	}
}

func TestWho(t *testing.T) {
	for _, tc := range []struct {
		e    Entry
		want string
	}{
		{Entry{LiveSession: store.LiveSession{Name: "claude-code", Branch: "feat/auth", Agent: "claude-code", Model: "opus-4"}}, "feat/auth/claude-code (opus-4)"},
		{Entry{LiveSession: store.LiveSession{Name: "bump", Branch: "main", Model: "llama3"}}, "main/llama3"},
		{Entry{LiveSession: store.LiveSession{Name: "bump"}}, "bump"},
	} {
		if got := tc.e.Who(); got != tc.want {
			t.Errorf("Who(%+v) = %q, want %q", tc.e.LiveSession, got, tc.want)
		}
	}
}

// TestNewToken: each server gets a fresh token, readable by its owner
// only.
func TestNewToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".crystallize")
	a, file, err := NewToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := NewToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 64 || a == b {
		t.Errorf("tokens %q, %q: want two different 64-hex tokens", a, b)
	}
	data, err := os.ReadFile(file)
	if err != nil || string(data) != b+"\n" {
		t.Errorf("%s = %q, %v; want the last token", file, data, err)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", file, st.Mode().Perm())
	}
}

// FuzzAgentText: whatever an agent sends, a name comes out as one word
// of at most maxWho printable runes, and a text checkText accepts holds
// nothing but printable runes, newlines and tabs.
func FuzzAgentText(f *testing.F) {
	for _, s := range []string{"claude-code", "evil\x1b[2J agent\u202e\n", "Which?\n\tA or B", "\xff\xfe", "a\u200bb", strings.Repeat("é", 50)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := oneWord(s)
		if n := utf8.RuneCountInString(w); n > maxWho {
			t.Errorf("oneWord(%q) = %q: %d runes, at most %d", s, w, n, maxWho)
		}
		for _, r := range w {
			if !unicode.IsPrint(r) || unicode.IsSpace(r) {
				t.Errorf("oneWord(%q) = %q holds %U", s, w, r)
			}
		}
		if checkText("text", s, MaxQuestion, true) != nil {
			return
		}
		for _, r := range s {
			if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError) {
				t.Errorf("checkText accepted %q, which holds %U", s, r)
			}
		}
	})
}
