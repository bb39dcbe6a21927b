package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// cancelWriter collects what is written to it and cancels a context the
// first time a write contains trigger.
type cancelWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	trigger string
	cancel  context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trigger != "" && bytes.Contains(p, []byte(w.trigger)) {
		w.cancel()
	}
	return w.buf.Write(p)
}

func genCorpus(t *testing.T, n int, jsonl bool) string {
	t.Helper()
	dir := t.TempDir()
	c := tracetest.Generate(tracetest.Config{Traces: n, Seed: 7})
	var err error
	if jsonl {
		err = c.WriteJSONL(filepath.Join(dir, "traces.jsonl"))
	} else {
		err = c.WriteDir(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMineProgressJSON checks the --progress json events: one JSON object
// per line on stderr, a "done" event per pass, and nothing on stdout.
func TestMineProgressJSON(t *testing.T) {
	dir := genCorpus(t, 300, false)
	for _, passes := range []string{pipeline.PassesOne, pipeline.PassesTwo} {
		t.Run("passes="+passes, func(t *testing.T) {
			e, stdout, stderr := e2eEnv()
			code := run(context.Background(), e, []string{"mine", "--from", dir, "--min-examples", "3", "--passes", passes, "--progress", "json"})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if strings.Contains(stdout.String(), `"event"`) {
				t.Error("progress events on stdout")
			}
			done := map[string]progressEvent{}
			for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
				if !strings.HasPrefix(line, "{") {
					continue // the "nothing written" note
				}
				var ev progressEvent
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("progress line %q: %v", line, err)
				}
				if ev.Event == "done" {
					done[ev.Pass] = ev
				}
			}
			read, ok := done["read"]
			if !ok {
				t.Fatalf("no done event for the read pass in:\n%s", stderr)
			}
			if read.Traces != 300 || read.Bytes == 0 || read.Bytes != read.TotalBytes {
				t.Errorf("read done = %+v, want 300 traces and every byte", read)
			}
			// Building stops once the report is full, so done may stay
			// below total.
			if b, ok := done["build"]; !ok || b.Done == 0 || b.Done > b.Total {
				t.Errorf("build done = %+v (present %v), want 0 < done ≤ total", b, ok)
			}
		})
	}
}

// TestMineCancelledWritesNothing cancels a mining run in each pass, as
// SIGINT does, and checks that it fails with the cancellation and leaves
// no output file behind, not even a temporary one.
func TestMineCancelledWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name, passes, trigger string
		jsonl                 bool
	}{
		{"reading files", pipeline.PassesOne, `"pass":"read"`, false},
		{"reading json lines", pipeline.PassesTwo, `"pass":"read"`, true},
		{"building", pipeline.PassesTwo, `"pass":"build"`, false},
		{"building in memory", pipeline.PassesOne, `"pass":"build"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := genCorpus(t, 400, tc.jsonl)
			out := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := &cancelWriter{trigger: tc.trigger, cancel: cancel}
			e, _, _ := e2eEnv()
			e.stderr = w
			code := run(ctx, e, []string{"mine", "--from", dir, "--min-examples", "3", "--passes", tc.passes, "--progress", "json",
				"--out", filepath.Join(out, "w.star"), "--out-dir", filepath.Join(out, "all"),
				"--report", filepath.Join(out, "report.json"), "--bundle", filepath.Join(out, "bundle")})
			if code == 0 {
				t.Fatalf("exit 0 after cancelling at %s", tc.trigger)
			}
			if ctx.Err() == nil {
				t.Fatalf("the run ended before %s was reported:\n%s", tc.trigger, w.buf.String())
			}
			if !strings.Contains(w.buf.String(), context.Canceled.Error()) {
				t.Errorf("stderr does not say the run was cancelled:\n%s", w.buf.String())
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range entries {
				t.Errorf("cancelled run left %s behind", en.Name())
			}
		})
	}
}

func TestMineProgressFlags(t *testing.T) {
	for _, args := range [][]string{{"--progress", "loud"}, {"--passes", "3"}} {
		e, _, stderr := e2eEnv()
		code := run(context.Background(), e, append([]string{"mine", "--from", "."}, args...))
		if code != 2 {
			t.Errorf("mine %v: exit %d, want 2 (usage)\n%s", args, code, stderr)
		}
	}
}
