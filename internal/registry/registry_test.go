package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/store"
)

// clock is a settable clock for Options.Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func openDB(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), DBFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestLifecycle(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	dead := map[int]bool{}
	opts := Options{Now: c.now, Interval: time.Hour, Alive: func(pid int) bool { return !dead[pid] }}

	register := func(id, typ, name string) *Handle {
		t.Helper()
		h, err := Register(ctx, db, Start{ID: id, StateDir: ".crystallize", AgentType: typ, Name: name}, opts)
		if err != nil {
			t.Fatal(err)
		}
		c.t = c.t.Add(time.Second)
		return h
	}
	a := register("run-a", TypeWorkflow, "release_note")
	b := register("run-b", TypePlan, "triage")
	cc := register("run-c", TypeWorkflow, "bump")
	if err := b.End(ctx, StatusPending); err != nil {
		t.Fatal(err)
	}
	if err := cc.End(ctx, StatusCompleted); err != nil {
		t.Fatal(err)
	}
	if err := cc.End(ctx, StatusFailed); err != nil {
		t.Fatalf("second End = %v, want nil (only the first records)", err)
	}

	states := func(all bool) string {
		t.Helper()
		list, err := List(ctx, db, all, opts)
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		for _, e := range list {
			s += fmt.Sprintf("[%d] %s %s; ", e.Number, e.Name, e.State)
		}
		return s
	}
	tests := []struct {
		what      string
		all       bool
		setup     func()
		want      string
		wantPrune []string
	}{
		{what: "active", want: "[1] release_note running; [2] triage pending; "},
		{what: "all", all: true, want: "[1] release_note running; [2] triage pending; [3] bump completed; "},
		{what: "heartbeat too old", all: true, setup: func() { c.t = c.t.Add(DefaultStaleAfter + time.Second) },
			want: "[1] release_note stale; [2] triage pending; [3] bump completed; "},
		{what: "heartbeat renewed", all: true, setup: func() { db.Beat(ctx, "run-a", c.t.UnixMilli()) },
			want: "[1] release_note running; [2] triage pending; [3] bump completed; "},
		{what: "pid gone", setup: func() { dead[os.Getpid()] = true },
			want: "[1] triage pending; "},
	}
	for _, tt := range tests {
		if tt.setup != nil {
			tt.setup()
		}
		if got := states(tt.all); got != tt.want {
			t.Errorf("%s: List(all=%v) = %q, want %q", tt.what, tt.all, got, tt.want)
		}
	}

	// Find by number of the active listing, by id and by prefix.
	for ref, want := range map[string]string{"1": "run-b", "run-c": "run-c", "run-a": "run-a"} {
		e, err := Find(ctx, db, ref, false, opts)
		if err != nil || e.SessionID != want {
			t.Errorf("Find(%q) = %s, %v, want %s", ref, e.SessionID, err, want)
		}
	}
	if _, err := Find(ctx, db, "run-", false, opts); err == nil {
		t.Errorf("Find(run-) = nil error, want ambiguous")
	}
	if _, err := Find(ctx, db, "2", false, opts); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("Find(2) = %v, want ErrNoSession", err)
	}

	gone, err := Prune(ctx, db, false, opts)
	if err != nil || len(gone) != 1 || gone[0].SessionID != "run-a" {
		t.Fatalf("Prune = %+v, %v, want run-a only", gone, err)
	}
	if got, want := states(true), "[1] triage pending; [2] bump completed; "; got != want {
		t.Errorf("after Prune: %q, want %q", got, want)
	}
	gone, err = Prune(ctx, db, true, opts)
	if err != nil || len(gone) != 1 || gone[0].SessionID != "run-c" {
		t.Fatalf("Prune(finished) = %+v, %v, want run-c only (pending stays)", gone, err)
	}
	if err := a.End(ctx, StatusCompleted); !errors.Is(err, store.ErrNoSession) {
		t.Errorf("End of a pruned session = %v, want ErrNoSession", err)
	}
	if err := a.End(ctx, StatusCompleted); err != nil {
		t.Errorf("End after End = %v", err)
	}
}

