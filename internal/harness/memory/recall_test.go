package memory

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMatchPath(t *testing.T) {
	for _, tc := range []struct {
		glob, path string
		want       bool
	}{
		{"db/migrations/**", "db/migrations/001_init.sql", true},
		{"db/migrations/**", "db/migrations/v2/001.sql", true},
		{"db/migrations", "db/migrations/001_init.sql", true},
		{"db/migrations", "db/migrations_old/001.sql", false},
		{"db/*.sql", "db/a.sql", true},
		{"db/*.sql", "db/x/a.sql", false},
		{"**/*.sql", "a.sql", true},
		{"**/*.sql", "x/y/a.sql", true},
		{"**/*.sql", "x/y/a.go", false},
		{"cmd/**/main.go", "cmd/main.go", true},
		{"cmd/**/main.go", "cmd/a/b/main.go", true},
		{"go.mod", "go.mod", true},
		{"go.mod", "sub/go.mod", false},
		{"web/**", "website/index.html", false},
	} {
		if got := MatchPath(tc.glob, tc.path); got != tc.want {
			t.Errorf("MatchPath(%q, %q) = %t, want %t", tc.glob, tc.path, got, tc.want)
		}
	}
}

// Many "**" cost no more than one: the matcher does not backtrack.
func TestMatchPathManyStars(t *testing.T) {
	glob := strings.Repeat("**/", 60) + "x"
	p := strings.Repeat("a/", 60) + "b"
	done := make(chan bool)
	go func() { done <- MatchPath(glob, p) }()
	select {
	case got := <-done:
		if got {
			t.Errorf("MatchPath matched %q", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("MatchPath with 60 \"**\" did not finish in 5s")
	}
}

func TestRecallShowsRelevantHidesUnrelated(t *testing.T) {
	vet := mustNew(t, "go vet here flags shadowed err: fix it", []string{"gate:go-vet"}, "gate:go-vet", t0)
	mig := mustNew(t, "run every migration down then up", []string{"path:db/migrations/**", "family:database"}, "", t0)
	newer := mustNew(t, "the schema file is generated", []string{"path:db/**"}, "", t0.Add(time.Hour))
	web := mustNew(t, "screenshots differ on fonts", []string{"family:web", "kit:web-app", "path:web/**"}, "", t0.Add(2*time.Hour))
	subjects := []Subject{
		{ScopePath, "db/migrations/002_add.sql", "changed file"},
		{ScopePath, "cmd/svc/main.go", "changed file"},
		{ScopeGate, "go-vet", "manifest gate"},
		{ScopeGate, "go-test", "manifest gate"},
		{ScopeFamily, "database", "risk family"},
		{ScopeKit, "go-service", "manifest kit"},
		{ScopeStack, "go", "stack"},
	}
	got := Recall([]Entry{web, vet, newer, mig}, subjects)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	// mig matches two scope entries and ranks first; newer and vet match
	// one each, newest first; web matches nothing and is left out.
	if diff := cmp.Diff([]string{mig.ID, newer.ID, vet.ID}, ids); diff != "" {
		t.Errorf("Recall order (-want +got):\n%s", diff)
	}
	wantMig := []Match{
		{Scope: "family:database", Matched: "risk family database"},
		{Scope: "path:db/migrations/**", Matched: "changed file db/migrations/002_add.sql"},
	}
	if diff := cmp.Diff(wantMig, got[0].Matches); diff != "" {
		t.Errorf("matches of the migration memory (-want +got):\n%s", diff)
	}
	if got := Recall([]Entry{web}, subjects); len(got) != 0 {
		t.Errorf("Recall of an unrelated memory = %+v, want none", got)
	}
	// The kinds are not confused: a gate name is not a stack.
	stackOnly := mustNew(t, "x", []string{"gate:go"}, "", t0)
	if got := Recall([]Entry{stackOnly}, subjects); len(got) != 0 {
		t.Errorf("gate:go matched the stack go: %+v", got)
	}
}
