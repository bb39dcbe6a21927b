package source

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite the golden files (or set CRYSTALLIZE_UPDATE=1)")

// sessionGolden pins the sha256 of everything Load makes of agent session
// logs: every trace as encoded, with its source and source hash, every
// skipped session and every problem. The session decoders are tuned for
// speed, and this is what makes sure that tuning changes nothing a user
// can see: the hashes were written by the straightforward decoders, and
// any change to them must be deliberate (go test -update).
const sessionGolden = "testdata/agents.sha256"

// TestSessionGolden loads the hand-written agent logs of testdata and
// generated corpora in every format, each with and without problems, and
// compares what Load returns with the pinned hashes.
func TestSessionGolden(t *testing.T) {
	type corpus struct{ name, dir string }
	var corpora []corpus
	for _, f := range tracetest.AgentFormats {
		corpora = append(corpora, corpus{"testdata/" + string(f), filepath.Join("testdata/agents", string(f))})
	}
	tmp := t.TempDir()
	for _, seed := range []uint64{1, 2, 3} {
		c := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 12, Seed: seed, Calls: 40})
		for _, f := range tracetest.AgentFormats {
			dir := filepath.Join(tmp, fmt.Sprintf("%s-%d", f, seed))
			if err := c.Write(dir, f); err != nil {
				t.Fatal(err)
			}
			corpora = append(corpora, corpus{fmt.Sprintf("generated/%s/seed=%d", f, seed), dir})
		}
	}
	// One corpus of each format with damaged records, so that the
	// problems are pinned too: a truncated line, a line that is not an
	// object, and a record whose members have the wrong types.
	for _, f := range tracetest.AgentFormats {
		src := filepath.Join(tmp, fmt.Sprintf("%s-1", f))
		dir := filepath.Join(tmp, fmt.Sprintf("damaged-%s", f))
		damage(t, src, dir)
		corpora = append(corpora, corpus{"damaged/" + string(f), dir})
	}

	got := make(map[string]string)
	var names []string
	for _, c := range corpora {
		names = append(names, c.name)
		got[c.name] = loadDigest(t, c.dir)
	}
	if *update {
		var b strings.Builder
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s\n", got[n], n)
		}
		if err := os.WriteFile(sessionGolden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGolden(t)
	for _, n := range names {
		if want[n] != got[n] {
			t.Errorf("Load(%s) digest = %s, want %s", n, got[n], want[n])
		}
	}
	if len(want) != len(names) {
		t.Errorf("%s has %d corpora, the test loads %d (go test -update)", sessionGolden, len(want), len(names))
	}
}

// loadDigest loads dir, with and without SkipInvalid, and returns the
// sha256 of the results.
func loadDigest(t *testing.T, dir string) string {
	t.Helper()
	sum := sha256.New()
	// Messages name files under dir as given; the digest must not depend
	// on where the test's temporary directory is.
	h := &replacer{w: sum, old: dir, new: "DIR"}
	for _, skip := range []bool{false, true} {
		res, err := Load(context.Background(), dir, Options{SkipInvalid: skip})
		fmt.Fprintf(h, "skip=%v err=%v\n", skip, err)
		if res == nil {
			continue
		}
		for _, tr := range res.Traces {
			data, err := json.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "trace %s %s %d\n%s\n", tr.Source, tr.SourceHash, tr.Origin.Line, data)
		}
		for _, s := range res.SkippedSessions {
			fmt.Fprintf(h, "skipped session %+v\n", s)
		}
		for _, s := range res.Skipped {
			fmt.Fprintf(h, "skipped %+v\n", s)
		}
		t.Logf("Load(%s, SkipInvalid=%v): %d traces, %d sessions skipped, %d lines skipped, error %v", dir, skip, len(res.Traces), len(res.SkippedSessions), len(res.Skipped), err != nil)
	}
	return fmt.Sprintf("%x", sum.Sum(nil))
}

// replacer writes to w with every occurrence of old replaced by new.
type replacer struct {
	w        io.Writer
	old, new string
}

func (r *replacer) Write(p []byte) (int, error) {
	_, err := io.WriteString(r.w, strings.ReplaceAll(string(p), r.old, r.new))
	return len(p), err
}

// damage copies the session files of src to dst, damaging the first: its
// third line is cut in half, its fifth replaced by an array, and in the
// lines after the sixth members the formats read get the wrong type or
// value, one member per line.
func damage(t *testing.T, src, dst string) {
	t.Helper()
	first := true
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if first && strings.HasSuffix(p, ".jsonl") {
			first = false
			var lines []string
			sc := bufio.NewScanner(strings.NewReader(string(data)))
			sc.Buffer(nil, 1<<26)
			for sc.Scan() {
				lines = append(lines, sc.Text())
			}
			if len(lines) > 7 {
				lines[2] = lines[2][:len(lines[2])/2]
				lines[4] = "[1, 2]"
				repl := [][2]string{
					{`"is_error":false`, `"is_error":"no"`},
					{`"isSidechain":false`, `"isSidechain":0`},
					{`"timestamp":"`, `"timestamp":"x`},
					{`"input_tokens":`, `"input_tokens":-`},
					{`"exitCode":`, `"exitCode":"`},
					{`"type":"function_call"`, `"type":7`},
					{`"name":"`, `"name":1,"x":"`},
					{`"stdout":"`, `"stdout":["`},
					{`"content":[`, `"content":{"a":[`},
					{`"tool_use_id":"`, `"tool_use_id":"x`},
					{`"text":"`, `"text":2,"y":"`},
				}
				for i := 6; i < len(lines) && i < 6+3*len(repl); i++ {
					r := repl[(i-6)%len(repl)]
					lines[i] = strings.Replace(lines[i], r[0], r[1], 1)
				}
			}
			data = []byte(strings.Join(lines, "\n") + "\n")
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(sessionGolden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	want := make(map[string]string)
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sum, name, ok := strings.Cut(l, " ")
		if !ok {
			t.Fatalf("%s: malformed line %q", sessionGolden, l)
		}
		want[name] = sum
	}
	return want
}

// BenchmarkLoadAgents loads 300 generated sessions of 60 tool calls in
// each agent format, as the generator lays them out (Claude Code and
// Codex one file per session, OTLP/JSON 50 sessions per file). Its
// allocations, unlike its time, do not depend on what else the machine
// runs, which makes them the figure to compare.
func BenchmarkLoadAgents(b *testing.B) {
	c := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 300, Seed: 1, Calls: 60})
	for _, f := range tracetest.AgentFormats {
		b.Run(string(f), func(b *testing.B) {
			dir := b.TempDir()
			if err := c.Write(dir, f); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var res *Result
			for b.Loop() {
				var err error
				res, err = Load(context.Background(), dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
			}
			reportLive(b, res)
		})
	}
}