// TestHeartbeat: the goroutine renews the heartbeat until End.
func TestHeartbeat(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	h, err := Register(ctx, db, Start{ID: "r", StateDir: ".", AgentType: TypeAgent, Name: "n"}, Options{Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := db.LiveSession(ctx, "r")
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := db.LiveSession(ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		if s.Heartbeat > first.Heartbeat {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("heartbeat not renewed within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := h.End(ctx, StatusCompleted); err != nil {
		t.Fatal(err)
	}
	s, _ := db.LiveSession(ctx, "r")
	if s.Status != StatusCompleted || s.Ended == 0 {
		t.Errorf("after End: %+v, want completed and ended", s)
	}
}

func TestRegisterRefuses(t *testing.T) {
	db := openDB(t)
	for _, s := range []Start{
		{ID: "", Name: "n", AgentType: TypeWorkflow},
		{ID: "r", Name: "", AgentType: TypeWorkflow},
		{ID: "r", Name: "n", AgentType: "robot"},
	} {
		if h, err := Register(context.Background(), db, s, Options{}); err == nil {
			h.End(context.Background(), StatusCompleted)
			t.Errorf("Register(%+v) = nil error", s)
		}
	}
}

// TestResumeKeepsPlace: a resumed run registers again under its id and
// keeps its number.
func TestResumeKeepsPlace(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	c := &clock{t: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	opts := Options{Now: c.now, Interval: time.Hour, Alive: func(int) bool { return true }}
	for _, id := range []string{"a", "b"} {
		h, err := Register(ctx, db, Start{ID: id, StateDir: ".", AgentType: TypeWorkflow, Name: id}, opts)
		if err != nil {
			t.Fatal(err)
		}
		h.End(ctx, StatusPending)
		c.t = c.t.Add(time.Minute)
	}
	h, err := Register(ctx, db, Start{ID: "a", StateDir: ".", AgentType: TypePlan, Name: "renamed"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.End(ctx, StatusCompleted)
	list, _ := List(ctx, db, false, opts)
	if len(list) != 2 || list[0].SessionID != "a" || list[0].State != StatusRunning || list[0].Name != "a" || list[0].AgentType != TypeWorkflow {
		t.Errorf("List = %+v, want a (running, name and type kept) first", list)
	}
}

func TestInbox(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	post := func(it store.InboxItem) int64 {
		t.Helper()
		id, err := Post(ctx, db, it, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	dec := store.InboxItem{SessionID: "r", Type: ItemDecisionNeeded, Step: 2, Boundary: "strategy", Text: "Which?", Options: []string{"JWT", "OAuth"}}
	d1 := post(dec)
	if d2 := post(dec); d2 != d1 {
		t.Errorf("posting the same question twice: ids %d and %d, want one item", d1, d2)
	}
	n1 := post(store.InboxItem{SessionID: "r", Type: ItemTaskComplete, Step: 2, Text: "done"})
	n2 := post(store.InboxItem{SessionID: "r", Type: ItemTaskComplete, Step: 2, Text: "done"})
	if n1 == n2 {
		t.Errorf("notifications are each an item; got one id %d", n1)
	}
	if _, err := Post(ctx, db, store.InboxItem{SessionID: "r", Type: "shout"}, Options{}); err == nil {
		t.Error("Post of an unknown type = nil error")
	}

	it, err := db.Item(ctx, d1)
	if err != nil {
		t.Fatal(err)
	}
	note, _ := db.Item(ctx, n1)
	appr := store.InboxItem{ID: 9, Type: ItemApprovalRequired}
	checks := []struct {
		it   store.InboxItem
		a    Answer
		fits bool
	}{
		{it, Answer{Decide: "JWT"}, true},
		{it, Answer{Decide: "jwt"}, false},
		{it, Answer{Approve: true}, false},
		{it, Answer{}, false},
		{it, Answer{Decide: "JWT", Approve: true}, false},
		{appr, Answer{Approve: true}, true},
		{appr, Answer{Reject: true}, true},
		{appr, Answer{Decide: "JWT"}, false},
		{note, Answer{Dismiss: true}, true},
		{note, Answer{Approve: true}, false},
		{store.InboxItem{Type: ItemDecisionNeeded, Options: []string{"x"}, Answered: true}, Answer{Decide: "x"}, false},
	}
	for _, c := range checks {
		err := Check(c.it, c.a)
		if (err == nil) != c.fits || err != nil && !errors.Is(err, ErrAnswer) {
			t.Errorf("Check(%s %v, %+v) = %v, want fits=%v", c.it.Type, c.it.Options, c.a, err, c.fits)
		}
		// What would fit is said in words; the command line adds its
		// flags (AnswerError.Need).
		if err != nil && strings.Contains(err.Error(), "--") {
			t.Errorf("Check(%s, %+v) = %v, names a flag", c.it.Type, c.a, err)
		}
		var ae *AnswerError
		if c.a.Approve && c.it.Type == ItemDecisionNeeded && !c.a.Reject && c.a.Decide == "" {
			if !errors.As(err, &ae) || ae.Need != ItemDecisionNeeded || len(ae.Options) == 0 {
				t.Errorf("Check(decision, approve) = %#v, want an AnswerError needing a decision among the options", err)
			}
		}
	}

	// Answering the decision leaves the notifications of its step.
	if err := MarkAnswered(ctx, db, "r", 2, Answer{Decide: "JWT", Reason: "simple"}, Options{}); err != nil {
		t.Fatal(err)
	}
	open, _ := db.Items(ctx, "", false)
	if len(open) != 2 || open[0].ID != n2 || open[1].ID != n1 {
		t.Errorf("unanswered after the decision = %+v, want the two notifications, newest first", open)
	}
	got, _ := db.Item(ctx, d1)
	if !got.Answered || got.Answer != "decide JWT" || got.Reason != "simple" {
		t.Errorf("answered item = %+v", got)
	}
	if err := Dismiss(ctx, db, note, "", "", Options{}); err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountItems(ctx); n != 1 {
		t.Errorf("CountItems = %d, want 1", n)
	}
	if n, err := db.PurgeItems(ctx, "r"); n != 2 || err != nil {
		t.Errorf("PurgeItems = %d, %v, want 2 (the answered ones)", n, err)
	}
	all, _ := db.Items(ctx, "r", true)
	if len(all) != 1 || all[0].ID != n2 {
		t.Errorf("after purge = %+v, want the unanswered notification", all)
	}
}

func TestLineString(t *testing.T) {
	entry := func(n int, name, state string) Entry {
		return Entry{Number: n, LiveSession: store.LiveSession{Name: name}, State: state}
	}
	who := func(e Entry, branch, agent, model string) Entry {
		e.Branch, e.Agent, e.Model = branch, agent, model
		return e
	}
	many := Line{Inbox: 4}
	for i := 1; i <= MaxShown+2; i++ {
		many.Sessions = append(many.Sessions, entry(i, fmt.Sprint("w", i), StatusRunning))
	}
	tests := []struct {
		line Line
		want string
	}{
		{Line{}, "no active sessions  |  0  /sessions"},
		// The seed's status bar: branch and agent, else model, else
		// the workflow's name; no branch outside git.
		{Line{Sessions: []Entry{
			who(entry(1, "release_note", StatusRunning), "main", "claude", "claude-opus"),
			who(entry(2, "triage", StatusPending), "feat/auth", "", "ollama"),
			who(entry(3, "deploy", StatusRunning), "test", "", ""),
			entry(4, "adhoc", StatusRunning),
		}, Inbox: 2},
			"[1] main/claude  [2] feat/auth/ollama  [3] test/deploy  [4] adhoc  |  2  /sessions"},
		{many, "[1] w1  [2] w2  [3] w3  [4] w4  [5] w5  +2 more  |  4  /sessions"},
	}
	for _, tt := range tests {
		if got := tt.line.String(); got != tt.want {
			t.Errorf("Line.String() = %q, want %q", got, tt.want)
		}
	}
}

// BenchmarkStatus is what "crystallize status" does on every prompt:
// open the state database, read the active sessions and the inbox count,
// close it; on a registry of 1,000 sessions (the budget is 20 ms).
// Variants: most sessions ended (the usual case) and all of them active.
func BenchmarkStatus(b *testing.B) {
	for _, active := range []int{20, 1000} {
		b.Run(fmt.Sprintf("sessions=1000/active=%d", active), func(b *testing.B) {
			ctx := context.Background()
			path := filepath.Join(b.TempDir(), DBFile)
			db, err := store.Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now().UnixMilli()
			for i := range 1000 {
				st := StatusCompleted
				if i >= 1000-active {
					st = []string{StatusRunning, StatusPending}[i%2]
				}
				err := db.PutLive(ctx, store.LiveSession{
					SessionID: fmt.Sprintf("run-%04d", i), Workspace: "/w", StateDir: "/w/.crystallize",
					AgentType: TypeWorkflow, Name: fmt.Sprint("wf", i%37), Status: st, PID: os.Getpid(),
					Started: now - int64(1000-i)*1000, Heartbeat: now,
				})
				if err != nil {
					b.Fatal(err)
				}
				if i%3 == 0 {
					if _, err := db.AddItem(ctx, store.InboxItem{SessionID: fmt.Sprintf("run-%04d", i), Type: ItemTaskComplete, Text: "done", Created: now}); err != nil {
						b.Fatal(err)
					}
				}
			}
			db.Close()
			b.ResetTimer()
			for b.Loop() {
				db, err := store.Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				l, err := Status(ctx, db, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if len(l.Sessions) != active || l.String() == "" {
					b.Fatalf("status has %d sessions, want %d", len(l.Sessions), active)
				}
				db.Close()
			}
		})
	}
}

func TestRotate(t *testing.T) {
	var list []Entry
	for i, id := range []string{"a", "b", "c"} {
		list = append(list, Entry{Number: i + 1, LiveSession: store.LiveSession{SessionID: id}})
	}
	tests := []struct {
		from  string
		delta int
		want  string
	}{
		{"a", 1, "b"}, {"c", 1, "a"}, {"a", -1, "c"}, {"b", -1, "a"},
		{"", 1, "a"}, {"", -1, "c"}, {"gone", 1, "a"}, {"gone", -1, "c"},
	}
	for _, tt := range tests {
		if got, ok := Rotate(list, tt.from, tt.delta); !ok || got.SessionID != tt.want {
			t.Errorf("Rotate(%q, %d) = %s, %v, want %s", tt.from, tt.delta, got.SessionID, ok, tt.want)
		}
	}
	if _, ok := Rotate(nil, "a", 1); ok {
		t.Error("Rotate(nil) ok")
	}
}
