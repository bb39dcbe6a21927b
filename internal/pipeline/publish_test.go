package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/mine"
)

// TestMineDir takes the whole road on the example traces: the report, the
// selected workflow, every candidate's workflow and the bundle are
// written, and the report lists the held-out directory.
func TestMineDir(t *testing.T) {
	out := t.TempDir()
	o := Outputs{
		Out: filepath.Join(out, "workflow.star"), OutDir: filepath.Join(out, "wf"),
		Report: filepath.Join(out, "report.json"), Bundle: filepath.Join(out, "bundle"),
		EvalPack:      filepath.Join(out, "eval.toml"),
		BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z", MinConfidence: 0.8, MinExamples: 2},
	}
	r, pub, err := MineDir(context.Background(), MineDirOptions{
		Corpus:  CorpusOptions{Dir: "../../examples/traces", Mine: mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z"}},
		Heldout: HeldoutOptions{Dirs: []string{"../../examples/traces"}},
		Outputs: o,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Selected() == nil || pub.Manifest == nil || len(pub.Workflows) != len(r.Candidates) {
		t.Fatalf("selected %v, manifest %v, %d workflows for %d candidates", r.Selected(), pub.Manifest != nil, len(pub.Workflows), len(r.Candidates))
	}
	if len(r.ShadowSources) != 1 {
		t.Errorf("shadow sources %v, want the held-out directory", r.ShadowSources)
	}
	for _, p := range []string{o.Out, o.Report, o.EvalPack, filepath.Join(o.Bundle, bundle.ManifestFile)} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

// TestPublishCancelled: a run interrupted before it writes leaves nothing
// behind.
func TestPublishCancelled(t *testing.T) {
	traces, err := Import(context.Background(), ImportOptions{From: "../../examples/traces", Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := MineTraces(context.Background(), traces.Traces, mine.Options{MinExamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	if _, err := Publish(ctx, r, traces.Traces, nil, Outputs{Out: filepath.Join(out, "w.star"), Report: filepath.Join(out, "r.json")}); err == nil {
		t.Fatal("Publish with a cancelled context succeeded")
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a cancelled Publish left %d files", len(entries))
	}
}
