package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// minedExamples mines the example traces, which hold two safe candidates.
func minedExamples(t *testing.T) (*candidate.Report, []*trace.Trace) {
	t.Helper()
	traces, err := Import(context.Background(), ImportOptions{From: "../../examples/traces", Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := MineTraces(context.Background(), traces.Traces, mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) < 2 {
		t.Fatalf("the examples give %d safe candidates, want at least 2", len(r.Candidates))
	}
	return r, traces.Traces
}

// Outputs.Bundles writes one valid bundle for every safe candidate, in
// the directory named as its workflow file.
func TestPublishBundles(t *testing.T) {
	r, traces := minedExamples(t)
	out := t.TempDir()
	dir := filepath.Join(out, "bundles")
	pub, err := Publish(context.Background(), r, traces, nil, Outputs{Bundles: dir, BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pub.Bundles) != len(r.Candidates) {
		t.Fatalf("Publish wrote %d bundles for %d candidates", len(pub.Bundles), len(r.Candidates))
	}
	used := map[string]bool{}
	for i, b := range pub.Bundles {
		c := &r.Candidates[i]
		if want := BundleDir(dir, c.Name, used); b.Dir != want || b.Manifest.CandidateID != c.ID {
			t.Errorf("bundle %d = %s of %s, want %s of %s", i, b.Dir, b.Manifest.CandidateID, want, c.ID)
		}
		if v := bundle.Validate(b.Dir); !v.OK {
			t.Errorf("bundle %s is not valid: %v", b.Dir, v.Problems)
		}
	}
}

// A run whose write fails after the bundles were rendered leaves no
// bundle, and no temporary file, behind: bundles are put in place all or
// none with the other outputs.
func TestPublishBundlesAllOrNone(t *testing.T) {
	r, traces := minedExamples(t)
	out := t.TempDir()
	// --out names a file under a regular file: it fails after every
	// bundle has been staged.
	blocker := filepath.Join(out, "blocker")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	o := Outputs{
		Out: filepath.Join(blocker, "w.star"), Bundles: filepath.Join(out, "bundles"),
		BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z"},
	}
	if _, err := Publish(context.Background(), r, traces, nil, o); err == nil {
		t.Fatal("Publish succeeded writing under a regular file")
	}
	var left []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if p != out {
			rel, _ := filepath.Rel(out, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return err
	})
	if !slices.Equal(left, []string{"blocker"}) {
		t.Errorf("a failed Publish left %v, want only the blocker", left)
	}
}
