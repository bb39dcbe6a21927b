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

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/source"
	"github.com/crystallize-dev/crystallize/internal/trace"
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
// load, mine, generate every candidate's workflow, write the report; with
// the corpus kept decoded (passes=1) and read back (passes=2).
func BenchmarkMine(b *testing.B) {
	for _, n := range benchSizes() {
		dir := benchCorpus(b, n)
		out := b.TempDir()
		for _, passes := range []string{pipeline.PassesOne, pipeline.PassesTwo} {
			b.Run(fmt.Sprintf("traces=%d/passes=%s", n, passes), func(b *testing.B) {
				e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
					if k == "SOURCE_DATE_EPOCH" {
						return sourceDateEpoch
					}
					return ""
				}}
				args := []string{"mine", "--from", dir, "--min-examples", "3", "--passes", passes,
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
}

// pass1 runs the first pass of a two-pass mining run over dir: decode,
// summarize, intern, keep the locations of the eligible traces.
// pass1 is the first pass of a two-pass run over dir: skimming the
// traces as mine --passes 2 does, or, with decode, decoding each whole.
func pass1(b *testing.B, dir string, decode bool) (*mine.Scan, *source.ScanResult, []source.Location) {
	s, err := mine.NewScan(mine.Options{MinExamples: 3})
	if err != nil {
		b.Fatal(err)
	}
	sum := source.Summarizer[mine.Summary]{Trace: mine.Summarize}
	if !decode {
		sum.Skim = mine.SummarizeSkim
	}
	var locs []source.Location
	res, err := source.ScanWith(context.Background(), dir, source.Options{}, sum, func(loc source.Location, sum mine.Summary) error {
		if s.Add(sum) >= 0 {
			locs = append(locs, loc)
		}
		return nil
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return s, res, locs
}

// BenchmarkScan is the first pass of a two-pass run on the BenchmarkLoad
// corpus: read=skim as mine --passes 2 reads it (trace.Parser.Skim),
// read=decode with every trace decoded whole, BenchmarkLoad's decoding
// without keeping the traces.
func BenchmarkScan(b *testing.B) {
	for _, n := range benchSizes() {
		dir := benchCorpus(b, n)
		for _, decode := range []bool{true, false} {
			read := "skim"
			if decode {
				read = "decode"
			}
			b.Run(fmt.Sprintf("traces=%d/read=%s", n, read), func(b *testing.B) {
				var peak uint64
				var cpu time.Duration
				for b.Loop() {
					runtime.GC()
					start := processCPU()
					peak = max(peak, peakHeap(func() { pass1(b, dir, decode) }))
					cpu += processCPU() - start
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				// On a shared machine CPU time is steadier than wall time.
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// BenchmarkStages times the stages of a mining run after the first pass
// (BenchmarkScan) outside internal/mine (whose BenchmarkStage times
// interning, the suffix array and building), each on its own, so that a
// regression shows in the stage that caused it: reread (reading back the
// examples the second pass read), shadow (replay.Apply against the
// report's examples) and encode (report.json).
func BenchmarkStages(b *testing.B) {
	for _, n := range benchSizes() {
		dir := benchCorpus(b, n)
		ctx := context.Background()
		s, res, locs := pass1(b, dir, false)
		var reread []source.Location
		fetch := func(ctx context.Context, idx []int32) ([]*trace.Trace, error) {
			want := make([]source.Location, len(idx))
			for i, q := range idx {
				want[i] = locs[q]
			}
			reread = append(reread, want...)
			return res.Catalog.ReadAt(ctx, want)
		}
		report, err := s.Mine(ctx, fetch)
		if err != nil {
			b.Fatal(err)
		}
		sources, err := s.Sources(ctx, report)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("traces=%d/stage=reread", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := res.Catalog.ReadAt(ctx, reread); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(reread)), "traces")
		})
		b.Run(fmt.Sprintf("traces=%d/stage=shadow", n), func(b *testing.B) {
			for b.Loop() {
				r := *report
				replay.Apply(&r, sources, nil)
			}
		})
		replay.Apply(report, sources, nil)
		b.Run(fmt.Sprintf("traces=%d/stage=encode", n), func(b *testing.B) {
			var size int
			for b.Loop() {
				data, err := report.Encode()
				if err != nil {
					b.Fatal(err)
				}
				size = len(data)
			}
			b.ReportMetric(float64(size)/(1<<20), "report-MB")
		})
	}
}
