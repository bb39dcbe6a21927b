package bundle

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestLogicalSecretID checks the shape of a logical secret id at its
// edges: empty, the first byte, the length bound.
func TestLogicalSecretID(t *testing.T) {
	for id, want := range map[string]bool{
		"GITHUB_TOKEN": true, "A": true, "Z9": true, "Z9_": false, "A__B": false, strings.Repeat("A", 128): true,
		"": false, "_TOKEN": false, "9TOKEN": false, "github_token": false, "@A": false, "[A": false,
		strings.Repeat("A", 129): false, "A-B": false,
	} {
		if got := isLogicalSecretID(id); got != want {
			t.Errorf("isLogicalSecretID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestBlockersRejectedCodes checks that a rejected candidate's blocking
// reason names each rejection code once, in order.
func TestBlockersRejectedCodes(t *testing.T) {
	c := &candidate.Candidate{RejectionReasons: []candidate.Problem{{Code: "b"}, {Code: "a"}, {Code: "b"}}}
	rs := blockers(c, 0, nil, 2, 0.5)
	i := slices.IndexFunc(rs, func(r Reason) bool { return r.Code == ReasonCandidateRejected })
	if i < 0 || rs[i].Message != "the candidate is rejected (b, a)" {
		t.Errorf("blockers %+v, want %s %q", rs, ReasonCandidateRejected, "the candidate is rejected (b, a)")
	}
}

// TestSafePathEmpty checks that an empty manifest path is reported as
// one that could leave the bundle, saying why.
func TestSafePathEmpty(t *testing.T) {
	x := &validator{v: &Validation{}}
	if x.safePath("", "files[0].path") {
		t.Fatal("safePath(\"\") = true")
	}
	if len(x.v.Problems) != 1 || !strings.Contains(x.v.Problems[0].Message, "empty path") {
		t.Errorf("problems %+v, want one about an empty path", x.v.Problems)
	}
}

// TestBuildNeedsWorkflow checks that a bundle is not built without the
// workflow the caller rendered.
func TestBuildNeedsWorkflow(t *testing.T) {
	if _, err := build(Input{Report: &candidate.Report{}}, Options{}); err == nil || !strings.Contains(err.Error(), "no workflow source") {
		t.Errorf("build without a workflow: %v, want no workflow source", err)
	}
}

// TestOpenDirFile checks that the lock refuses to open what is not a
// directory (opening a FIFO would block).
func TestOpenDirFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := openDir(f); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		if d != nil {
			d.Close()
		}
		t.Errorf("openDir(file): %v, want is not a directory", err)
	}
}

// TestReadNotRegular checks that a bundle file that is a directory is
// reported as missing, not read.
func TestReadNotRegular(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "workflow.star"), 0o755); err != nil {
		t.Fatal(err)
	}
	x := &validator{dir: dir, v: &Validation{}}
	if _, err := x.read("workflow.star", "workflow"); err == nil {
		t.Fatal("read of a directory: no error")
	}
	if len(x.v.Problems) != 1 || x.v.Problems[0].Code != CodeFileMissing || !strings.Contains(x.v.Problems[0].Message, "is not a regular file") {
		t.Errorf("problems %+v, want %s: not a regular file", x.v.Problems, CodeFileMissing)
	}
}

// TestWriteDirRestores checks that when the new bundle cannot be moved
// into place after the old one was moved aside, the old one is put back
// and nothing is left beside it. The hook removes the new bundle's
// temporary directory just before the swap, which makes the swap fail.
func TestWriteDirRestores(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "b")
	manifest := []byte(`{"schema":"` + Schema + `"}`)
	old := []file{{name: ManifestFile, data: manifest}, {name: "marker", data: []byte("old")}}
	if err := writeDir(context.Background(), dir, old, nil); err != nil {
		t.Fatal(err)
	}
	sabotage := func(name string) error {
		if name != "rename" {
			return nil
		}
		tmps, _ := filepath.Glob(filepath.Join(parent, ".b.tmp-*"))
		for _, tmp := range tmps {
			if err := os.RemoveAll(tmp); err != nil {
				return err
			}
		}
		return nil
	}
	err := writeDir(context.Background(), dir, []file{{name: ManifestFile, data: manifest}, {name: "marker", data: []byte("new")}}, sabotage)
	if err == nil {
		t.Fatal("writeDir whose swap fails: no error")
	}
	if got, err := os.ReadFile(filepath.Join(dir, "marker")); err != nil || string(got) != "old" {
		t.Errorf("after the failed swap, marker = %q, %v; want the old bundle back", got, err)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the bundle: %v, want only b", names)
	}
}

// TestRejectedManifestWarnings checks that a bundle without a selected
// candidate carries the report's warnings, which say why mining found
// none, and each rejected candidate's reasons under its id.
func TestRejectedManifestWarnings(t *testing.T) {
	rep := &candidate.Report{
		Warnings:           []candidate.Problem{{Code: candidate.CodeScanLimit, Message: "looked at the 200 highest-ranked"}},
		RejectedCandidates: []candidate.Candidate{{ID: "candidate_x", RejectionReasons: []candidate.Problem{{Code: "secret", Message: "holds a secret"}}}},
	}
	m := newManifest(rep, nil, "none", nil, nil, Options{})
	if !slices.ContainsFunc(m.Warnings, func(p candidate.Problem) bool { return p.Code == candidate.CodeScanLimit }) {
		t.Errorf("manifest warnings %+v, want the report's %s", m.Warnings, candidate.CodeScanLimit)
	}
	if !slices.ContainsFunc(m.RejectionReasons, func(p candidate.Problem) bool { return p.Message == "candidate_x: holds a secret" }) {
		t.Errorf("manifest rejection reasons %+v, want candidate_x's under its id", m.RejectionReasons)
	}
}

// TestWriteStreamErrors checks that a file that cannot be created, or
// whose rendering fails, is an error.
func TestWriteStreamErrors(t *testing.T) {
	dir := t.TempDir()
	ok := func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }
	if err := writeStream(filepath.Join(dir, "missing", "f"), ok); err == nil {
		t.Error("writeStream into a missing directory: no error")
	}
	failed := errors.New("render failed")
	if err := writeStream(filepath.Join(dir, "f"), func(io.Writer) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("writeStream whose rendering fails: %v, want %v", err, failed)
	}
}

// TestValidateUnlistedFiles checks that a bundle holds only the files its
// manifest lists: a file added anywhere in it is a problem named by its
// path, since a reviewer reads what the manifest lists and nothing else
// may ride along (a crystallize.toml in a bundle would be a configuration
// nobody reviewed).
func TestValidateUnlistedFiles(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if v := Validate(dir); hasProblem(v, CodeFileUnlisted, "") {
		t.Fatalf("a bundle as written has unlisted files:\n%s", describe(v))
	}
	added := []string{"notes.txt", "fixtures/extra.json", "crystallize.toml"}
	for _, name := range added {
		mustWrite(t, filepath.Join(dir, filepath.FromSlash(name)), []byte("{}\n"))
	}
	v := Validate(dir)
	if v.OK {
		t.Error("Validate = OK for a bundle with files its manifest does not list")
	}
	for _, name := range added {
		if !hasProblem(v, CodeFileUnlisted, name) {
			t.Errorf("no %s problem for %s:\n%s", CodeFileUnlisted, name, describe(v))
		}
	}
}
