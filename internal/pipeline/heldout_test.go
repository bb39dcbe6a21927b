package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestStreamHeldoutSessionLogLate checks that a held-out directory whose
// agent session logs come after more than a batch of traces hands every
// trace to shadow replay once: the scan hands on full batches before it
// meets the session log, and the whole load that follows must not hand
// them on again, nor list their exclusions twice.
func TestStreamHeldoutSessionLogLate(t *testing.T) {
	dir := t.TempDir()
	c := tracetest.Generate(tracetest.Config{Traces: HeldoutBatch + 150, Seed: 3})
	if err := c.WriteJSONL(filepath.Join(dir, "a.jsonl")); err != nil {
		t.Fatal(err)
	}
	// One record of a Claude Code session saved as a *.json file: a scan knows it
	// for a session log only when it reaches the file.
	sessions := t.TempDir()
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 1, Seed: 1})
	if err := ac.Write(sessions, tracetest.AgentFormats[0]); err != nil {
		t.Fatal(err)
	}
	logs, err := filepath.Glob(filepath.Join(sessions, "*", "*.jsonl"))
	if err != nil || len(logs) == 0 {
		logs, err = filepath.Glob(filepath.Join(sessions, "*.jsonl"))
	}
	if err != nil || len(logs) == 0 {
		t.Fatalf("no session log written under %s: %v", sessions, err)
	}
	log, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(log, []byte("\n"))
	if err := os.WriteFile(filepath.Join(dir, "zz-session.json"), first, 0o644); err != nil {
		t.Fatal(err)
	}
	// The example whose metadata carries a policy violation: excluded.
	var violation []byte
	violation, err = os.ReadFile("../../examples/traces/09-bump-testify-policy-violation.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.json"), violation, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &candidate.Report{}
	seen := map[string]int{}
	total := 0
	err = StreamHeldout(context.Background(), r, HeldoutOptions{Dirs: []string{dir}})(func(ts []*trace.Trace) error {
		for _, tr := range ts {
			seen[tr.ID+"\x00"+tr.Source]++
			total++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range seen {
		if n > 1 {
			t.Fatalf("%q handed on %d times", k, n)
		}
	}
	all, err := LoadHeldout(context.Background(), &candidate.Report{}, HeldoutOptions{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(all) || total <= HeldoutBatch {
		t.Errorf("handed on %d traces, want the %d a whole load screens in (more than a batch)", total, len(all))
	}
	if len(r.ExcludedTraces) != 1 || r.ExcludedTraceCount != 1 {
		t.Errorf("exclusions %d (count %d), want the one trace with a policy violation once", len(r.ExcludedTraces), r.ExcludedTraceCount)
	}
}
