package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// readTree returns every file under dir by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// minePasses runs mine with --passes passes and returns every file it
// wrote, its exit code and its stdout.
// The output directory is the same for every run (the report records
// the paths it wrote), emptied first.
func minePasses(t *testing.T, out, from, passes string, extra ...string) (map[string][]byte, int, string) {
	t.Helper()
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	e, stdout, stderr := e2eEnv()
	args := append([]string{"mine", "--from", from, "--passes", passes,
		"--out", filepath.Join(out, "w.star"), "--out-dir", filepath.Join(out, "all"),
		"--report", filepath.Join(out, "report.json"), "--bundle", filepath.Join(out, "bundle")}, extra...)
	code := run(context.Background(), e, args)
	if code > 1 {
		t.Fatalf("mine --passes %s: exit %d\n%s", passes, code, stderr)
	}
	return readTree(t, out), code, stdout.String()
}

// sameOutputCorpus is a corpus two ways of mining must write the same
// files for, with the flags both get.
type sameOutputCorpus struct {
	name, dir string
	extra     []string
}

// sameOutputCorpora returns the examples (with held-out traces, and with
// nothing to propose, when the bundle holds every trace) and generated
// corpora of the given seeds, as one file per trace and as JSON Lines.
func sameOutputCorpora(t *testing.T, seeds ...uint64) []sameOutputCorpus {
	t.Helper()
	corpora := []sameOutputCorpus{
		{"examples", "../../examples/traces", []string{"--shadow-from", "../../examples/heldout", "--min-examples", "2"}},
		{"examples/no-candidate", "../../examples/traces", []string{"--min-examples", "50"}},
	}
	tmp := t.TempDir()
	for _, seed := range seeds {
		c := tracetest.Generate(tracetest.Config{Traces: 200, Seed: seed, Support: 0.05, FuzzyEvery: 3})
		dir := filepath.Join(tmp, fmt.Sprintf("files-%d", seed))
		if err := c.WriteDir(dir); err != nil {
			t.Fatal(err)
		}
		corpora = append(corpora, sameOutputCorpus{fmt.Sprintf("files/seed=%d", seed), dir, []string{"--min-examples", "3"}})
		dir = filepath.Join(tmp, fmt.Sprintf("jsonl-%d", seed))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteJSONL(filepath.Join(dir, "traces.jsonl")); err != nil {
			t.Fatal(err)
		}
		corpora = append(corpora, sameOutputCorpus{fmt.Sprintf("jsonl/seed=%d", seed), dir, []string{"--min-examples", "3"}})
	}
	return corpora
}

// mineRun is what one mining run left: every file it wrote, its exit code
// and its stdout.
type mineRun struct {
	files  map[string][]byte
	code   int
	stdout string
}

// sameOutput fails t unless runs a and b (named by how they mined) wrote
// the same files byte for byte, exited alike and printed the same
// summary, and a wrote a report.
func sameOutput(t *testing.T, aName string, a mineRun, bName string, b mineRun) {
	t.Helper()
	if a.code != b.code {
		t.Errorf("exit %d %s, %d %s", a.code, aName, b.code, bName)
	}
	if !bytes.Contains(a.files["report.json"], []byte(`"candidates"`)) {
		t.Fatalf("no report written %s", aName)
	}
	for name, data := range a.files {
		if !bytes.Equal(data, b.files[name]) {
			t.Errorf("%s differs between %s and %s", name, aName, bName)
		}
	}
	for name := range b.files {
		if _, ok := a.files[name]; !ok {
			t.Errorf("%s wrote %s, %s did not", bName, name, aName)
		}
	}
	if a.stdout != b.stdout {
		t.Errorf("summaries differ:\n%s\n---\n%s", a.stdout, b.stdout)
	}
}

// TestMineTwoPassSameOutput checks that mining in two passes writes the
// same files, byte for byte, as mining with the corpus in memory: on the
// examples (with held-out traces) and on generated corpora of several
// seeds, as one file per trace and as JSON Lines.
func TestMineTwoPassSameOutput(t *testing.T) {
	for _, c := range sameOutputCorpora(t, 1, 2, 5) {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var one, two mineRun
			one.files, one.code, one.stdout = minePasses(t, out, c.dir, pipeline.PassesOne, c.extra...)
			two.files, two.code, two.stdout = minePasses(t, out, c.dir, pipeline.PassesTwo, c.extra...)
			sameOutput(t, "with one pass", one, "with two", two)
		})
	}
}

// TestMineHeldoutStreamed checks that held-out traces streamed to shadow
// replay in batches (without --bundle) give the report that loading them
// whole (with --bundle, which holds them as fixtures) gives, on more
// held-out traces than one batch.
func TestMineHeldoutStreamed(t *testing.T) {
	tmp := t.TempDir()
	corpus, heldout := filepath.Join(tmp, "corpus"), filepath.Join(tmp, "heldout")
	if err := tracetest.Generate(tracetest.Config{Traces: 200, Seed: 11}).WriteDir(corpus); err != nil {
		t.Fatal(err)
	}
	h := tracetest.Generate(tracetest.Config{Traces: pipeline.HeldoutBatch + 40, Seed: 11})
	for _, tr := range h.Traces {
		tr.ID = "heldout-" + tr.ID
	}
	if err := os.MkdirAll(heldout, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteJSONL(filepath.Join(heldout, "h.jsonl")); err != nil {
		t.Fatal(err)
	}
	reports := map[bool][]byte{}
	for _, bundle := range []bool{false, true} {
		out := filepath.Join(tmp, "out")
		os.RemoveAll(out)
		args := []string{"mine", "--from", corpus, "--shadow-from", heldout, "--min-examples", "3", "--report", filepath.Join(out, "report.json")}
		if bundle {
			args = append(args, "--bundle", filepath.Join(out, "bundle"))
		}
		e, _, stderr := e2eEnv()
		if code := run(context.Background(), e, args); code > 1 {
			t.Fatalf("mine (bundle %v): exit %d\n%s", bundle, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		reports[bundle] = b
	}
	if !bytes.Equal(reports[false], reports[true]) {
		t.Error("report with streamed held-out traces differs from the one with them loaded whole")
	}
	if n := bytes.Count(reports[false], []byte(`"role": "heldout"`)); n < pipeline.HeldoutBatch {
		t.Errorf("%d held-out traces in the report, want more than a batch (%d)", n, pipeline.HeldoutBatch)
	}
}
