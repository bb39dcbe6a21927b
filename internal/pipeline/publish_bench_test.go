package pipeline

import (
	"context"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// BenchmarkPublishExamples publishes a two-pass mining run of 4,000
// generated traces (eight candidates of 200 examples each, about 10 MiB
// decoded)
// with an example cache of 4,096 actions (about 80 traces), shadow
// replay taking each candidate's examples whole (Outputs.Examples) or in
// batches the cache holds (Outputs.ExampleBatches). It reports the peak
// of the Go heap while Publish runs, sampled every millisecond, above the
// live heap before it (the report and the first pass's symbols), as
// peak-MiB-above-live. The collector runs at GOGC=10 meanwhile, so that
// the heap follows what is live rather than when garbage is collected.
func BenchmarkPublishExamples(b *testing.B) {
	dir := b.TempDir()
	if err := tracetest.Generate(tracetest.Config{Traces: 4000, Seed: 1}).WriteJSONL(filepath.Join(dir, "corpus.jsonl")); err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	for _, mode := range []string{"whole", "batches"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			var peak float64
			for range b.N {
				b.StopTimer()
				c, err := ReadCorpus(ctx, CorpusOptions{Dir: dir, Passes: PassesTwo,
					Mine: mine.Options{MinExamples: 3, GeneratedAt: "2026-01-01T00:00:00Z", ExampleCache: 1 << 12}})
				if err != nil {
					b.Fatal(err)
				}
				o := Outputs{Out: filepath.Join(out, "w.star"), Report: filepath.Join(out, "report.json"), Examples: c.Examples}
				if mode == "batches" {
					o.ExampleBatches = c.ExampleBatches
				}
				runtime.GC()
				live := heapBytes()
				gc := debug.SetGCPercent(10)
				stop := sampleHeap()
				b.StartTimer()
				if _, err := Publish(ctx, c.Report, c.Sources, nil, o); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				peak = max(peak, float64(stop()-live)/(1<<20))
				debug.SetGCPercent(gc)
				b.StartTimer()
			}
			b.ReportMetric(peak, "peak-MiB-above-live")
		})
	}
}

// heapBytes is the Go heap's object bytes, live and not yet swept.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// sampleHeap samples heapBytes every millisecond until the returned
// function is called, which returns the highest sample.
func sampleHeap() (stop func() uint64) {
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		peak uint64
	)
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			peak = max(peak, heapBytes())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return max(peak, heapBytes())
	}
}
