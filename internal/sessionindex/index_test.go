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
