package bundle

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSafePathReasons checks each way a manifest path could leave the
// bundle, or name a file other than the one it seems to, is refused with
// its reason, and that an ordinary relative path is accepted.
func TestSafePathReasons(t *testing.T) {
	for p, want := range map[string]string{
		"":                 "empty path",
		"/etc/passwd":      "is absolute",
		`\\server\share`:   "is absolute",
		"C:/x.json":        "is absolute",
		`fixtures\a.json`:  "backslash or NUL",
		"fixtures/a\x00":   "backslash or NUL",
		"..":               "leaves the bundle",
		"../a.json":        "leaves the bundle",
		"fixtures/../../a": "leaves the bundle",
		"fixtures/..":      "leaves the bundle",
		"fixtures/./a":     "is not clean",
		"fixtures//a":      "is not clean",
		"fixtures/":        "is not clean",
		"./a.json":         "is not clean",
		"fixtures/a.json":  "",
	} {
		x := &validator{v: &Validation{}}
		ok := x.safePath(p, "f")
		switch {
		case want == "" && (!ok || len(x.v.Problems) != 0):
			t.Errorf("safePath(%q) = %v, %+v; want accepted", p, ok, x.v.Problems)
		case want != "" && (ok || len(x.v.Problems) != 1 || x.v.Problems[0].Code != CodePathEscape || !strings.Contains(x.v.Problems[0].Message, want)):
			t.Errorf("safePath(%q) = %v, %+v; want refused: %s", p, ok, x.v.Problems, want)
		}
	}
}

// TestValidateReportHoldsCandidate checks that a report.json that does not
// hold the manifest's candidate is refused: the reviewer reads the
// candidate's evidence there, so it must be the one the bundle runs.
func TestValidateReportHoldsCandidate(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	p := filepath.Join(dir, ReportFile)
	var doc map[string]any
	if err := json.Unmarshal(mustRead(t, p), &doc); err != nil {
		t.Fatal(err)
	}
	doc["candidates"] = []any{}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, p, out)
	v := Validate(dir)
	if v.OK || !hasProblem(v, CodeReportInvalid, ReportFile) {
		t.Fatalf("Validate of a report without the candidate:\n%s", describe(v))
	}
	found := false
	for _, pr := range v.Problems {
		found = found || pr.Code == CodeReportInvalid && strings.Contains(pr.Message, m.CandidateID)
	}
	if !found {
		t.Errorf("no %s problem naming candidate %s:\n%s", CodeReportInvalid, m.CandidateID, describe(v))
	}
}

// TestShadowRefusesFixtureOutsideBundle checks that a shadow replay reads
// no fixture outside the bundle, even one with the recorded sha256: what
// the bundle vouches for is only what it holds.
func TestShadowRefusesFixtureOutsideBundle(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, m := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	f := m.Fixtures[0].Path
	outside := filepath.Join(filepath.Dir(dir), "outside.json")
	if err := os.Rename(filepath.Join(dir, filepath.FromSlash(f)), outside); err != nil {
		t.Fatal(err)
	}
	rewriteManifest(t, dir, func(g map[string]any) {
		g["fixtures"].([]any)[0].(map[string]any)["path"] = "../outside.json"
	})
	if _, err := ReplayShadow(dir); err == nil || !strings.Contains(err.Error(), "leaves the bundle") {
		t.Errorf("ReplayShadow with a fixture outside the bundle: %v, want leaves the bundle", err)
	}
}
