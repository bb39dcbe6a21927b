package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/redact"
)

// redactReport is how a bundle's report was built before bundleReport,
// through generic values, kept as the reference bundleReport must match.
// It returns the report as a generic JSON object with
// provenance paths made relative and every private payload redacted, and
// the number of redactions.
func redactReport(r *candidate.Report) (map[string]any, int, error) {
	raw, err := candidate.EncodeJSON(r)
	if err != nil {
		return nil, 0, fmt.Errorf("encoding report: %w", err)
	}
	v, err := decodeGeneric(raw)
	if err != nil {
		return nil, 0, err
	}
	doc := v.(map[string]any)
	relativize(doc, "workflow_path")
	if ss, ok := doc["shadow_sources"].([]any); ok {
		for i, s := range ss {
			if s, ok := s.(string); ok {
				ss[i] = localPath(s)
			}
		}
	}
	for _, sf := range objects(doc["skipped_files"]) {
		old, _ := sf["path"].(string)
		relativize(sf, "path")
		if errs, ok := sf["errors"].([]any); ok && old != "" {
			for i, e := range errs {
				if e, ok := e.(string); ok {
					errs[i] = strings.ReplaceAll(e, old, localPath(old))
				}
			}
		}
	}
	for _, ex := range objects(doc["excluded_traces"]) {
		relativize(ex, "source")
	}
	for _, key := range []string{"candidates", "rejected_candidates"} {
		for _, c := range objects(doc[key]) {
			for _, ex := range objects(c["examples"]) {
				relativize(ex, "source")
			}
		}
	}
	out, n := redact.Value(doc)
	out, h := redact.Homes(out)
	return out.(map[string]any), n + h, nil
}

// TestBundleReportMatchesGeneric checks that bundleReport gives what the
// generic road gives (encode, make paths relative, redact, anonymize home
// directories, decode), bytes and Go values, and counts the same
// replacements, on a report with secrets in names and values, absolute
// and home paths everywhere a path is made relative, home directories in
// messages and in values of every kind, and invalid UTF-8.
func TestBundleReportMatchesGeneric(t *testing.T) {
	r := benchReport(3, 4)
	c := &r.Candidates[1]
	c.Name = "deploy_" + fakeToken
	c.Examples[2].TraceID = "session-" + fakeToken
	c.Examples[0].Source = "/home/alice/runs/a.json"
	c.Examples[1].Source = `C:\Users\bob\runs\b.json`
	c.Examples[3].Source = "runs/c.json"
	c.Parameters[0].Examples = append(c.Parameters[0].Examples, "Bearer "+fakeToken, 1.5, []string{"/Users/carol/x", fakeToken}, "bad \xff utf8")
	c.Steps[1].ExpectedOutput = map[string]any{"password": "hunter2", "path": "/home/dave/out.txt", "n": json.Number("3")}
	c.Steps[2].SideEffects[0].Target = "/home/erin/project/file.go"
	c.Steps[2].SideEffects[0].Metadata = map[string]any{"api_key": "abc", "cwd": "/Users/frank/src"}
	c.Shadow.Traces[0].Details = []candidate.Problem{{Code: "x", Message: "saw " + fakeToken + " in /home/gina/log"}}
	c.Warnings = append(c.Warnings, candidate.Problem{Code: "w", Message: "read /home/hank/.config"})
	// A typed map: every value of a derivation's inputs, not only the
	// first the walk meets.
	c.DerivedParameters = append(c.DerivedParameters, candidate.DerivedParameter{
		Parameter:  candidate.Parameter{Name: "dest", Key: "dest", Type: "string"},
		Expression: `repo + "/" + out`, Refs: []string{"out", "repo"},
		Evidence: []candidate.DerivationEvidence{{TraceID: "t1", Role: candidate.RoleSource,
			Inputs: map[string]string{"repo": "/home/jack/src", "out": "/Users/kim/out", "mode": "plain"}}},
	})
	r.RejectedCandidates = []candidate.Candidate{r.Candidates[0]}
	r.WorkflowPath = "/home/alice/out/workflow.star"
	r.ShadowSources = []string{"/home/alice/holdout", "relative/dir", "file:///tmp/x"}
	r.SkippedFiles = []candidate.SkippedFile{{Path: "/home/alice/runs/broken.json", Errors: []string{"/home/alice/runs/broken.json: $.actions: missing"}}}
	r.ExcludedTraces = []candidate.Exclusion{{TraceID: "t9", Source: "/Users/ivy/t9.json", Code: "c", Message: "in /Users/ivy"}}
	before, err := candidate.EncodeJSON(r)
	if err != nil {
		t.Fatal(err)
	}

	got, n, err := bundleReport(r)
	if err != nil {
		t.Fatal(err)
	}
	doc, wn, err := redactReport(r)
	if err != nil {
		t.Fatal(err)
	}
	var want candidate.Report
	if err := remarshal(doc, &want); err != nil {
		t.Fatal(err)
	}
	if n != wn {
		t.Errorf("bundleReport counted %d replacements, the generic road %d", n, wn)
	}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("bundleReport differs from the generic road (-want +got):\n%s", diff)
	}
	gotJSON, err := candidate.EncodeJSON(reportFile{Report: got, SkillCandidates: []any{map[string]any{"name": "x"}}, RejectedSkillCandidates: []any{}})
	if err != nil {
		t.Fatal(err)
	}
	doc["skill_candidates"] = []any{map[string]any{"name": "x"}}
	doc["rejected_skill_candidates"] = []any{}
	wantJSON, err := candidate.EncodeJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Errorf("report.json differs from the generic road's")
	}
	for _, leak := range []string{fakeToken, "alice", "carol", "dave", "erin", "frank", "gina", "hank", "ivy", "hunter2", "jack", "kim"} {
		if strings.Contains(string(gotJSON), leak) {
			t.Errorf("report.json holds %q", leak)
		}
	}
	if after, _ := candidate.EncodeJSON(r); !bytes.Equal(after, before) {
		t.Error("bundleReport changed the report it was given")
	}
}

// BenchmarkBundleReport builds a bundle's report from a report of 50
// candidates of 500 examples with shadow alignments, on the typed road
// and through generic values.
func BenchmarkBundleReport(b *testing.B) {
	r := benchReport(50, 500)
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := bundleReport(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("generic", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			doc, _, err := redactReport(r)
			if err != nil {
				b.Fatal(err)
			}
			var rep candidate.Report
			if err := remarshal(doc, &rep); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestWriteReportEncodingFails gives Write a report that cannot be
// encoded (a parameter example that is not a valid JSON number): it fails
// naming the report, and leaves neither the bundle nor a temporary
// directory behind.
func TestWriteReportEncodingFails(t *testing.T) {
	s, h := releaseTraces(t, nil)
	in := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.input(t)
	c := &in.Report.Candidates[0]
	c.Parameters[0].Examples = append(c.Parameters[0].Examples, json.Number("not a number"))
	parent := t.TempDir()
	_, err := Write(context.Background(), filepath.Join(parent, "bundle"), in, opts())
	if err == nil || !strings.Contains(err.Error(), "encoding "+ReportFile) {
		t.Fatalf("Write = %v, want an error naming the report", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("a failed Write left %v", ents)
	}
}
