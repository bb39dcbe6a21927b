package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// benchReport builds a report shaped like a large mining run's: many
// candidates, each with its examples, parameters, constants, expected
// outputs and a shadow report with one alignment per trace.
func benchReport(candidates, examples int) *candidate.Report {
	r := &candidate.Report{Version: candidate.ReportVersion, GeneratedAt: "2026-01-01T00:00:00Z"}
	for i := range candidates {
		c := candidate.Candidate{
			ID:                fmt.Sprintf("candidate_%016x", i),
			Name:              fmt.Sprintf("bump_version_%d", i),
			Confidence:        0.93,
			Support:           examples,
			SequenceSignature: []string{"tool_call:git.status", "tool_call:fs.write", "tool_call:git.commit"},
			Capabilities:      []string{"fs.write", "git"},
			Shadow:            &candidate.ShadowReport{Pass: true, ComparedTraces: examples},
		}
		for p := range 3 {
			c.Parameters = append(c.Parameters, candidate.Parameter{
				Name: fmt.Sprintf("param_%d", p), Key: "path", SourcePaths: []string{"/steps/1/arguments/path"},
				Examples: []any{"releases/v1.2.3.md", json.Number("12"), map[string]any{"branch": "main", "token": "xyz"}},
				Type:     "string", Required: true,
			})
		}
		for s := range 3 {
			c.Steps = append(c.Steps, candidate.Step{
				Index: s, Kind: trace.KindToolCall, Name: "fs.write", Segment: candidate.Deterministic,
				Arguments: []candidate.Argument{
					{Key: "path", Kind: candidate.ArgParameter, Parameter: "param_0"},
					{Key: "mode", Kind: candidate.ArgConstant, Value: "0644"},
					{Key: "auth", Kind: candidate.ArgSecret, Secret: "DEPLOY_TOKEN"},
				},
				SideEffects:    []trace.SideEffect{{Kind: "file_write", Target: "releases/notes.md"}},
				ExpectedOutput: map[string]any{"ok": true, "bytes": json.Number("512")},
			})
			c.Constants = append(c.Constants, candidate.Constant{Step: s, Path: "/mode", Value: "0644"})
			c.ExpectedOutputs = append(c.ExpectedOutputs, candidate.ExpectedOutput{Step: s, Output: map[string]any{"ok": true}})
		}
		for e := range examples {
			id := fmt.Sprintf("trace-%06d-%06d", i, e)
			c.Examples = append(c.Examples, candidate.Example{
				TraceID: id, Source: "corpus/" + id + ".json", SourceHash: "sha256:0123456789abcdef0123456789abcdef",
				StartIndex: e % 40, ActionIDs: []string{"a1", "a2", "a3"}, Positions: []int{e % 40, e%40 + 1, e%40 + 2},
			})
			st := candidate.ShadowTrace{TraceID: id, SourceHash: "sha256:0123456789abcdef0123456789abcdef", Role: "source", Status: "pass", Fitness: 1}
			for m := range 3 {
				st.Alignment = append(st.Alignment, candidate.Move{Kind: "sync", Step: m, ActionIndex: e%40 + m, ActionID: fmt.Sprintf("a%d", m+1), Signature: "tool_call:fs.write"})
			}
			c.Shadow.Traces = append(c.Shadow.Traces, st)
		}
		r.Candidates = append(r.Candidates, c)
	}
	return r
}

// BenchmarkRedactReport times redacting a report of 50 candidates with
// 500 examples each (25,000 examples with their shadow alignments).
func BenchmarkRedactReport(b *testing.B) {
	r := benchReport(50, 500)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := RedactReport(r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRedactReportMatchesJSON: the typed redaction encodes to the same
// report.json as redacting the report's generic JSON did, with the same
// count, on a report with secrets in names, values and keys.
func TestRedactReportMatchesJSON(t *testing.T) {
	r := benchReport(3, 4)
	c := &r.Candidates[1]
	c.Name = "deploy_" + fakeToken
	c.Examples[2].TraceID = "session-" + fakeToken
	c.Parameters[0].Examples = append(c.Parameters[0].Examples, "Bearer "+fakeToken, 1.5, []string{fakeToken})
	c.Steps[1].ExpectedOutput = map[string]any{"password": "hunter2", fakeToken: "x"}
	c.Steps[2].SideEffects[0].Metadata = map[string]any{"api_key": "abc", "n": json.Number("3")}
	c.Shadow.Traces[0].Details = []candidate.Problem{{Code: "x", Message: "saw " + fakeToken}}
	r.RejectedCandidates = []candidate.Candidate{r.Candidates[0]}

	got, n, err := RedactReport(r)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := candidate.EncodeJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	v, err := decodeGeneric(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, wn := redact.Value(v)
	var want candidate.Report
	if err := remarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	// Logical secret ids are kept, as RedactReport keeps them.
	restore := func(orig, red []candidate.Candidate) {
		for i := range orig {
			for j := range orig[i].Steps {
				for k, a := range orig[i].Steps[j].Arguments {
					if a.Kind == candidate.ArgSecret && a.Secret != "" {
						red[i].Steps[j].Arguments[k].Secret = a.Secret
						wn--
					}
				}
			}
		}
	}
	restore(r.Candidates, want.Candidates)
	restore(r.RejectedCandidates, want.RejectedCandidates)
	gb, err := candidate.EncodeJSON(got)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := candidate.EncodeJSON(&want)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gb, wb) {
		t.Errorf("typed redaction differs from the generic one:\n%s\nwant:\n%s", gb, wb)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Error("typed redaction encodes like the generic one but holds other Go values")
	}
	if n != wn {
		t.Errorf("counted %d redactions, the generic path %d", n, wn)
	}
	if bytes.Contains(gb, []byte(fakeToken)) {
		t.Error("the redacted report holds the token")
	}
}

// BenchmarkBuildFixtures times finding and redacting the fixtures of a
// candidate with 2,000 examples among 2,000 source traces: once a scan
// of the sources per example, now one index.
func BenchmarkBuildFixtures(b *testing.B) {
	const n = 2000
	var sources []*trace.Trace
	c := &candidate.Candidate{ID: "c1"}
	for i := range n {
		t := &trace.Trace{Version: 1, ID: fmt.Sprintf("trace-%06d", i), SourceHash: fmt.Sprintf("sha256:%064x", i), Actions: []trace.Action{
			{ID: "a1", Kind: trace.KindToolCall, Name: "git.status", Parameters: map[string]any{"path": "."}, Output: map[string]any{"clean": true}},
		}}
		sources = append(sources, t)
		c.Examples = append(c.Examples, candidate.Example{TraceID: t.ID, SourceHash: t.SourceHash})
	}
	in := Input{Sources: sources}
	b.ReportAllocs()
	for b.Loop() {
		fs, _, _, err := buildFixtures(in, c)
		if err != nil || len(fs) != n {
			b.Fatal(len(fs), err)
		}
	}
}
