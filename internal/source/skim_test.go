package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// outline is what these tests compare of a trace on both roads: what
// trace.Skim keeps of it, computed from the decoded trace or read by
// Skim.
type outline struct {
	ID, Source, SourceHash string
	Agent                  string
	Violation              string
	Actions                []trace.SkimAction
}

func outlineOf(t *trace.Trace) outline {
	o := outline{ID: t.ID, Source: t.Source, SourceHash: t.SourceHash}
	if agent, ok := t.Metadata["agent"]; ok {
		o.Agent = fmt.Sprint(agent)
	}
	if id, ok := t.PolicyViolation(); ok {
		o.Violation = "violation at " + id
	}
	for i := range t.Actions {
		a := &t.Actions[i]
		violation := (&trace.Trace{Actions: []trace.Action{*a}}).PolicyViolation
		_, marked := violation()
		o.Actions = append(o.Actions, trace.SkimAction{ID: a.ID, Kind: a.Kind, Name: a.Name, Signature: a.Signature(),
			Failed: a.Failed(), Violation: marked, NondeterministicSideEffect: a.NondeterministicSideEffect(),
			HasSideEffects: len(a.SideEffects) > 0, ApprovalRequired: a.Approval != nil && a.Approval.Required})
	}
	return o
}

func outlineOfSkim(s *trace.Skim) outline {
	o := outline{ID: s.ID, Source: s.Source, SourceHash: s.SourceHash, Actions: s.Actions}
	if s.HasAgent {
		o.Agent = fmt.Sprint(s.Agent)
	}
	if id, ok := s.PolicyViolation(); ok {
		o.Violation = "violation at " + id
	}
	return o
}

type scanned1 struct {
	Loc     Location
	Outline outline
}

// scanOutlines scans dir, skimming or not, and returns what it visited,
// the result, how many traces were skimmed, and the error.
func scanOutlines(t *testing.T, dir string, opts Options, skim bool) ([]scanned1, *ScanResult, int64, error) {
	t.Helper()
	var skimmed atomic.Int64
	sum := Summarizer[outline]{Trace: outlineOf}
	if skim {
		sum.Skim = func(s *trace.Skim) outline {
			skimmed.Add(1)
			return outlineOfSkim(s)
		}
	}
	var got []scanned1
	res, err := ScanWith(context.Background(), dir, opts, sum, func(loc Location, o outline) error {
		got = append(got, scanned1{loc, o})
		return nil
	}, nil)
	return got, res, skimmed.Load(), err
}

// TestScanSkimMatchesDecode checks that a scan that skims visits the same
// traces, at the same locations, with the same summaries, and fails or
// skips with the same errors, as one that decodes every trace, on a tree
// of valid and invalid files and JSON Lines records of every format.
func TestScanSkimMatchesDecode(t *testing.T) {
	corpus := tracetest.Generate(tracetest.Config{Traces: 40, Seed: 3, Procedures: 3, MinLen: 2, MaxLen: 5})
	files := map[string]string{
		"a.json":          "\ufeff" + `{"actions": [{"kind": "tool_call", "name": "ticket.read"}], "metadata": {"agent": {"name": "x"}}}`,
		"sub/b.jsonl":     "\ufeff" + fmt.Sprintf(okTrace, "b1") + "\r\n   \n" + fmt.Sprintf(okTrace, "b2"),
		"run/record.json": record,
		"neither.json":    `{"id": "n"}`,
		"dup.json":        `{"actions": [{"kind": "k", "name": "n", "output": {"a": 1, "a": 2}}]}`,
		"types.json":      `{"actions": [{"kind": "k", "name": "n", "cost": {"input_tokens": -1}}]}`,
		"rare.json":       `{"actions": [{"kind": "k", "name": "n", "duration_ms": 1.5e2}]}`,
		"policy.json":     `{"actions": [{"id": "x", "kind": "k", "name": "n", "metadata": {"policy_status": "unresolved"}}]}`,
		"bad/broken.json": `{"actions": [`,
		"bad/lines.jsonl": fmt.Sprintf(okTrace, "l1") + "\n{\n" + fmt.Sprintf(okTrace, "l1") + "\n" + `{"actions": [{"kind": ""}]}` + "\n",
		"ids/same.jsonl":  fmt.Sprintf(okTrace, "same") + "\n" + fmt.Sprintf(okTrace, "same") + "\n",
		"README.md":       "not a trace",
	}
	var lines []string
	for _, tr := range corpus.Traces {
		data := string(encodeJSON(t, tr))
		files["gen/one/"+tracetest.FileName(tr)] = data
		lines = append(lines, data)
	}
	files["gen/corpus.jsonl"] = strings.Join(lines, "\n") + "\n"
	for _, skip := range []bool{false, true} {
		t.Run(fmt.Sprintf("skip-invalid=%v", skip), func(t *testing.T) {
			dir := t.TempDir()
			writeTree(t, dir, files)
			opts := Options{SkipInvalid: skip}
			want, wantRes, _, wantErr := scanOutlines(t, dir, opts, false)
			got, gotRes, skimmed, gotErr := scanOutlines(t, dir, opts, true)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("skimming scan error:\n%v\ndecoding scan error:\n%v", gotErr, wantErr)
			}
			if !skip {
				if wantErr == nil {
					t.Fatal("a scan of invalid files without skip-invalid succeeded")
				}
				return
			}
			if wantErr != nil {
				t.Fatal(wantErr)
			}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(Location{})); diff != "" {
				t.Errorf("visited (-decoding +skimming):\n%s", diff)
			}
			if diff := cmp.Diff(wantRes.Skipped, gotRes.Skipped); diff != "" {
				t.Errorf("skipped (-decoding +skimming):\n%s", diff)
			}
			// The generated traces (twice), a.json, policy.json and
			// the two valid records of sub/b.jsonl, bad/lines.jsonl
			// and ids/same.jsonl (whose second trace the scan then
			// refuses as a duplicate id) are skimmed; the rest are
			// decoded.
			if wantSkimmed := int64(2*len(corpus.Traces) + 8); skimmed != wantSkimmed {
				t.Errorf("skimmed %d traces, want %d", skimmed, wantSkimmed)
			}
		})
	}
}

