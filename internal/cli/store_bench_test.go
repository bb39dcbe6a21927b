package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// incrementalCorpus writes (once, cached in the system temp directory)
// a corpus of n traces in base and the n/100 traces that follow it, of
// the same generated corpus, in more.
func incrementalCorpus(b *testing.B, n int, support float64) (base, more string) {
	b.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("crystallize-bench-incremental-%d-support%g-seed1", n, support))
	base, more = filepath.Join(dir, "base"), filepath.Join(dir, "more")
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return base, more
	}
	os.RemoveAll(dir)
	c := tracetest.Generate(tracetest.Config{Traces: n + n/100, Seed: 1, Support: support})
	all := c.Traces
	c.Traces = all[:n]
	if err := c.WriteDir(base); err != nil {
		b.Fatal(err)
	}
	c.Traces = all[n:]
	if err := c.WriteDir(more); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return base, more
}

// BenchmarkIncrementalMine measures the trace store's promise: import n
// traces and mine them, add 1 % more, and mine again. Each iteration
// starts from an empty store and a copy of the base corpus, and reports
// in seconds of wall clock (and, as *-cpu-s, of the process's CPU time,
// steadier on a shared machine), one iteration:
//
//   - from-s: mine --from DIR --passes 2 on the grown corpus, the cost
//     without a store (a cold mine of every trace);
//   - first-s: import --store of the n traces plus mine --store, the
//     first mine of a store;
//   - second-s: import --store of the grown directory (only the new
//     traces are decoded) plus mine --store, the mine after adding 1 %;
//   - second/first and second/from: the ratios.
//
// Run it with -benchtime=1x; CRYSTALLIZE_BENCH_TRACES picks the sizes.
//
// Mining again decodes the examples of every candidate it builds, so
// its cost follows the share of traces that are examples: the generated
// corpora plant 8 procedures, each in a share "support" of the traces,
// 0.05 by default (40 % of the traces are examples of something);
// CRYSTALLIZE_BENCH_SUPPORT sets another share, e.g. 0.005.
func BenchmarkIncrementalMine(b *testing.B) {
	support := 0.05
	if s := os.Getenv("CRYSTALLIZE_BENCH_SUPPORT"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 || v > 1 {
			b.Fatalf("CRYSTALLIZE_BENCH_SUPPORT=%q: want a share between 0 and 1", s)
		}
		support = v
	}
	for _, n := range benchSizes() {
		base, more := incrementalCorpus(b, n, support)
		b.Run(fmt.Sprintf("traces=%d/support=%g", n, support), func(b *testing.B) {
			e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
				if k == "SOURCE_DATE_EPOCH" {
					return sourceDateEpoch
				}
				return ""
			}}
			var from, first, second, fromCPU, firstCPU, secondCPU time.Duration
			for b.Loop() {
				work := b.TempDir()
				corpus, state, out := filepath.Join(work, "corpus"), filepath.Join(work, "state"), filepath.Join(work, "out")
				copyTree(b, base, corpus)
				mineArgs := []string{"--min-examples", "3", "--report", filepath.Join(out, "r.json"), "--out-dir", filepath.Join(out, "all")}
				timed := func(args ...[]string) (time.Duration, time.Duration) {
					runtime.GC()
					start, cpu := time.Now(), processCPU()
					for _, a := range args {
						if code := run(context.Background(), e, a); code != 0 {
							b.Fatalf("%v: exit %d", a, code)
						}
					}
					return time.Since(start), processCPU() - cpu
				}
				first, firstCPU = timed([]string{"import", "--from", corpus, "--store", "--state-dir", state},
					append([]string{"mine", "--store", "--state-dir", state}, mineArgs...))
				copyTree(b, more, corpus)
				second, secondCPU = timed([]string{"import", "--from", corpus, "--store", "--state-dir", state},
					append([]string{"mine", "--store", "--state-dir", state}, mineArgs...))
				from, fromCPU = timed(append([]string{"mine", "--from", corpus, "--passes", "2"}, mineArgs...))
			}
			b.ReportMetric(from.Seconds(), "from-s")
			b.ReportMetric(first.Seconds(), "first-s")
			b.ReportMetric(second.Seconds(), "second-s")
			b.ReportMetric(second.Seconds()/first.Seconds(), "second/first")
			b.ReportMetric(second.Seconds()/from.Seconds(), "second/from")
			b.ReportMetric(fromCPU.Seconds(), "from-cpu-s")
			b.ReportMetric(firstCPU.Seconds(), "first-cpu-s")
			b.ReportMetric(secondCPU.Seconds(), "second-cpu-s")
			if firstCPU > 0 {
				b.ReportMetric(secondCPU.Seconds()/firstCPU.Seconds(), "second/first-cpu")
				b.ReportMetric(secondCPU.Seconds()/fromCPU.Seconds(), "second/from-cpu")
			}
		})
	}
}

// copyTree copies the files of src (one level) into dst, as hard links
// when it can: the corpus is read, never written.
func copyTree(b *testing.B, src, dst string) {
	b.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		b.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range entries {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if os.Link(s, d) == nil {
			continue
		}
		data, err := os.ReadFile(s)
		if err == nil {
			err = os.WriteFile(d, data, 0o644)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}
