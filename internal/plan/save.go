package plan

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// SaveStarlark lowers p with params (Starlark) and writes the workflow
// under stateDir as plans/<name>-<hash>.star, named by the plan and the
// hash of its source rather than written to a temporary file: the run's
// trace and journal name the workflow, so it must outlive the run, and
// the same plan with the same parameters is the same file. It returns the
// file's path.
func SaveStarlark(p *Plan, params map[string]string, stateDir, name string) (string, error) {
	src, err := Starlark(p, params)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(src)
	star := filepath.Join(stateDir, "plans", fmt.Sprintf("%s-%x.star", name, sum[:6]))
	if err := os.MkdirAll(filepath.Dir(star), 0o755); err != nil {
		return "", fmt.Errorf("writing plan workflow: %w", err)
	}
	if err := atomicfile.Write(star, src, 0o644); err != nil {
		return "", fmt.Errorf("writing plan workflow: %w", err)
	}
	return star, nil
}
