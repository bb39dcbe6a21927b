package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestReadRefusesUndecodableManifest checks that a manifest whose schema
// markers are right but whose members do not decode (a side effect
// without its kind) is an error naming the file, never a bundle without
// a manifest.
func TestReadRefusesUndecodableManifest(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	rewriteManifest(t, dir, func(g map[string]any) {
		g["side_effects"] = []any{map[string]any{"target": "harn.toml"}}
	})
	b, err := Read(dir)
	if err == nil {
		t.Fatalf("Read of a manifest whose side effect has no kind: no error (manifest %v)", b.Manifest)
	}
	if !strings.Contains(err.Error(), ManifestFile) || !strings.Contains(err.Error(), "kind") {
		t.Errorf("Read: %v, want an error naming %s and the missing kind", err, ManifestFile)
	}
	v := Validate(dir)
	if v.OK || !hasProblem(v, CodeManifestInvalid, ManifestFile) {
		t.Errorf("Validate of that manifest: want %s:\n%s", CodeManifestInvalid, describe(v))
	}
	for _, p := range v.Problems {
		if strings.Contains(p.Message, "internal error") {
			t.Errorf("Validate reports %q, want the decoding error", p.Message)
		}
	}
}

// TestReadReportMissing checks that a bundle whose report.json is gone is
// an error, not a bundle with no report: readers that list candidates or
// check the workflow must not take "unreadable" for "empty".
func TestReadReportMissing(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if err := os.Remove(filepath.Join(dir, ReportFile)); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReport(dir)
	if err == nil {
		t.Fatalf("ReadReport without %s: no error (report %v)", ReportFile, r)
	}
	if !strings.Contains(err.Error(), ReportFile) {
		t.Errorf("ReadReport: %v, want an error naming %s", err, ReportFile)
	}
	if _, err := ReplayShadow(dir); err == nil {
		t.Error("ReplayShadow without a report: no error")
	}
}

// TestShadowRefusesFixtureOfAnotherTrace checks that a shadow replay reads
// only the fixtures the manifest names: a fixture file whose trace id, or
// whose source hash, is not the one recorded is refused, even when its
// sha256 matches, since the replay would otherwise vouch for another run.
func TestShadowRefusesFixtureOfAnotherTrace(t *testing.T) {
	s, h := releaseTraces(t, nil)
	for _, field := range []string{"trace_id", "source_hash"} {
		t.Run(field, func(t *testing.T) {
			dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
			if sc, err := ReplayShadow(dir); err != nil || !sc.Matches {
				t.Fatalf("ReplayShadow of the bundle as written: %+v, %v", sc, err)
			}
			rewriteManifest(t, dir, func(g map[string]any) {
				f := g["fixtures"].([]any)[0].(map[string]any)
				f[field] = "other_" + f[field].(string)
			})
			_, err := ReplayShadow(dir)
			if err == nil || !strings.Contains(err.Error(), m.Fixtures[0].Path) || !strings.Contains(err.Error(), "holds trace") {
				t.Errorf("ReplayShadow with fixture %s changed in the manifest: %v, want holds trace ... naming %s", field, err, m.Fixtures[0].Path)
			}
		})
	}
}

// TestExampleActionsRefusesChangedFixture checks that the actions of the
// examples are read only from fixtures as the bundle recorded them: a
// fixture changed since is an error, not statistics from other bytes.
func TestExampleActionsRefusesChangedFixture(t *testing.T) {
	s, h := releaseTraces(t, nil)
	withIDs := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		for e, tr := range examples {
			for _, a := range tr.Actions[len(tr.Actions)-len(c.Steps):] {
				c.Examples[e].ActionIDs = append(c.Examples[e].ActionIDs, a.ID)
			}
		}
		return c
	}
	dir, m := scenario{sources: s, heldout: h, build: withIDs, opts: opts()}.write(t)
	p := filepath.Join(dir, filepath.FromSlash(m.Fixtures[0].Path))
	mustWrite(t, p, append(mustRead(t, p), '\n'))
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if acts, err := b.ExampleActions(); err == nil || !strings.Contains(err.Error(), m.Fixtures[0].Path) {
		t.Errorf("ExampleActions with a changed fixture = %d examples, %v; want an error naming %s", len(acts), err, m.Fixtures[0].Path)
	}
}

// TestNoCandidateNoExamples checks that a bundle without a candidate has
// no candidate and no example actions, and says so without an error.
func TestNoCandidateNoExamples(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, noCandidate: true, opts: opts()}.write(t)
	if m.CandidateID != "" {
		t.Fatalf("candidate id %q, want none", m.CandidateID)
	}
	b, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := b.Candidate(); c != nil || err != nil {
		t.Errorf("Candidate() = %v, %v; want nil, nil", c, err)
	}
	if acts, err := b.ExampleActions(); acts != nil || err != nil {
		t.Errorf("ExampleActions() = %v, %v; want nil, nil", acts, err)
	}
}

// TestPeekSchemaAsWritten checks that the schema marker and version a
// refused manifest holds are shown as written, whatever their type, and
// as nothing when missing or when the manifest is not a JSON object.
func TestPeekSchemaAsWritten(t *testing.T) {
	for doc, want := range map[string][2]string{
		`{"schema": "x.y", "schema_version": 2}`: {"x.y", "2"},
		`{"schema": 3, "schema_version": "one"}`: {"3", `"one"`},
		`{"schema_version": 1.5}`:                {"", "1.5"},
		`{"schema": "x.y"}`:                      {"x.y", ""},
		`["schema"]`:                             {"", ""},
		`{`:                                      {"", ""},
	} {
		s, v := peekSchema([]byte(doc))
		if s != want[0] || v != want[1] {
			t.Errorf("peekSchema(%s) = %q, %q; want %q, %q", doc, s, v, want[0], want[1])
		}
	}
}

// TestReadReportKeepsNumbers checks that numbers in the report's generic
// values (a parameter's example values) are read as written, so that a
// large id compares and is written again digit for digit, not rounded
// through a float.
func TestReadReportKeepsNumbers(t *testing.T) {
	s, h := releaseTraces(t, nil)
	withBig := func(examples []*trace.Trace) candidate.Candidate {
		c := releaseCandidate(examples)
		c.Parameters[0].Examples = []any{json.Number("12345678901234567891")}
		return c
	}
	dir, m := scenario{sources: s, heldout: h, build: withBig, opts: opts()}.write(t)
	r, err := ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := findCandidate(r, m.CandidateID).Parameters[0].Examples
	if len(got) != 1 || got[0] != json.Number("12345678901234567891") {
		t.Errorf("example %#v, want json.Number 12345678901234567891", got)
	}
}

// TestShadowRefusesUnknownRole checks that a shadow replay refuses a
// fixture whose role is neither source nor heldout instead of leaving it
// out of the comparison.
func TestShadowRefusesUnknownRole(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	rewriteManifest(t, dir, func(g map[string]any) { g["fixtures"].([]any)[3].(map[string]any)["role"] = "training" })
	if _, err := ReplayShadow(dir); err == nil || !strings.Contains(err.Error(), `role "training"`) || !strings.Contains(err.Error(), m.Fixtures[3].Path) {
		t.Errorf("ReplayShadow with a fixture of role training = %v, want a refusal naming %s", err, m.Fixtures[3].Path)
	}
}
