package pipeline

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/mine"
	"github.com/crystallize-dev/crystallize/internal/plan"
)

// TestPlanFromBundle lowers the bundle of the example traces to a task
// plan that parses, ends in the shadow gate of that bundle, and is the
// same bytes each time; a directory that holds no bundle is an error.
func TestPlanFromBundle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	_, pub, err := MineDir(context.Background(), MineDirOptions{
		Corpus:  CorpusOptions{Dir: "../../examples/traces", Mine: mine.Options{MinExamples: 2, GeneratedAt: "2026-01-01T00:00:00Z"}},
		Outputs: Outputs{Bundle: dir, BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z", MinExamples: 2}},
	})
	if err != nil || pub.Manifest == nil {
		t.Fatalf("MineDir = %v, %v", pub, err)
	}
	data, err := PlanFromBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(data, "plan.json")
	if err != nil {
		t.Fatalf("the plan does not parse: %v\n%s", err, data)
	}
	last := p.Nodes[len(p.Nodes)-1]
	if last.Kind != "verify" {
		t.Errorf("last node %s is %s, want the shadow gate (verify)", last.ID, last.Kind)
	}
	again, err := PlanFromBundle(dir)
	if err != nil || string(again) != string(data) {
		t.Errorf("PlanFromBundle is not deterministic (%v)", err)
	}
	if _, err := PlanFromBundle(t.TempDir()); err == nil {
		t.Error("PlanFromBundle of an empty directory succeeded")
	}

	// With nothing mined, the bundle holds every trace and no candidate.
	none := filepath.Join(t.TempDir(), "none")
	if _, _, err := MineDir(context.Background(), MineDirOptions{
		Corpus:  CorpusOptions{Dir: "../../examples/traces", Mine: mine.Options{MinExamples: 50, GeneratedAt: "2026-01-01T00:00:00Z"}},
		Outputs: Outputs{Bundle: none, BundleOptions: bundle.Options{GeneratedAt: "2026-01-01T00:00:00Z", MinExamples: 50}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanFromBundle(none); err == nil || !strings.Contains(err.Error(), "candidate_id: the bundle holds no candidate") {
		t.Errorf("PlanFromBundle of a bundle without a candidate = %v", err)
	}
}
