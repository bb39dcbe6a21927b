package plan

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
)

// WorkflowName is the name a plan read from file runs under: the file's
// base name without its extension ("deploy" for plans/deploy.json). The
// saved workflow, the run's registration and its trace all carry it, so
// a plan run is found by the name of the file that holds the plan.
func WorkflowName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

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
