package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// benchSizes are the corpus sizes (traces of ~50 actions) the end-to-end
// benchmarks run on. CRYSTALLIZE_BENCH_TRACES overrides them, e.g.
// "1000,10000,100000"; the 100k corpus takes about 2 GB of disk.
func benchSizes() []int {
	sizes := []int{1000, 10000}
	if s := os.Getenv("CRYSTALLIZE_BENCH_TRACES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	return sizes
}

var corpusMu sync.Mutex

// benchCorpus writes (once, cached in the system temp directory across
// runs) a synthetic corpus of n traces and returns its directory.
func benchCorpus(b *testing.B, n int) string {
	b.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("crystallize-bench-%d-seed1", n))
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	c := tracetest.Generate(tracetest.Config{Traces: n, Seed: 1})
	if err := c.WriteDir(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// peakHeap samples the heap while fn runs and returns the largest
// in-use heap seen, in bytes.
func peakHeap(fn func()) uint64 {
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak
}

// BenchmarkLoad only reads and decodes the corpus: the baseline that
// BenchmarkMine is measured against.
func BenchmarkLoad(b *testing.B) {
	for _, n := range benchSizes() {
		dir := benchCorpus(b, n)
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				runtime.GC()
				peak = max(peak, peakHeap(func() {
					if _, err := source.Load(context.Background(), dir, source.Options{}); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// BenchmarkMine runs "crystallize mine" end to end on the same corpus:
// load, mine, generate every candidate's workflow, write the report.
func BenchmarkMine(b *testing.B) {
	for _, n := range benchSizes() {
		dir := benchCorpus(b, n)
		out := b.TempDir()
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
				if k == "SOURCE_DATE_EPOCH" {
					return sourceDateEpoch
				}
				return ""
			}}
			args := []string{"mine", "--from", dir, "--min-examples", "3",
				"--out", filepath.Join(out, "w.star"), "--out-dir", filepath.Join(out, "all"),
				"--report", filepath.Join(out, "r.json")}
			var peak uint64
			for b.Loop() {
				runtime.GC()
				peak = max(peak, peakHeap(func() {
					if code := run(context.Background(), e, args); code != 0 {
						b.Fatalf("exit %d", code)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
