package mine

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// summaryBothWays summarizes the document data as the first pass does
// on each road: decoded whole (trace.Decode, the loader's origin and
// source hash, Normalize, Summarize), and skimmed (trace.Parser.Skim,
// the same origin and hash, SummarizeSkim). skimmed is false when Skim
// declined the document, and decodeErr is the decoder's error.
func summaryBothWays(p *trace.Parser, data []byte, file string, line int) (whole, skim Summary, skimmed bool, decodeErr error) {
	origin := trace.Origin{Path: file, Line: line}
	hash := trace.HashBytes(data)
	if s, ok := p.Skim(data, file, line); ok {
		s.Source, s.SourceHash = origin.String(), hash
		skim, skimmed = SummarizeSkim(s), true
	}
	tr, err := trace.Decode(data, file, line)
	if err != nil {
		return Summary{}, skim, skimmed, err
	}
	tr.Origin, tr.Source, tr.SourceHash = origin, origin.String(), hash
	trace.Normalize(tr)
	return Summarize(tr), skim, skimmed, nil
}

// checkSummaryBothWays checks that the two roads agree on data and
// reports whether the skim was used.
func checkSummaryBothWays(t *testing.T, p *trace.Parser, data []byte, file string, line int) bool {
	t.Helper()
	whole, skim, skimmed, err := summaryBothWays(p, data, file, line)
	if !skimmed {
		return false
	}
	if err != nil {
		t.Fatalf("%s:%d: skimmed a document the decoder refuses (%v):\n%s", file, line, err, data)
	}
	if !reflect.DeepEqual(whole, skim) {
		t.Fatalf("%s:%d: SummarizeSkim =\n%+v\nSummarize =\n%+v\ndocument:\n%s", file, line, skim, whole, data)
	}
	return true
}

// skimCorpus is a generated corpus with its traces changed into every
// case a summary distinguishes: excluded for a policy violation on the
// trace or an action, for a nondeterministic side effect, evidence for
// the gapped miner, failed actions, defaulted action ids.
func skimCorpus(t testing.TB) []*trace.Trace {
	corpus := tracetest.Generate(tracetest.Config{Traces: 60, Seed: 7, Procedures: 4, MinLen: 2, MaxLen: 6, FuzzyEvery: 2})
	ts := corpus.Traces
	for i, tr := range ts {
		a := &tr.Actions[i%len(tr.Actions)]
		switch i % 10 {
		case 1:
			tr.Metadata = map[string]any{"policy_status": "UNRESOLVED"}
		case 2:
			a.Metadata = map[string]any{"unresolved_policy_violation": []any{"p1"}}
		case 3:
			a.SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "x"}}
			a.Deterministic = new(false)
		case 4:
			tr.Metadata = map[string]any{"agent": "claude-code", "policy_violation": false}
		case 5:
			a.Kind = trace.KindObservation
			a.Metadata = map[string]any{"exit_code": json.Number("3")}
		case 6:
			a.Metadata = map[string]any{"error": true, "exit_code": json.Number("0")}
		case 7:
			a.ID = ""
			tr.ID = ""
		case 8:
			a.Parameters = nil
		}
	}
	return ts
}

func encodeTrace(t testing.TB, tr *trace.Trace) []byte {
	data, err := json.Marshal(tr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestSummarizeSkimMatchesSummarize checks the two roads on every trace
// of a generated corpus, as files and as JSON Lines records, and on
// every trace document under internal/trace/testdata.
func TestSummarizeSkimMatchesSummarize(t *testing.T) {
	var p trace.Parser
	skimmed := 0
	ts := skimCorpus(t)
	for i, tr := range ts {
		data := encodeTrace(t, tr)
		if checkSummaryBothWays(t, &p, data, "runs/"+tracetest.FileName(tr), 0) {
			skimmed++
		}
		if checkSummaryBothWays(t, &p, data, "runs/all.jsonl", i+1) {
			skimmed++
		}
	}
	// Every trace of the corpus is in the usual forms: none may need the
	// decoder.
	if skimmed != 2*len(ts) {
		t.Errorf("skimmed %d of %d documents, want all", skimmed, 2*len(ts))
	}
	files, err := filepath.Glob("../trace/testdata/*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no trace testdata: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		checkSummaryBothWays(t, &p, data, filepath.Base(file), 0)
		checkSummaryBothWays(t, &p, bytes.ReplaceAll(data, []byte("\n"), nil), "all.jsonl", 2)
	}
}

// FuzzSummarySkim checks, over arbitrary bytes and mutations of generated
// traces, that whenever the skim gives a summary the decoder decodes the
// document and Summarize gives an equal summary; so whenever the decoder
// refuses a document, the skim gives none, and the loader's error is the
// decoder's.
func FuzzSummarySkim(f *testing.F) {
	for _, tr := range skimCorpus(f)[:12] {
		f.Add(encodeTrace(f, tr), 0)
	}
	files, err := filepath.Glob("../trace/testdata/*/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, 3)
	}
	f.Add([]byte(`{"actions":[{"kind":"observation","name":"n","metadata":{"error":true}}],"metadata":{"agent":[1]}}`), 1)
	var p trace.Parser
	f.Fuzz(func(t *testing.T, data []byte, line int) {
		line = max(0, line%1000)
		checkSummaryBothWays(t, &p, data, "runs/a.jsonl", line)
	})
}
