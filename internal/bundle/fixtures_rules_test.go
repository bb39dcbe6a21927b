package bundle

import (
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestFixturesOnePerTrace checks that a bundle holds one fixture per
// trace, sources first then held-out ones: a trace given both as a source
// and held out is written once, as a source, and two traces with one id
// but different contents (source hashes) each get a file of their own, so
// that neither overwrites the other.
func TestFixturesOnePerTrace(t *testing.T) {
	s, h := releaseTraces(t, nil)
	// Another run recorded under trace_a's id: the same id, other bytes.
	sameID := readTrace(t, "testdata/release/holdout.json", "/home/alice/holdout/again.json", func(doc string) string {
		return strings.Replace(doc, `"id": "trace_holdout"`, `"id": "trace_a"`, 1)
	})
	if sameID.ID != s[0].ID || sameID.SourceHash == s[0].SourceHash {
		t.Fatalf("test trace: id %s hash %s, want trace_a's id with another hash", sameID.ID, sameID.SourceHash)
	}
	heldout := []*trace.Trace{h[0], s[1], sameID}
	dir, m := scenario{sources: s, heldout: heldout, build: releaseCandidate, opts: opts()}.write(t)
	type fx struct{ path, id, role string }
	var got []fx
	for _, f := range m.Fixtures {
		got = append(got, fx{f.Path, f.TraceID, f.Role})
	}
	want := []fx{
		{"fixtures/trace_a.json", "trace_a", candidate.RoleSource},
		{"fixtures/trace_b.json", "trace_b", candidate.RoleSource},
		{"fixtures/trace_c.json", "trace_c", candidate.RoleSource},
		{"fixtures/trace_holdout.json", "trace_holdout", candidate.RoleHeldout},
		{"fixtures/trace_a-2.json", "trace_a", candidate.RoleHeldout},
	}
	if !slices.Equal(got, want) {
		t.Errorf("fixtures\n  %v\nwant\n  %v", got, want)
	}
	if m.Fixtures[4].SourceHash != sameID.SourceHash || m.Fixtures[0].SourceHash != s[0].SourceHash {
		t.Errorf("fixtures with one id do not keep their own source hashes: %+v", m.Fixtures)
	}
	if v := Validate(dir); hasProblem(v, CodeFixtureHash, "") || hasProblem(v, CodeFixtureInvalid, "") || hasProblem(v, CodeFileUnlisted, "") {
		t.Errorf("Validate:\n%s", describe(v))
	}
}
