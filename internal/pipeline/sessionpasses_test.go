package pipeline

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestSessionsReadBack: with --passes 2, a directory of agent session
// logs held out from (auto) is mined from the sessions' summaries, and
// only the sessions a candidate is built from and the held-out ones are
// decoded a second time; the report, and the held-out sessions, are
// those of the whole load (--passes 1, and the default).
func TestSessionsReadBack(t *testing.T) {
	dir := t.TempDir()
	if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 40, Seed: 3, Calls: 20}).Write(dir, tracetest.FormatClaude); err != nil {
		t.Fatal(err)
	}
	read := func(passes string) (*Corpus, int) {
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
	two, reread := read(PassesTwo)
	one, _ := read(PassesOne)
	auto, _ := read(PassesAuto)
	if two.Examples == nil || len(two.Sources) != 0 {
		t.Fatalf("passes 2: Examples set %v, %d sources kept; want the sessions read back and none kept", two.Examples != nil, len(two.Sources))
	}
	if auto.Examples != nil || len(auto.Sources) == 0 {
		t.Errorf("auto: Examples set %v, %d sources kept; want the sessions loaded whole", auto.Examples != nil, len(auto.Sources))
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
	for name, c := range map[string]*Corpus{"passes 1": one, "auto": auto} {
		if got, want := reportJSON(t, two), reportJSON(t, c); got != want {
			t.Errorf("passes 2 and %s reports differ:\n%s\n%s", name, got, want)
		}
		if two.Heldout != nil || c.HeldoutBatches != nil {
			t.Errorf("held-out sessions: passes 2 keeps %d, %s streams %v; want them read back and kept", len(two.Heldout), name, c.HeldoutBatches != nil)
		}
		if !reflect.DeepEqual(heldout, c.Heldout) {
			t.Errorf("passes 2 and %s hold out different sessions: %v, %v", name, ids(heldout), ids(c.Heldout))
		}
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
