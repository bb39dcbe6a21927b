package pipeline

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// BenchmarkSessionCorpus reads and mines 1,000 generated Claude Code
// sessions (about 100 MiB of logs) held out from (auto) and reads what
// shadow replay reads of them (the held-out sessions, every candidate's
// examples), whole (--passes 1) and in two passes from the load's spool
// (auto, the default). It reports the peak of the Go heap, sampled every
// millisecond with the collector at GOGC=10 so that the heap follows
// what is live, as peak-live-MiB: the whole load's grows with the
// corpus, the two passes' with its actions' summaries. The report is the
// same (TestSessionsReadBack). cmd: go test ./internal/pipeline -run '^$'
// -bench SessionCorpus -benchtime 1x; for the 10,000 sessions of the
// documented measurement, run crystallize mine on the corpus of
// internal/tools/gencorpus under /usr/bin/time -v.
func BenchmarkSessionCorpus(b *testing.B) {
	dir := b.TempDir()
	if err := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 1000, Seed: 1}).Write(dir, tracetest.FormatClaude); err != nil {
		b.Fatal(err)
	}
	for _, passes := range []string{PassesOne, PassesAuto} {
		b.Run("passes="+passes, func(b *testing.B) {
			ctx := context.Background()
			var peak float64
			for range b.N {
				runtime.GC()
				gc := debug.SetGCPercent(10)
				stop := sampleHeap()
				c, err := ReadCorpus(ctx, CorpusOptions{Dir: dir, Passes: passes, Holdout: HoldoutAuto,
					Mine: mine.Options{GeneratedAt: "2026-01-01T00:00:00Z"}})
				if err != nil {
					b.Fatal(err)
				}
				if c.HeldoutBatches != nil {
					if err := c.HeldoutBatches(func([]*trace.Trace) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
				if c.Examples != nil {
					for i := range c.Report.Candidates {
						if _, err := c.Examples(ctx, &c.Report.Candidates[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				peak = max(peak, float64(stop())/(1<<20))
				debug.SetGCPercent(gc)
				runtime.KeepAlive(c)
			}
			b.ReportMetric(peak, "peak-live-MiB")
		})
	}
}
