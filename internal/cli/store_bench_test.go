package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/tracestore"
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
// seconds of wall clock and, as *-cpu-s, of the process's CPU time
// (steadier on a shared machine), of one iteration:
//
//   - import: import --store of the n traces (every one decoded);
//   - mine: mine --store of them;
//   - add: import --store of the grown directory (only the new traces
//     are read: the others' files are unchanged since the import);
//   - remine: mine --store of the grown store;
//   - from: mine --from DIR on the grown directory, what a mine costs
//     without the store, with the passes it chooses (two);
//   - second/first: (add + remine) / (import + mine), the store's second
//     mine against its first; second/from: (add + remine) / from, the
//     store's second mine against a mine without the store, which is the
//     honest measure of what the store saves (import costs more than a
//     mine's decode, so it flatters second/first); and remine/from.
//
// Run it with -benchtime=1x; CRYSTALLIZE_BENCH_TRACES picks the sizes.
// CRYSTALLIZE_BENCH_FROM=0 leaves out the mine --from phase (and the
// ratios against it), which at 100,000 traces costs about as much as the
// import. CRYSTALLIZE_BENCH_PROFILE=DIR writes a CPU profile of each phase,
// DIR/<phase>.pprof, so that each can be read on its own (a -cpuprofile
// of the benchmark mixes them).
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
			type phase struct {
				wall, cpu time.Duration
				decoded   int64 // stored traces read back
			}
			var imp, mine, add, remine, from phase
			profiles := os.Getenv("CRYSTALLIZE_BENCH_PROFILE")
			skipFrom := os.Getenv("CRYSTALLIZE_BENCH_FROM") == "0"
			for b.Loop() {
				work := b.TempDir()
				corpus, state, out := filepath.Join(work, "corpus"), filepath.Join(work, "state"), filepath.Join(work, "out")
				copyTree(b, base, corpus)
				mineArgs := []string{"--min-examples", "3", "--report", filepath.Join(out, "r.json"), "--out-dir", filepath.Join(out, "all")}
				timed := func(name string, args ...string) phase {
					runtime.GC()
					if profiles != "" {
						stop := profilePhase(b, filepath.Join(profiles, name+".pprof"))
						defer stop()
					}
					var corpus *tracestore.Corpus
					e.storeCorpus = func(c *tracestore.Corpus) { corpus = c }
					start, cpu := time.Now(), processCPU()
					if code := run(context.Background(), e, args); code != 0 {
						b.Fatalf("%v: exit %d", args, code)
					}
					p := phase{wall: time.Since(start), cpu: processCPU() - cpu}
					if corpus != nil {
						p.decoded = corpus.Decoded()
					}
					return p
				}
				importArgs := []string{"import", "--from", corpus, "--store", "--state-dir", state}
				storeArgs := append([]string{"mine", "--store", "--state-dir", state}, mineArgs...)
				imp = timed("import", importArgs...)
				mine = timed("mine", storeArgs...)
				copyTree(b, more, corpus)
				add = timed("add", importArgs...)
				remine = timed("remine", storeArgs...)
				if skipFrom {
					continue
				}
				from = timed("from", append([]string{"mine", "--from", corpus}, mineArgs...)...)
			}
			for _, m := range []struct {
				name string
				p    phase
			}{{"import", imp}, {"mine", mine}, {"add", add}, {"remine", remine}, {"from", from}} {
				if m.name == "from" && skipFrom {
					continue
				}
				b.ReportMetric(m.p.wall.Seconds(), m.name+"-s")
				b.ReportMetric(m.p.cpu.Seconds(), m.name+"-cpu-s")
			}
			b.ReportMetric(float64(mine.decoded), "mine-decoded")
			b.ReportMetric(float64(remine.decoded), "remine-decoded")
			ratio := func(a, b time.Duration) float64 { return a.Seconds() / max(b.Seconds(), 1e-9) }
			b.ReportMetric(ratio(add.wall+remine.wall, imp.wall+mine.wall), "second/first")
			b.ReportMetric(ratio(add.cpu+remine.cpu, imp.cpu+mine.cpu), "second/first-cpu")
			if skipFrom {
				return
			}
			b.ReportMetric(ratio(add.wall+remine.wall, from.wall), "second/from")
			b.ReportMetric(ratio(add.cpu+remine.cpu, from.cpu), "second/from-cpu")
			b.ReportMetric(ratio(remine.wall, from.wall), "remine/from")
			b.ReportMetric(ratio(remine.cpu, from.cpu), "remine/from-cpu")
		})
	}
}

// profilePhase starts a CPU profile into path and returns what stops it.
func profilePhase(b *testing.B, path string) func() {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
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
