package sessionindex

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/store"
)

func doc(id, started, title string, callouts ...string) string {
	var b strings.Builder
	b.WriteString("---\ntype: session\nsession_id: " + id + "\n")
	if started != "" {
		b.WriteString("started: " + started + "\n")
	}
	b.WriteString("status: active\ntokens_used: 0\n---\n\n# " + title + "\n\n## Work\n")
	for _, c := range callouts {
		b.WriteString("\n> " + c + "\n")
	}
	return b.String()
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// state is what the index says: session id → title, and the inbox as
// "session/phase/type/title" in order.
func state(t *testing.T, db *store.DB) (map[string]string, []string) {
	t.Helper()
	ctx := context.Background()
	list, err := db.Sessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, s := range list {
		titles[s.Path+" "+s.SessionID] = s.Title
	}
	items, err := db.Callouts(ctx, Actionable)
	if err != nil {
		t.Fatal(err)
	}
	inbox := []string{}
	for _, it := range items {
		inbox = append(inbox, it.Session.SessionID+"/"+it.Callout.Phase+"/"+it.Callout.Type+"/"+it.Callout.Title)
	}
	return titles, inbox
}

func TestUpdateFollowsChanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	write(t, dir, "old.md", doc("s-old", "2026-01-01T00:00:00Z", "Old", "[!error] Broke", "[!decision] Not in the inbox"))
	write(t, dir, "new.md", doc("s-new", "2026-02-01T00:00:00Z", "New", "[!Task_Complete] Done", "[!decision_needed] Which?"))
	write(t, dir, "nested/mid.md", doc("s-mid", "2026-01-15T00:00:00Z", "Mid", "[!approval_required] Deploy"))
	write(t, dir, "notes.txt", "not a session")

	steps := []struct {
		name   string
		change func()
		want   Result
		titles map[string]string
		inbox  []string
	}{{
		name:   "first",
		change: func() {},
		want:   Result{Added: 3},
		titles: map[string]string{"old.md s-old": "Old", "new.md s-new": "New", "nested/mid.md s-mid": "Mid"},
		inbox:  []string{"s-new/work/task_complete/Done", "s-new/work/decision_needed/Which?", "s-mid/work/approval_required/Deploy", "s-old/work/error/Broke"},
	}, {
		name:   "unchanged",
		change: func() {},
		want:   Result{Unchanged: 3},
		titles: map[string]string{"old.md s-old": "Old", "new.md s-new": "New", "nested/mid.md s-mid": "Mid"},
		inbox:  []string{"s-new/work/task_complete/Done", "s-new/work/decision_needed/Which?", "s-mid/work/approval_required/Deploy", "s-old/work/error/Broke"},
	}, {
		// The old session is edited to start last: it moves to the top of
		// the inbox, with its new callouts only.
		name: "edit and delete",
		change: func() {
			write(t, dir, "old.md", doc("s-old", "2026-03-01T00:00:00Z", "Old, again", "[!approval_required] Merge"))
			os.Remove(filepath.Join(dir, "nested/mid.md"))
		},
		want:   Result{Updated: 1, Unchanged: 1, Removed: 1},
		titles: map[string]string{"old.md s-old": "Old, again", "new.md s-new": "New"},
		inbox:  []string{"s-old/work/approval_required/Merge", "s-new/work/task_complete/Done", "s-new/work/decision_needed/Which?"},
	}, {
		name: "broken file leaves the index",
		change: func() {
			write(t, dir, "new.md", "---\ntype: session\nsession_id: s-new\n---\n")
		},
		want:   Result{Unchanged: 1, Failed: 1},
		titles: map[string]string{"old.md s-old": "Old, again"},
		inbox:  []string{"s-old/work/approval_required/Merge"},
	}}
	for _, st := range steps {
		st.change()
		got, err := Update(ctx, db, dir)
		if err != nil {
			t.Fatalf("%s: Update: %v", st.name, err)
		}
		if st.want.Failed > 0 && len(got.Problems) == 0 {
			t.Errorf("%s: Update reported no problems for a failed file", st.name)
		}
		for _, p := range got.Problems {
			if p.Line == 0 || !strings.HasSuffix(p.File, "new.md") {
				t.Errorf("%s: problem %v, want one in new.md with a line", st.name, p)
			}
		}
		got.Problems = nil
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Errorf("%s: Update (-want +got):\n%s", st.name, diff)
		}
		titles, inbox := state(t, db)
		if diff := cmp.Diff(st.titles, titles); diff != "" {
			t.Errorf("%s: sessions (-want +got):\n%s", st.name, diff)
		}
		if diff := cmp.Diff(st.inbox, inbox); diff != "" {
			t.Errorf("%s: inbox (-want +got):\n%s", st.name, diff)
		}
	}
}

