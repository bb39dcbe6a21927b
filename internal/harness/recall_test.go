package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/harness/memory"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// recallRepo is a Go service with migrations, one of them changed in
// the work tree.
func recallRepo(t *testing.T) string {
	t.Helper()
	dir := makeRepo(t, repo{name: "recall", tracked: map[string]string{
		"go.mod":                         "module example.com/recall\n\ngo 1.22\n",
		"cmd/recall/main.go":             "package main\n\nfunc main() {}\n",
		"db/migrations/001_init.sql":     "CREATE TABLE users (id integer primary key);\n",
		"web/ignored-by-this-plan.txt":   "not a web app\n",
		"docs/why-memories-matter.md":    "# notes\n",
		"internal/recall/recall.go":      "package recall\n",
		"internal/recall/recall_test.go": "package recall\n",
	}})
	writeTree(t, dir, map[string]string{"db/migrations/002_email.sql": "ALTER TABLE users ADD email text;\n"})
	return dir
}

func remember(t *testing.T, root, text string, scope ...string) memory.Entry {
	t.Helper()
	e, err := memory.New(text, scope, "person", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := memory.Add(root, e); err != nil {
		t.Fatal(err)
	}
	return e
}

func planIDs(t *testing.T, ctx context.Context, root string, db *store.DB) []string {
	t.Helper()
	p, err := ProfileStored(ctx, root, db, time.Unix(0, 0), false)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := PlanStored(ctx, root, db, p)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, r := range pl.Memories {
		ids = append(ids, r.ID)
	}
	return ids
}

// The plan recalls the memories whose scope it touches, the best
// matched first, and not the others.
func TestPlanRecallsRelevantMemories(t *testing.T) {
	ctx := context.Background()
	root := recallRepo(t)
	migrations := remember(t, root, "run every migration down, then up again", "path:db/migrations/**", "family:database")
	goTest := remember(t, root, "go test needs -race here: the cache hides data races", "gate:go-test")
	web := remember(t, root, "screenshots differ with the fonts installed", "family:web", "kit:web-app")
	windows := remember(t, root, "the service only builds on windows with cgo off", "gate:windows-build")

	db, err := store.Open(ctx, filepath.Join(root, ".crystallize", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := ProfileStored(ctx, root, db, time.Unix(0, 0), false)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := PlanStored(ctx, root, db, p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range pl.Memories {
		ids = append(ids, r.ID)
	}
	if want := []string{migrations.ID, goTest.ID}; !slices.Equal(ids, want) {
		t.Fatalf("recalled %v, want %v (migrations, matched twice, then go-test)\nplan memories: %+v", ids, want, pl.Memories)
	}
	for _, hidden := range []memory.Entry{web, windows} {
		if slices.Contains(ids, hidden.ID) {
			t.Errorf("recalled %q, which the plan does not touch", hidden.Text)
		}
	}
	got := pl.Memories[0].Matches
	want := []memory.Match{
		{Scope: "family:database", Matched: "risk family database"},
		{Scope: "path:db/migrations/**", Matched: "untracked file db/migrations/002_email.sql"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("matches = %+v, want %+v", got, want)
	}
	if m := pl.Memories[1].Matches; len(m) != 1 || m[0].Matched != "kit go-service gate go-test" {
		t.Errorf("go-test matches = %+v, want the proposed kit's gate", m)
	}
}

// Memories live in their own file: nothing of them is in the ledger,
// and deleting the ledger loses none of them.
func TestMemoriesOutliveTheLedger(t *testing.T) {
	ctx := context.Background()
	root := recallRepo(t)
	e := remember(t, root, "a lesson kept apart from the ledger", "stack:go")
	dbPath := filepath.Join(root, ".crystallize", "state.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if ids := planIDs(t, ctx, root, db); !slices.Equal(ids, []string{e.ID}) {
		t.Fatalf("recalled %v, want %s", ids, e.ID)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(dbPath + "*")
	if len(files) == 0 {
		t.Fatal("no ledger written")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{e.ID, e.Text} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q: memories must stay out of the ledger", filepath.Base(f), s)
			}
		}
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	db, err = store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if ids := planIDs(t, ctx, root, db); !slices.Equal(ids, []string{e.ID}) {
		t.Errorf("after deleting the ledger the plan recalls %v, want %s", ids, e.ID)
	}
}

// A bad memory file fails the plan with the file and line, rather than
// a plan that silently recalls nothing.
func TestPlanRefusesBadMemoryFile(t *testing.T) {
	ctx := context.Background()
	root := recallRepo(t)
	remember(t, root, "a good lesson", "stack:go")
	f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(memory.File)), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"mem_x","text":"<b>loud</b>","scope":["stack:go"],"source":"person","created":"2026-11-01T00:00:00Z","pinned":true}` + "\n")
	f.Close()
	db, err := store.Open(ctx, filepath.Join(root, ".crystallize", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := ProfileStored(ctx, root, db, time.Unix(0, 0), false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = PlanStored(ctx, root, db, p)
	if err == nil || !strings.Contains(err.Error(), "harness/memory.jsonl:2: $.pinned: unknown field") {
		t.Errorf("PlanStored with a bad memory file = %v, want harness/memory.jsonl:2: $.pinned: unknown field", err)
	}
}

func TestProposeMemories(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	rep := &RunReport{Gates: []GateResult{
		{ID: "go-vet", Blocks: true, ExitCode: 3, Tail: "ok\nvet: shadowed err\n"},
		{ID: "go-test", Blocks: true, Passed: true},
		{ID: "lint", Blocks: false, ExitCode: 1, Tail: "style\n"},
		{ID: "web", Blocks: true, ExitCode: 77, NotEvidence: true},
		{ID: "slow", Blocks: true, TimedOut: true, ExitCode: -1, Tail: "\x1b[31mred <b>bold</b>\n"},
		{ID: "known", Blocks: true, ExitCode: 1, Tail: "again\n"},
	}}
	known := []memory.Entry{{ID: "mem_x", Text: "known fails on Mondays", Scope: []string{"gate:known"}, Source: "person", Created: "2026-10-01T00:00:00Z"}}
	got := ProposeMemories(rep, known, now)
	var texts []string
	for _, e := range got {
		texts = append(texts, e.Text+" | "+strings.Join(e.Scope, ",")+" | "+e.Source)
	}
	want := []string{
		"gate go-vet failed (exit 3): vet: shadowed err | gate:go-vet | gate:go-vet",
		// Output a memory may not hold is left out, not copied.
		"gate slow failed (timed out) | gate:slow | gate:slow",
	}
	if !slices.Equal(texts, want) {
		t.Errorf("ProposeMemories =\n%s\nwant\n%s", strings.Join(texts, "\n"), strings.Join(want, "\n"))
	}
}
