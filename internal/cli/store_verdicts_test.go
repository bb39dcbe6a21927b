package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/pipeline"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/store"
	"github.com/crystallize-dev/crystallize/internal/tracestore"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// forgetful is an ExampleVerdicts that remembers nothing: a mine of the
// store without its verdicts.
type forgetful struct{}

func (forgetful) Passed(_ context.Context, keys []candidate.VerdictKey) ([]*candidate.Example, error) {
	return make([]*candidate.Example, len(keys)), nil
}

func (forgetful) Record(context.Context, []candidate.Verdict) error { return nil }

// TestMineStoreRemembersVerdicts mines a store whose candidates are built
// from samples of 4 examples and list 4 passing ones, then mines it again,
// then adds traces and mines once more. Every mine writes the files mine
// --from writes on the directory (and so does a mine of the store without
// its verdicts); a mine after the first decodes fewer traces than the
// same mine without the store's verdicts, since the examples verified
// before are not read.
func TestMineStoreRemembersVerdicts(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	c := tracetest.Generate(tracetest.Config{Traces: 330, Seed: 9})
	all := c.Traces
	c.Traces = all[:300]
	if err := c.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(tmp, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := filepath.Join(tmp, "out")
	opts := mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z", ExampleSample: 4}
	mineInto := func(co pipeline.CorpusOptions) (map[string][]byte, int) {
		t.Helper()
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		reread := 0
		co.Progress = pipeline.Progress{Reread: func(n int) { reread += n }}
		_, _, err := pipeline.MineDir(ctx, pipeline.MineDirOptions{
			Corpus: co,
			Outputs: pipeline.Outputs{Out: filepath.Join(out, "w.star"), OutDir: filepath.Join(out, "all"), Report: filepath.Join(out, "report.json"),
				Shadow: replay.Options{ListPassing: 4}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return readTree(t, out), reread
	}
	fromStore := func(verdicts candidate.ExampleVerdicts) (map[string][]byte, int) {
		t.Helper()
		corpus, err := tracestore.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Verdicts = verdicts
		return mineInto(pipeline.CorpusOptions{Store: corpus, Mine: o})
	}
	same := func(what string, got, want map[string][]byte) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s wrote %d files, mine --from %d", what, len(got), len(want))
		}
		for name, w := range want {
			if !bytes.Equal(got[name], w) {
				t.Errorf("%s: %s differs from mine --from's", what, name)
			}
		}
	}
	importDir := func() {
		t.Helper()
		if _, err := tracestore.Import(ctx, db, dir, tracestore.ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	importDir()
	want, _ := mineInto(pipeline.CorpusOptions{Dir: dir, Passes: pipeline.PassesTwo, Mine: opts})
	if !bytes.Contains(want["report.json"], []byte(`"passed_not_listed"`)) {
		t.Fatal("no candidate counts unlisted examples: the corpus does not exercise the bounds")
	}
	first, read1 := fromStore(nil)
	same("the first mine of the store", first, want)
	kept, err := db.CountVerdicts(ctx)
	if err != nil || kept == 0 {
		t.Fatalf("the first mine kept %d verdicts (%v)", kept, err)
	}
	again, read2 := fromStore(nil)
	same("mining the store again", again, want)
	_, forgot := fromStore(forgetful{})
	if forgot != read1 {
		t.Errorf("without verdicts the second mine read %d traces, the first %d: want the same", forgot, read1)
	}
	if read2 > read1-kept/2 || read2 == 0 {
		// Each kept verdict is an example not read again; a trace can
		// hold several examples, so the traces saved are fewer than the
		// verdicts, but not by half.
		t.Errorf("mining again read %d traces, the first mine %d, with %d verdicts kept: want about that many fewer", read2, read1, kept)
	}

	// Add 10 % and mine again: the old examples are not read again.
	c.Traces = all[300:]
	if err := c.WriteDir(filepath.Join(tmp, "more")); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(tmp, "more"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(tmp, "more", e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	importDir()
	want, _ = mineInto(pipeline.CorpusOptions{Dir: dir, Passes: pipeline.PassesTwo, Mine: opts})
	grown, read3 := fromStore(nil)
	same("mining the grown store", grown, want)
	without, read3Without := fromStore(forgetful{})
	same("mining the grown store without verdicts", without, want)
	if read3 >= read3Without {
		t.Errorf("mining the grown store read %d traces, %d without the verdicts: want fewer", read3, read3Without)
	}
	t.Logf("traces read back: first %d, again %d (%d verdicts kept); grown %d, %d without verdicts", read1, read2, kept, read3, read3Without)
}

// TestMineStoreVerdictsSharedHash mines a store of OTLP files, whose
// sessions (50 a file) share their file's source hash, so that examples
// of one candidate in two sessions of a file can start at the same index,
// which a verdict's key cannot tell apart: the first mine and a mine
// again give the report a mine without remembered verdicts gives, byte
// for byte, every example naming its own trace, and no verdict is kept
// for such a hash.
func TestMineStoreVerdictsSharedHash(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "otel")
	ac := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: 150, Seed: 3})
	if err := ac.Write(dir, tracetest.FormatOTel); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(tmp, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := tracestore.Import(ctx, db, dir, tracestore.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	mineReport := mineStoreReport(t, db, filepath.Join(tmp, "out"))
	first := mineReport(nil)
	again := mineReport(nil)
	without := mineReport(forgetful{})
	if !bytes.Contains(without, []byte(`"passed_not_listed"`)) {
		t.Fatal("no candidate counts unlisted examples: the corpus does not exercise remembered verdicts")
	}
	if !bytes.Equal(first, without) {
		t.Errorf("the first mine's report differs from one without verdicts:\n%s", firstLineDiff(first, without))
	}
	if !bytes.Equal(again, without) {
		t.Errorf("mining again gives another report than without verdicts:\n%s", firstLineDiff(again, without))
	}
	if n, err := db.CountVerdicts(ctx); err != nil || n != 0 {
		t.Errorf("%d verdicts kept (%v) of traces that share their source hash, want none", n, err)
	}
}

// TestMineStoreVerdictsMovedCorpus mines a store (remembering verdicts),
// then moves the corpus and imports it again, and mines once more: the
// report is the one a mine without remembered verdicts gives, byte for
// byte, naming every example where its trace is now.
func TestMineStoreVerdictsMovedCorpus(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "corpus")
	if err := tracetest.Generate(tracetest.Config{Traces: 300, Seed: 9}).WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(tmp, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fromStore := mineStoreReport(t, db, filepath.Join(tmp, "out"))
	if _, err := tracestore.Import(ctx, db, dir, tracestore.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	fromStore(nil)
	if n, err := db.CountVerdicts(ctx); err != nil || n == 0 {
		t.Fatalf("the first mine kept %d verdicts (%v)", n, err)
	}
	moved := filepath.Join(tmp, "moved")
	if err := os.MkdirAll(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(moved, "sub")); err != nil {
		t.Fatal(err)
	}
	if _, err := tracestore.Import(ctx, db, moved, tracestore.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	got := fromStore(nil)
	want := fromStore(forgetful{})
	if !bytes.Equal(got, want) {
		t.Errorf("the report with remembered verdicts differs from the one without")
	}
}

// mineStoreReport returns a function that mines the store db as mine
// --store does, its candidates built from samples of 4 examples, with the
// given verdicts (nil: the store's), and returns the report written into
// out.
func mineStoreReport(t *testing.T, db *store.DB, out string) func(candidate.ExampleVerdicts) []byte {
	ctx := context.Background()
	opts := mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z", ExampleSample: 4}
	return func(verdicts candidate.ExampleVerdicts) []byte {
		t.Helper()
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		corpus, err := tracestore.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Verdicts = verdicts
		_, _, err = pipeline.MineDir(ctx, pipeline.MineDirOptions{
			Corpus:  pipeline.CorpusOptions{Store: corpus, Mine: o},
			Outputs: pipeline.Outputs{Report: filepath.Join(out, "report.json"), Shadow: replay.Options{ListPassing: 4}},
		})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// firstLineDiff names the first line where got and want differ.
func firstLineDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %s\n         want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}
