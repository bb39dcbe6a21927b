package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// incrementalCorpus writes (once, cached in the system temp directory)
// a corpus of n traces in base and the n/100 traces that follow it, of
// the same generated corpus, in more.
func incrementalCorpus(b *testing.B, n int) (base, more string) {
	b.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("crystallize-bench-incremental-%d-seed1", n))
	base, more = filepath.Join(dir, "base"), filepath.Join(dir, "more")
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return base, more
	}
	os.RemoveAll(dir)
	c := tracetest.Generate(tracetest.Config{Traces: n + n/100, Seed: 1})
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
// in seconds (wall clock, one iteration):
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
func BenchmarkIncrementalMine(b *testing.B) {
	for _, n := range benchSizes() {
		base, more := incrementalCorpus(b, n)
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
				if k == "SOURCE_DATE_EPOCH" {
					return sourceDateEpoch
				}
				return ""
			}}
			var from, first, second time.Duration
			for b.Loop() {
				work := b.TempDir()
				corpus, state, out := filepath.Join(work, "corpus"), filepath.Join(work, "state"), filepath.Join(work, "out")
				copyTree(b, base, corpus)
				mineArgs := []string{"--min-examples", "3", "--report", filepath.Join(out, "r.json"), "--out-dir", filepath.Join(out, "all")}
				timed := func(args ...[]string) time.Duration {
					runtime.GC()
					start := time.Now()
					for _, a := range args {
						if code := run(context.Background(), e, a); code != 0 {
							b.Fatalf("%v: exit %d", a, code)
						}
					}
					return time.Since(start)
				}
				first = timed([]string{"import", "--from", corpus, "--store", "--state-dir", state},
					append([]string{"mine", "--store", "--state-dir", state}, mineArgs...))
				copyTree(b, more, corpus)
				second = timed([]string{"import", "--from", corpus, "--store", "--state-dir", state},
					append([]string{"mine", "--store", "--state-dir", state}, mineArgs...))
				from = timed(append([]string{"mine", "--from", corpus, "--passes", "2"}, mineArgs...))
			}
			b.ReportMetric(from.Seconds(), "from-s")
			b.ReportMetric(first.Seconds(), "first-s")
			b.ReportMetric(second.Seconds(), "second-s")
			b.ReportMetric(second.Seconds()/first.Seconds(), "second/first")
			b.ReportMetric(second.Seconds()/from.Seconds(), "second/from")
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
