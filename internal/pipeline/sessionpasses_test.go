package pipeline

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestSessionsReadBack: by default and with --passes 2, a directory of
// agent session logs held out from (auto) is mined from the sessions'
// summaries, and only the sessions a candidate is built from and the
// held-out ones are read a second time; the report, the held-out sessions
// and the examples are those of the whole load (--passes 1).
func TestSessionsReadBack(t *testing.T) {
	dir := t.TempDir()
	if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 40, Seed: 3, Calls: 20}).Write(dir, tracetest.FormatClaude); err != nil {
		t.Fatal(err)
	}
	read := func(t *testing.T, passes string) (*Corpus, int) {
		t.Helper()
		reread := 0
		c, err := ReadCorpus(context.Background(), CorpusOptions{Dir: dir, Passes: passes, Holdout: HoldoutAuto,
			Mine:     mine.Options{GeneratedAt: "2000-01-01T00:00:00Z"},
			Progress: Progress{Reread: func(n int) { reread += n }}})
		if err != nil {
			t.Fatal(err)
		}
		return c, reread
	}
	one, _ := read(t, PassesOne)
	if one.Examples != nil || len(one.Sources) == 0 {
		t.Fatalf("passes 1: Examples set %v, %d sources kept; want the sessions loaded whole", one.Examples != nil, len(one.Sources))
	}
	for _, passes := range []string{PassesTwo, PassesAuto} {
		t.Run("passes "+passes, func(t *testing.T) {
			two, reread := read(t, passes)
			checkReadBack(t, one, two, reread)
		})
	}
}

// checkReadBack checks that two, read in two passes with reread traces
// read back, found what one, the whole load, found.
func checkReadBack(t *testing.T, one, two *Corpus, reread int) {
	t.Helper()
	if two.Examples == nil || len(two.Sources) != 0 {
		t.Fatalf("Examples set %v, %d sources kept; want the sessions read back and none kept", two.Examples != nil, len(two.Sources))
	}
	if len(two.Report.Candidates) == 0 || two.Report.Holdout == nil {
		t.Fatalf("passes 2: %d candidates, hold-out %v; want both", len(two.Report.Candidates), two.Report.Holdout)
	}
	eligible := two.Report.Mining.EligibleTraces
	if reread == 0 || reread >= eligible {
		t.Errorf("passes 2 read %d of %d mined sessions back; want only the examples", reread, eligible)
	}
	var heldout []*trace.Trace
	if two.HeldoutBatches == nil {
		t.Fatal("passes 2 streams no held-out sessions")
	}
	err := two.HeldoutBatches(func(ts []*trace.Trace) error { heldout = append(heldout, ts...); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := reportJSON(t, two), reportJSON(t, one); got != want {
		t.Errorf("reports of two passes and of one differ:\n%s\n%s", got, want)
	}
	if two.Heldout != nil || one.HeldoutBatches != nil {
		t.Errorf("held-out sessions: two passes keep %d, one streams %v; want them read back and kept", len(two.Heldout), one.HeldoutBatches != nil)
	}
	if !reflect.DeepEqual(heldout, one.Heldout) {
		t.Errorf("two passes and one hold out different sessions: %v, %v", ids(heldout), ids(one.Heldout))
	}
	// A candidate's examples read back are the sessions of the whole load.
	byID := map[string]*trace.Trace{}
	for _, tr := range one.Sources {
		byID[tr.ID] = tr
	}
	for i := range two.Report.Candidates {
		cand := &two.Report.Candidates[i]
		ex, err := two.Examples(context.Background(), cand)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range ex {
			if !reflect.DeepEqual(tr, byID[tr.ID]) {
				t.Errorf("candidate %s: example %s read back differs from the whole load's", cand.ID, tr.ID)
			}
		}
	}
}

func reportJSON(t *testing.T, c *Corpus) string {
	t.Helper()
	b, err := json.MarshalIndent(c.Report, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLimitSessionMemory: a run reading agent sessions in two passes sets
// the memory limit sized to its input and lets the heap grow to it
// (SessionGCPercent), unless the user chose a collector's percent (GOGC);
// LimitMemory restores both.
func TestLimitSessionMemory(t *testing.T) {
	for _, user := range []int{100, 50} {
		old := debug.SetGCPercent(user)
		before := debug.SetMemoryLimit(-1)
		restore := LimitMemory()
		limitSessionMemory(1 << 30)
		gotLimit, gotPercent := debug.SetMemoryLimit(-1), debug.SetGCPercent(user)
		restore()
		afterLimit, afterPercent := debug.SetMemoryLimit(-1), debug.SetGCPercent(old)
		wantPercent := SessionGCPercent
		if user != 100 {
			wantPercent = user
		}
		if gotLimit != SessionMemoryLimit(1<<30) || gotPercent != wantPercent {
			t.Errorf("GOGC=%d: limit %d, percent %d; want %d, %d", user, gotLimit, gotPercent, SessionMemoryLimit(1<<30), wantPercent)
		}
		if afterLimit != before || afterPercent != user {
			t.Errorf("GOGC=%d: restored limit %d, percent %d; want %d, %d", user, afterLimit, afterPercent, before, user)
		}
	}
}