// TestScanUseSkim checks that UseSkim turns skimming off for a scan.
func TestScanUseSkim(t *testing.T) {
	dir := t.TempDir()
	writeGenerated(t, dir, 20, true)
	var skimmed, decoded atomic.Int64
	sum := Summarizer[int]{
		Trace:   func(*trace.Trace) int { decoded.Add(1); return 0 },
		Skim:    func(*trace.Skim) int { skimmed.Add(1); return 0 },
		UseSkim: func() bool { return false },
	}
	if _, err := ScanWith(context.Background(), dir, Options{}, sum, func(Location, int) error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if skimmed.Load() != 0 || decoded.Load() != 20 {
		t.Errorf("skimmed %d and decoded %d traces, want 0 and 20", skimmed.Load(), decoded.Load())
	}
}

// TestScanSkimKnown checks that a skimming scan still leaves out the
// documents Options.Known knows, and gives the others their hash.
func TestScanSkimKnown(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": fmt.Sprintf(okTrace, "a"), "b.json": fmt.Sprintf(okTrace, "b")})
	data, err := os.ReadFile(filepath.Join(dir, "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	known := trace.HashBytes(data)
	var hashes []string
	sum := Summarizer[string]{Trace: func(t *trace.Trace) string { return t.SourceHash }, Skim: func(s *trace.Skim) string { return s.SourceHash }}
	res, err := ScanWith(context.Background(), dir, Options{Known: func(h string) bool { return h == known }}, sum,
		func(loc Location, h string) error {
			if h != loc.SourceHash {
				t.Errorf("summary hash %s, location hash %s", h, loc.SourceHash)
			}
			hashes = append(hashes, h)
			return nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "b.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Known != 1 || len(hashes) != 1 || hashes[0] != trace.HashBytes(b) {
		t.Errorf("known %d, visited %v; want 1 known and b.json's hash", res.Known, hashes)
	}
}

func encodeJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestScanSkimSessionRecord checks that a *.json document with "actions"
// that the loader takes for an agent session record still is one to a
// skimming scan.
func TestScanSkimSessionRecord(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.json": fmt.Sprintf(okTrace, "a"), "otlp.json": `{"actions": [], "resourceSpans": []}`})
	for _, skim := range []bool{false, true} {
		_, _, _, err := scanOutlines(t, dir, Options{}, skim)
		if !errors.Is(err, ErrSessionLog) {
			t.Errorf("skim %v: scan error = %v, want ErrSessionLog", skim, err)
		}
	}
}
