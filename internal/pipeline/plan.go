package pipeline

import (
	"fmt"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/plan"
)

// PlanFromBundle reads the review bundle in dir and lowers its candidate
// to a task plan (plan.FromCandidate), named after the bundle so that its
// shadow gate checks the same directory. A bundle without a candidate is
// an error naming the manifest's candidate_id.
func PlanFromBundle(dir string) ([]byte, error) {
	b, err := bundle.Read(dir)
	if err != nil {
		return nil, err
	}
	c, err := b.Candidate()
	if err != nil {
		return nil, err
	}
	manifest := filepath.Join(dir, bundle.ManifestFile)
	if c == nil {
		return nil, fmt.Errorf("%s: candidate_id: the bundle holds no candidate", manifest)
	}
	return plan.FromCandidate(c, plan.Origin{Dir: dir, Manifest: manifest, Title: b.Manifest.Title, Workflow: b.Manifest.Workflow.Name})
}
