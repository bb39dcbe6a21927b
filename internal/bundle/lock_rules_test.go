package bundle

import (
	"os"
	"path/filepath"
	"testing"
)

// exists reports whether the bundle file p exists.
func exists(dir, p string) bool {
	_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
	return err == nil
}

// TestReadRemovesKilledChangesTemps checks that opening a bundle removes
// the temporary files a change killed part way through left beside the
// files changed in place (the manifest, the report and the workflow,
// wherever the manifest puts it), and nothing else: not a file of
// another name, not a directory, not a file outside the bundle.
func TestReadRemovesKilledChangesTemps(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	// The workflow moves to a subdirectory, so its temporary files are
	// looked for there.
	if err := os.Mkdir(filepath.Join(dir, "flows"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, WorkflowFile), filepath.Join(dir, "flows", "release.star")); err != nil {
		t.Fatal(err)
	}
	rewriteManifest(t, dir, func(g map[string]any) { g["workflow"].(map[string]any)["path"] = "flows/release.star" })
	removed := []string{"." + ManifestFile + ".tmp12345", "." + ReportFile + ".tmp-1", "flows/.release.star.tmp999"}
	kept := []string{"notes.tmp", ".notes.txt.tmp1", "." + WorkflowFile + ".tmp1", "flows/." + ManifestFile + ".tmp1", "fixtures/." + ManifestFile + ".tmp1"}
	for _, p := range append(append([]string{}, removed...), kept...) {
		mustWrite(t, filepath.Join(dir, filepath.FromSlash(p)), []byte("partial"))
	}
	if err := os.Mkdir(filepath.Join(dir, "."+ReportFile+".tmpdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, "."+ReportFile+".tmpdir")
	if _, err := Read(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range removed {
		if exists(dir, p) {
			t.Errorf("Read left the temporary file %s", p)
		}
	}
	for _, p := range kept {
		if !exists(dir, p) {
			t.Errorf("Read removed %s, which no change in place leaves", p)
		}
	}
}

// TestReadKeepsTempsOutsideBundle checks that a workflow path that leaves
// the bundle does not make opening it remove files there.
func TestReadKeepsTempsOutsideBundle(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	rewriteManifest(t, dir, func(g map[string]any) { g["workflow"].(map[string]any)["path"] = "../flow.star" })
	outside := filepath.Join(filepath.Dir(dir), ".flow.star.tmp1")
	mustWrite(t, outside, []byte("not the bundle's"))
	if _, err := Read(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("Read removed a file outside the bundle: %v", err)
	}
}

// TestReadLeavesTempsOfARunningChange checks that opening a bundle while
// a change holds its lock leaves that change's temporary files alone
// (they are about to be renamed into place), and that they are removed
// once no change holds it.
func TestReadLeavesTempsOfARunningChange(t *testing.T) {
	s, h := releaseTraces(t, nil)
	dir, _ := scenario{sources: s, heldout: h, build: releaseCandidate, opts: opts()}.write(t)
	unlock, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	tmp := "." + ManifestFile + ".tmp42"
	mustWrite(t, filepath.Join(dir, tmp), []byte("being written"))
	if _, err := Read(dir); err != nil {
		unlock()
		t.Fatal(err)
	}
	if !exists(dir, tmp) {
		t.Error("Read removed the temporary file of a change holding the lock")
	}
	unlock()
	if _, err := Read(dir); err != nil {
		t.Fatal(err)
	}
	if exists(dir, tmp) {
		t.Error("Read left a temporary file once no change held the lock")
	}
}