func TestTOON(t *testing.T) {
	// Checked by hand against the TOON spec: a tabular array (§9.3), the
	// time quoted for its ":", the empty string quoted, the title with a
	// comma quoted, numbers bare.
	want := `sessions[2]{path,session_id,status,started,ended,model,tokens,title}:
  a.md,s-a,completed,"2026-01-02T03:04:05Z","",m1,42,"One, two"
  b/c.md,s-b,active,"","","",0,plain title`
	got, err := TOON([]store.Session{
		{Path: "a.md", SessionID: "s-a", Status: "completed", Started: "2026-01-02T03:04:05Z", Model: "m1", Tokens: 42, Title: "One, two", SHA256: "x", MTime: 9},
		{Path: "b/c.md", SessionID: "s-b", Status: "active", Title: "plain title"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("TOON (-want +got):\n%s", diff)
	}
	got, err = TOON(nil)
	// An empty array is "key: []" in v4 (§9.1), not the legacy "key[0]:".
	if err != nil || string(got) != "sessions: []" {
		t.Errorf("TOON(nil) = %q, %v, want %q", got, err, "sessions: []")
	}
}

// TestSyncIndexesOneFile checks that Sync indexes one log, leaves the
// other entries alone, follows a change and removes a log that is gone.
func TestSyncIndexesOneFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	write(t, dir, "a.md", doc("s-a", "2026-01-01T00:00:00Z", "A"))
	write(t, dir, "run/b.md", doc("s-b", "2026-01-02T00:00:00Z", "B", "[!error] Broke"))
	if _, err := Update(ctx, db, dir); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "run/c.md", doc("s-c", "2026-01-03T00:00:00Z", "C", "[!task_complete] Done"))
	write(t, dir, "run/b.md", doc("s-b", "2026-01-02T00:00:00Z", "B2"))
	for _, f := range []string{"run/c.md", "run/b.md"} {
		if err := Sync(ctx, db, dir, filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	titles, inbox := state(t, db)
	want := map[string]string{"a.md s-a": "A", "run/b.md s-b": "B2", "run/c.md s-c": "C"}
	if diff := cmp.Diff(want, titles); diff != "" {
		t.Errorf("after Sync (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-c/work/task_complete/Done"}, inbox); diff != "" {
		t.Errorf("inbox after Sync (-want +got):\n%s", diff)
	}
	os.Remove(filepath.Join(dir, "run/c.md"))
	if err := Sync(ctx, db, dir, filepath.Join(dir, "run/c.md")); err != nil {
		t.Fatal(err)
	}
	if titles, _ := state(t, db); len(titles) != 2 {
		t.Errorf("a log that is gone stays indexed: %v", titles)
	}
	write(t, dir, "run/bad.md", "---\ntype: session\n---\n")
	if err := Sync(ctx, db, dir, filepath.Join(dir, "run/bad.md")); err == nil || !strings.Contains(err.Error(), "bad.md") {
		t.Errorf("Sync of a log with problems = %v, want its problems", err)
	}
	if err := Sync(ctx, db, dir, filepath.Join(t.TempDir(), "x.md")); err == nil {
		t.Errorf("Sync of a file outside dir succeeded")
	}
}

// TestInboxLeavesOutAnsweredQuestions checks that a question followed by
// its answer in the same phase, or in a finished session, is not
// actionable, and that an open question, errors and completions are.
func TestInboxLeavesOutAnsweredQuestions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Answered in its phase (as crystallize run records a decision).
	write(t, dir, "answered.md", doc("s-answered", "2026-01-03T00:00:00Z", "A",
		"[!decision_needed] Which auth?", "[!user] Decided `auth`: `JWT` (--decide)", "[!task_complete] Done"))
	// Open: the answer is in another phase's text only.
	write(t, dir, "open.md", doc("s-open", "2026-01-02T00:00:00Z", "O",
		"[!approval_required] Delete 47 files?", "[!error] Broke"))
	// Finished: a completed run asks nothing any more.
	done := strings.Replace(doc("s-done", "2026-01-01T00:00:00Z", "D", "[!decision_needed] Which region?"), "status: active", "status: completed", 1)
	write(t, dir, "done.md", done)
	if _, err := Update(ctx, db, dir); err != nil {
		t.Fatal(err)
	}
	items, err := Inbox(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, it.Session.SessionID+"/"+it.Callout.Type+"/"+Headline(it.Callout))
	}
	want := []string{"s-answered/task_complete/Done", "s-open/approval_required/Delete 47 files?", "s-open/error/Broke"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Inbox (-want +got):\n%s", diff)
	}
}

// TestHeadline checks that a callout in the format's own shape, its
// text in the body, shows its first line of text.
func TestHeadline(t *testing.T) {
	for _, tc := range []struct {
		c    store.Callout
		want string
	}{
		{store.Callout{Title: "Which auth?", Body: "Options: `JWT`"}, "Which auth?"},
		{store.Callout{Body: "\nFirst attempt had a circular reference.\nFixed."}, "First attempt had a circular reference."},
		{store.Callout{Title: "  ", Body: ""}, ""},
	} {
		if got := Headline(tc.c); got != tc.want {
			t.Errorf("Headline(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
