package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestMineDirReadsExamplesOnce mines a generated corpus whose candidates
// are built from samples of 4 examples and list 4 passing ones: in one
// pass, in two passes with shadow replay judging the non-sampled examples
// in the sample check's read, and in two passes without (a verifier that
// lists every example verifies none), with an example cache of about four
// traces. All three write the same files;
// the second reads fewer traces back than the third, by at least the
// examples it verified.
func TestMineDirReadsExamplesOnce(t *testing.T) {
	dir := t.TempDir()
	corpus := tracetest.Generate(tracetest.Config{Traces: 300, Seed: 5})
	if err := corpus.WriteJSONL(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	run := func(passes string, verify mine.ExampleVerifier) (map[string][]byte, int) {
		t.Helper()
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		reread := 0
		_, _, err := MineDir(context.Background(), MineDirOptions{
			Corpus: CorpusOptions{Dir: dir, Passes: passes,
				Mine:     mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z", ExampleSample: 4, ExampleCache: 200, Verify: verify},
				Progress: Progress{Reread: func(n int) { reread += n }}},
			Outputs: Outputs{Out: filepath.Join(out, "w.star"), OutDir: filepath.Join(out, "all"), Report: filepath.Join(out, "report.json"),
				Shadow: replay.Options{ListPassing: 4}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return readFiles(t, out), reread
	}
	want, _ := run(PassesOne, nil)
	got, once := run(PassesTwo, nil)
	without, twice := run(PassesTwo, replay.NewVerifier(replay.Options{ListPassing: -1}))
	for road, files := range map[string]map[string][]byte{"two passes": got, "two passes without judging in the sample check": without} {
		if len(files) != len(want) {
			t.Errorf("%s wrote %d files, one pass %d", road, len(files), len(want))
		}
		for name, w := range want {
			if !bytes.Equal(files[name], w) {
				t.Errorf("%s differs between one pass and %s", name, road)
			}
		}
	}
	if !bytes.Contains(want["report.json"], []byte(`"passed_not_listed"`)) {
		t.Fatal("no candidate counts unlisted examples: the corpus does not exercise the bound")
	}
	if once >= twice {
		t.Errorf("read %d traces back judging examples in the sample check's read, %d without; want fewer", once, twice)
	}
	t.Logf("traces read back: %d with, %d without", once, twice)
}
