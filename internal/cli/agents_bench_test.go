package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// agentBenchCalls is the tool calls per session of the agent benchmark:
// about what a working Claude Code session holds.
const agentBenchCalls = 60

// agentBenchSizes are the numbers of sessions BenchmarkMineAgentSessions
// runs on. CRYSTALLIZE_BENCH_SESSIONS overrides them, e.g. "10000"; the
// 10,000-session corpus takes about 900 MB of disk.
func agentBenchSizes() []int {
	sizes := []int{1000}
	if s := os.Getenv("CRYSTALLIZE_BENCH_SESSIONS"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
				sizes = append(sizes, n)
			}
		}
	}
	return sizes
}

// cachedCorpus returns dir after writing it with write, once: a corpus
// stays in the system temp directory across runs, marked complete only
// when it was fully written.
func cachedCorpus(b *testing.B, name string, write func(dir string) error) string {
	b.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	dir := filepath.Join(os.TempDir(), name)
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	os.RemoveAll(dir)
	if err := write(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkMineAgentSessions runs "crystallize mine" end to end on n
// Claude Code sessions of about 60 tool calls each (import, normalize,
// mine, write every workflow and the report) and, as the baseline, on n
// crystallization traces of 60 actions each. Importing agent logs should
// cost at most twice what the baseline costs, in time and in memory.
//
// peak-heap-MB is the largest in-use heap sampled during the run;
// peak-rss-MB is the process's resident high-water mark (VmHWM), reset
// before each run where Linux allows it, so it includes what the heap
// samples miss.
func BenchmarkMineAgentSessions(b *testing.B) {
	for _, n := range agentBenchSizes() {
		// The directory is named after the manifest's hash, so a corpus
		// written by an older generator is not taken for this one.
		sessions := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: n, Seed: 1, Calls: agentBenchCalls})
		manifest, err := json.Marshal(sessions.Manifest)
		if err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(manifest)
		claude := cachedCorpus(b, fmt.Sprintf("crystallize-bench-claude-%d-%x", n, sum[:6]), func(dir string) error {
			return sessions.Write(dir, tracetest.FormatClaude)
		})
		traces := cachedCorpus(b, fmt.Sprintf("crystallize-bench-%d-actions%d-seed1", n, agentBenchCalls), func(dir string) error {
			return tracetest.Generate(tracetest.Config{Traces: n, Seed: 1, Actions: agentBenchCalls}).WriteDir(dir)
		})
		b.Run(fmt.Sprintf("claude/sessions=%d", n), func(b *testing.B) { benchMineDir(b, claude) })
		b.Run(fmt.Sprintf("trace/traces=%d", n), func(b *testing.B) { benchMineDir(b, traces) })
	}
}

// benchMineDir runs "crystallize mine --from dir" b.N times and reports
// the peak memory.
func benchMineDir(b *testing.B, dir string) {
	out := b.TempDir()
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}}
	report := filepath.Join(out, "r.json")
	args := []string{"mine", "--from", dir, "--out-dir", filepath.Join(out, "all"), "--report", report}
	var peak, rss uint64
	for b.Loop() {
		os.Remove(report)
		runtime.GC()
		resetHWM()
		peak = max(peak, peakHeap(func() {
			// Exit status 1 with a report is a run that selected no
			// candidate: the work was done and is what is measured. Without
			// a report, the run failed.
			code := run(context.Background(), e, args)
			if _, err := os.Stat(report); code != exitOK && (code != exitFailure || err != nil) {
				b.Fatalf("crystallize mine --from %s: exit status %d", dir, code)
			}
		}))
		rss = max(rss, readHWM())
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	if rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "peak-rss-MB")
	}
}

// resetHWM resets the process's resident high-water mark (Linux 4.0 and
// later); elsewhere it does nothing and readHWM keeps the process's peak.
func resetHWM() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// readHWM returns the process's resident high-water mark in bytes, or 0
// where /proc/self/status does not give it.
func readHWM() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
