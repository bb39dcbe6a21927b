package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// TestStageWritesTheBundleWriteWrites checks that a bundle staged in a
// batch and committed is the bundle Write writes, byte for byte, and that
// Stage returns its manifest and eval pack.
func TestStageWritesTheBundleWriteWrites(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	written, _ := sc.write(t)

	staged := filepath.Join(t.TempDir(), "bundle")
	batch := atomicfile.NewBatch(0o644)
	st, err := Stage(batch, staged, sc.input(t), sc.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(staged, ManifestFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("before Commit the manifest is in place (%v)", err)
	}
	if err := batch.Commit(); err != nil {
		t.Fatal(err)
	}
	rel := func(dir string) map[string]string {
		out := map[string]string{}
		for p, data := range files(t, dir) {
			r, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(r)] = data
		}
		return out
	}
	if diff := cmp.Diff(rel(written), rel(staged)); diff != "" {
		t.Errorf("staged bundle differs from the written one (-written +staged):\n%s", diff)
	}
	if st.Manifest == nil || st.Manifest.CandidateID == "" || st.Manifest.EvalPack.Path == nil {
		t.Fatalf("Stage returned manifest %+v", st.Manifest)
	}
	if want := mustRead(t, filepath.Join(staged, *st.Manifest.EvalPack.Path)); string(st.EvalPack) != string(want) {
		t.Errorf("Stage returned an eval pack other than the one it staged")
	}
	if v := Validate(staged); hasProblem(v, CodeFileUnlisted, "") || hasProblem(v, CodeFixtureHash, "") || hasProblem(v, CodeWorkflowHash, "") {
		t.Errorf("Validate of the staged bundle:\n%s", describe(v))
	}
}

// TestStageRefuses checks that Stage adds nothing to the batch, and says
// why, when the directory already holds files (a batch only adds files,
// so an older bundle's fixtures would stay beside the new ones), when the
// input is inconsistent, and when a file cannot be staged.
func TestStageRefuses(t *testing.T) {
	s, h := releaseTraces(t, nil)
	sc := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}
	hookFails := errors.New("disk full")
	for _, tt := range []struct {
		name    string
		prepare func(t *testing.T, dir string) (Input, Options)
		want    func(error) bool
	}{
		{"directory not empty", func(t *testing.T, dir string) (Input, Options) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(dir, "old.json"), []byte("{}"))
			return sc.input(t), sc.opts
		}, func(err error) bool { return errors.Is(err, ErrBundleExists) }},
		{"no workflow", func(t *testing.T, dir string) (Input, Options) {
			in := sc.input(t)
			in.Workflow = nil
			return in, sc.opts
		}, func(err error) bool { return err != nil && strings.Contains(err.Error(), "no workflow source") }},
		{"a file cannot be staged", func(t *testing.T, dir string) (Input, Options) {
			o := sc.opts
			o.hook = func(name string) error {
				if name == ReportFile {
					return hookFails
				}
				return nil
			}
			return sc.input(t), o
		}, func(err error) bool { return errors.Is(err, hookFails) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bundle")
			in, o := tt.prepare(t, dir)
			batch := atomicfile.NewBatch(0o644)
			st, err := Stage(batch, dir, in, o)
			if err == nil || st != nil || !tt.want(err) {
				t.Fatalf("Stage = %+v, %v", st, err)
			}
			batch.Discard()
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if e.Name() != "old.json" {
					t.Errorf("a refused Stage left %s", e.Name())
				}
			}
		})
	}
}
