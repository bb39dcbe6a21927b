package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// TestReadCorpusSkimMatchesDecode mines a corpus of generated traces,
// traces excluded from mining, traces written in forms the first pass
// leaves to the decoder, and invalid files, once keeping the traces (every
// one decoded) and once in two passes (the first skimming them), and
// checks that both fail with the same error, or, skipping invalid input,
// skip the same files and write the same report.
func TestReadCorpusSkimMatchesDecode(t *testing.T) {
	dir := t.TempDir()
	corpus := tracetest.Generate(tracetest.Config{Traces: 120, Seed: 9, Procedures: 4, MinLen: 2, MaxLen: 8, FuzzyEvery: 3})
	if err := corpus.WriteDir(filepath.Join(dir, "gen")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"bad/broken.json": `{"actions": [`,
		"bad/dup.json":    `{"actions": [{"kind": "k", "name": "n", "output": {"a": 1, "a": 2}}]}`,
		"bad/neg.json":    `{"actions": [{"kind": "k", "name": "n", "cost": {"input_tokens": -1}}]}`,
		"rare.json":       `{"id": "rare", "actions": [{"kind": "tool_call", "name": "x", "duration_ms": 1.5e2}]}`,
		"policy.json":     `{"id": "policy", "actions": [{"kind": "tool_call", "name": "x", "metadata": {"policy_status": "unresolved"}}]}`,
		"fuzzy.json":      `{"id": "fuzzy", "actions": [{"kind": "tool_call", "name": "x", "side_effects": [{"kind": "file_write"}], "fuzzy": true}]}`,
		"agent.jsonl":     `{"id": "agent", "metadata": {"agent": "claude-code"}, "actions": [{"kind": "observation", "name": "read"}]}` + "\n",
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip-invalid=%v", skip), func(t *testing.T) {
			read := func(passes string) ([]byte, *Corpus, error) {
				c, err := ReadCorpus(context.Background(), CorpusOptions{Dir: dir, Passes: passes, SkipInvalid: skip,
					Mine: mine.Options{MinExamples: 3, GeneratedAt: "2026-01-01T00:00:00Z"}})
				if err != nil {
					return nil, nil, err
				}
				data, err := c.Report.Encode()
				if err != nil {
					t.Fatal(err)
				}
				return data, c, nil
			}
			want, one, wantErr := read(PassesOne)
			got, two, gotErr := read(PassesTwo)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("two passes: %v\none pass: %v", gotErr, wantErr)
			}
			if !skip {
				if wantErr == nil {
					t.Fatal("invalid files were read without an error")
				}
				return
			}
			if wantErr != nil {
				t.Fatal(wantErr)
			}
			if !bytes.Equal(got, want) {
				t.Error("the two-pass report differs from the one-pass report")
			}
			if !reflect.DeepEqual(two.Skipped, one.Skipped) || len(one.Skipped) != 3 {
				t.Errorf("skipped %v in two passes, %v in one; want the 3 invalid files", two.Skipped, one.Skipped)
			}
			if len(one.Report.Candidates) == 0 || len(one.Report.ExcludedTraces) < 2 {
				t.Errorf("%d candidates and %d excluded traces: the corpus does not exercise the summary", len(one.Report.Candidates), len(one.Report.ExcludedTraces))
			}
		})
	}
}
