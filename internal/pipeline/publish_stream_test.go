package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestPublishExampleBatches mines a generated corpus with the traces in
// memory and in two passes with an example cache of a few traces, so that
// shadow replay reads every candidate's examples in many small batches,
// and checks that Publish writes the same files byte for byte, with
// every passing source example listed and with a bound of three (every
// candidate then lists three and counts the rest).
func TestPublishExampleBatches(t *testing.T) {
	for _, list := range []int{0, 3} {
		t.Run(fmt.Sprintf("list %d", list), func(t *testing.T) { testPublishExampleBatches(t, list) })
	}
}

func testPublishExampleBatches(t *testing.T, listPassing int) {
	dir := t.TempDir()
	corpus := tracetest.Generate(tracetest.Config{Traces: 300, Seed: 5})
	if err := corpus.WriteJSONL(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Fatal(err)
	}
	const cache = 200 // actions: about four traces
	out := filepath.Join(t.TempDir(), "out")
	publish := func(passes string) (map[string][]byte, int) {
		t.Helper()
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		c, err := ReadCorpus(ctx, CorpusOptions{Dir: dir, Passes: passes,
			Mine: mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z", ExampleCache: cache}})
		if err != nil {
			t.Fatal(err)
		}
		o := Outputs{Out: filepath.Join(out, "w.star"), OutDir: filepath.Join(out, "all"), Report: filepath.Join(out, "report.json"),
			AllSources: c.All, Examples: c.Examples, Shadow: replay.Options{ListPassing: listPassing}}
		batches := 0
		if c.ExampleBatches != nil {
			o.ExampleBatches = func(ctx context.Context, cand *candidate.Candidate, yield func([]*trace.Trace) error) error {
				return c.ExampleBatches(ctx, cand, func(batch []*trace.Trace) error {
					batches++
					actions := 0
					for _, tr := range batch {
						actions += len(tr.Actions)
					}
					if actions > cache && len(batch) > 1 {
						t.Errorf("a batch of %d examples holds %d actions, more than the cache's %d", len(batch), actions, cache)
					}
					return yield(batch)
				})
			}
		}
		r := c.Report
		if _, err := Publish(ctx, r, c.Sources, nil, o); err != nil {
			t.Fatal(err)
		}
		if len(r.Candidates) == 0 {
			t.Fatal("no candidates")
		}
		for _, c := range r.Candidates {
			sh := c.Shadow
			switch {
			case listPassing == 0 && sh.PassedNotListed != 0:
				t.Errorf("candidate %s: %d passing examples not listed, with no bound", c.Name, sh.PassedNotListed)
			case listPassing > 0 && len(c.Examples) > listPassing && (sh.PassedNotListed == 0 || sh.ComparedTraces != len(c.Examples) || sh.PassedNotListed+len(sh.Traces) != len(c.Examples)):
				t.Errorf("candidate %s of %d examples: %d listed, %d counted, %d compared", c.Name, len(c.Examples), len(sh.Traces), sh.PassedNotListed, sh.ComparedTraces)
			}
		}
		return readFiles(t, out), batches
	}
	want, _ := publish(PassesOne)
	got, batches := publish(PassesTwo)
	if batches < 10 {
		t.Errorf("two-pass shadow replay read %d batches of examples, want many with a cache of %d actions", batches, cache)
	}
	if len(got) != len(want) {
		t.Errorf("two passes wrote %d files, one pass %d", len(got), len(want))
	}
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s differs between one pass and two passes read in batches", name)
		}
	}
}

// TestPublishReportEncodingFails gives Publish a report that cannot be
// encoded (a parameter example that is not a valid JSON number): it
// fails naming the report, and writes nothing, not even the workflows
// rendered before it or a temporary file.
func TestPublishReportEncodingFails(t *testing.T) {
	traces, err := Import(context.Background(), ImportOptions{From: "../../examples/traces", Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := MineTraces(context.Background(), traces.Traces, mine.Options{MinExamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) == 0 {
		t.Fatal("no candidates")
	}
	c := &r.Candidates[0]
	if len(c.Parameters) == 0 {
		t.Fatal("the first candidate has no parameter")
	}
	c.Parameters[0].Examples = append(c.Parameters[0].Examples, json.Number("not a number"))
	out := t.TempDir()
	report := filepath.Join(out, "r.json")
	_, err = Publish(context.Background(), r, traces.Traces, nil, Outputs{
		Out: filepath.Join(out, "w.star"), OutDir: filepath.Join(out, "all"), Report: report,
	})
	if err == nil || !strings.Contains(err.Error(), "encoding report") || !strings.Contains(err.Error(), report) {
		t.Fatalf("Publish = %v, want an encoding error naming %s", err, report)
	}
	if files := readFiles(t, out); len(files) != 0 {
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		t.Errorf("a failed Publish left %v", names)
	}
}

// readFiles returns every file under dir by slash path, or nothing when
// dir does not exist.
func readFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return files
}
