package source

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestRereadSpool: a load with Options.Summarize reads its sessions back
// from its spool, not from their logs: once the logs are gone, Reread
// still returns every session as the whole load decoded it, after
// ReleaseThin too, for sessions of every agent.
func TestRereadSpool(t *testing.T) {
	ctx := context.Background()
	for _, format := range []tracetest.AgentFormat{tracetest.FormatClaude, tracetest.FormatCodex} {
		t.Run(string(format), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "logs")
			if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: 5, Calls: 15}).Write(dir, format); err != nil {
				t.Fatal(err)
			}
			whole, err := Load(ctx, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			thin, err := Load(ctx, dir, Options{Summarize: func(tr *trace.Trace) any { return len(tr.Actions) }})
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			thin.ReleaseThin()
			if thin.Summaries != nil {
				t.Errorf("ReleaseThin kept %d summaries", len(thin.Summaries))
			}
			idx := make([]int, len(thin.Traces))
			for i := range idx {
				idx[len(idx)-1-i] = i // in another order than the load's
			}
			got, err := thin.Reread(ctx, idx)
			if err != nil {
				t.Fatalf("Reread with the logs gone: %v", err)
			}
			for k, i := range idx {
				if len(thin.Traces[i].Actions) != 0 {
					t.Errorf("thin trace %s keeps %d actions after ReleaseThin", thin.Traces[i].ID, len(thin.Traces[i].Actions))
				}
				if !reflect.DeepEqual(got[k], whole.Traces[i]) {
					t.Errorf("session %s read back differs from the whole load's", whole.Traces[i].ID)
				}
			}
		})
	}
}
