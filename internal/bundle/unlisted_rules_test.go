package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// caseWithOutputFile is an eval-pack case whose output is read from a
// file of the bundle.
const caseWithOutputFile = `
[[rubrics]]
id = "shape"
kind = "deterministic"
[[rubrics.assertions]]
kind = "contains"
value = "1.0.0"
[[cases]]
id = "manifest"
rubrics = ["shape"]
severity = "blocking"
[cases.input]
output_file = "expected/out.json"
`

// evalPackBundle writes the release bundle with a case appended to its
// eval pack that names expected/out.json, and that file.
func evalPackBundle(t *testing.T) (dir string, m *Manifest) {
	t.Helper()
	s, h := releaseTraces(t, nil)
	dir, m = scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	if m.EvalPack.Path == nil {
		t.Fatal("the scenario wrote no eval pack")
	}
	pack := filepath.Join(dir, *m.EvalPack.Path)
	mustWrite(t, pack, append(mustRead(t, pack), caseWithOutputFile...))
	if err := os.MkdirAll(filepath.Join(dir, "expected"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "expected", "out.json"), []byte(`{"version": "1.0.0"}`))
	return dir, m
}

// TestValidateEvalPackListsItsFiles checks that a file an eval-pack case
// reads (output_file) is listed through the pack: the eval reads it, so it
// belongs in the bundle and is not an unlisted file.
func TestValidateEvalPackListsItsFiles(t *testing.T) {
	dir, _ := evalPackBundle(t)
	if v := Validate(dir); hasProblem(v, CodeFileUnlisted, "expected/out.json") {
		t.Errorf("the file an eval case reads is reported unlisted:\n%s", describe(v))
	}
}

// TestValidateBrokenEvalPackListsNothing checks that an eval pack that
// does not parse vouches for no file: the files its cases would name are
// unlisted, besides the pack's own problem.
func TestValidateBrokenEvalPackListsNothing(t *testing.T) {
	dir, m := evalPackBundle(t)
	pack := filepath.Join(dir, *m.EvalPack.Path)
	mustWrite(t, pack, append(mustRead(t, pack), "\n[[cases]\n"...))
	v := Validate(dir)
	if !hasProblem(v, CodeEvalPackInvalid, *m.EvalPack.Path) {
		t.Errorf("no %s problem for a pack that does not parse:\n%s", CodeEvalPackInvalid, describe(v))
	}
	if !hasProblem(v, CodeFileUnlisted, "expected/out.json") {
		t.Errorf("a pack that does not parse still lists expected/out.json:\n%s", describe(v))
	}
}

// TestValidateEvalPackOutsideListsNothing checks that an eval pack the
// manifest places outside the bundle vouches for no file of the bundle,
// even when it parses and its cases name them: only what is in the bundle
// was reviewed.
func TestValidateEvalPackOutsideListsNothing(t *testing.T) {
	dir, m := evalPackBundle(t)
	// The pack, moved beside the bundle, still parses.
	outside := filepath.Join(filepath.Dir(dir), "pack.toml")
	if err := os.Rename(filepath.Join(dir, *m.EvalPack.Path), outside); err != nil {
		t.Fatal(err)
	}
	rewriteManifest(t, dir, func(g map[string]any) {
		g["eval_pack"].(map[string]any)["path"] = "../pack.toml"
	})
	v := Validate(dir)
	if !hasProblem(v, CodePathEscape, "$.eval_pack.path") {
		t.Errorf("no %s problem for an eval pack outside the bundle:\n%s", CodePathEscape, describe(v))
	}
	if !hasProblem(v, CodeFileUnlisted, "expected/out.json") {
		t.Errorf("an eval pack outside the bundle lists expected/out.json:\n%s", describe(v))
	}
}

// TestValidateEvalPackNotAFileListsNothing checks that an eval pack path
// that names a directory lists nothing: the directory's files are
// unlisted.
func TestValidateEvalPackNotAFileListsNothing(t *testing.T) {
	dir, m := evalPackBundle(t)
	p := filepath.Join(dir, *m.EvalPack.Path)
	pack := mustRead(t, p)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(p, "pack.toml"), pack)
	v := Validate(dir)
	if !hasProblem(v, CodeFileMissing, *m.EvalPack.Path) {
		t.Errorf("no %s problem for an eval pack that is a directory:\n%s", CodeFileMissing, describe(v))
	}
	if !hasProblem(v, CodeFileUnlisted, "expected/out.json") {
		t.Errorf("an eval pack that is a directory lists expected/out.json:\n%s", describe(v))
	}
}

// TestValidateUnlistedConfigSaysWhy checks that a configuration file
// found in a bundle, in any case and directory, is reported with why it
// matters: it is never loaded, the project's configuration binds the
// tools; any other unlisted file is reported as one nothing checks.
func TestValidateUnlistedConfigSaysWhy(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	mustWrite(t, filepath.Join(dir, "fixtures", "Crystallize.TOML"), []byte("[tools]\n"))
	mustWrite(t, filepath.Join(dir, "run.sh"), []byte("echo\n"))
	v := Validate(dir)
	for p, why := range map[string]string{"fixtures/Crystallize.TOML": "never loaded", "run.sh": "only the files its manifest lists"} {
		found := false
		for _, pr := range v.Problems {
			found = found || pr.Code == CodeFileUnlisted && pr.Path == p && strings.Contains(pr.Message, why)
		}
		if !found {
			t.Errorf("no %s problem for %s saying %q:\n%s", CodeFileUnlisted, p, why, describe(v))
		}
	}
}
