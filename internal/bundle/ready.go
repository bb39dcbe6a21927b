package bundle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// ErrNotReady is returned (wrapped, with the recomputed status and the
// validation codes) by Readiness.Err for a bundle that may not run for
// real.
var ErrNotReady = errors.New("bundle is not ready to run")

// Readiness is the decision whether a bundle may run for real, made by
// Validate: the status is recomputed from the manifest's evidence, its
// approval history and the sha256 of the workflow file on disk, never
// read from promotion.criteria.status, and every validation problem
// counts against it. It is the only such decision: validate, run, resume
// and every other caller that executes a bundle ask Ready, so what one
// accepts the others accept.
type Readiness struct {
	// Bundle is the directory the decision is about.
	Bundle string
	// Status is the recomputed promotion status; "" when the manifest
	// cannot be read.
	Status string
	// Claimed is the status candidate.json records, which decides
	// nothing; it is kept to say so when the two differ.
	Claimed string
	// WorkflowSHA256 is the sha256 of the workflow bytes the decision is
	// about; a caller that loaded the workflow separately compares it
	// with its own, so a file swapped in between is not run.
	WorkflowSHA256 string
	// Problems are Validate's problems, in its order.
	Problems []candidate.Problem
}

// Ready validates the bundle in dir and returns its readiness.
func Ready(dir string) *Readiness {
	v := Validate(dir)
	return &Readiness{Bundle: dir, Status: v.status, Claimed: v.claimed, WorkflowSHA256: v.workflowSHA, Problems: v.Problems}
}

// OK reports whether the bundle may run for real: the recomputed status is
// ready and validation found no problem.
func (r *Readiness) OK() bool {
	return r.Status == StatusReady && len(r.Problems) == 0
}

// Codes returns the distinct codes of the problems, in order.
func (r *Readiness) Codes() []string {
	var codes []string
	seen := map[string]bool{}
	for _, p := range r.Problems {
		if !seen[p.Code] {
			seen[p.Code] = true
			codes = append(codes, p.Code)
		}
	}
	return codes
}

// Err returns nil when the bundle is OK, else an error wrapping
// ErrNotReady that names the recomputed status (and the claimed one when
// it differs) and every problem with its code and place.
func (r *Readiness) Err() error {
	if r.OK() {
		return nil
	}
	var b strings.Builder
	st := r.Status
	if st == "" {
		st = "unknown"
	}
	fmt.Fprintf(&b, "promotion status is %s", st)
	if r.Claimed != "" && r.Claimed != r.Status {
		fmt.Fprintf(&b, " (candidate.json claims %s, which decides nothing)", r.Claimed)
	}
	if r.Status != StatusReady {
		fmt.Fprintf(&b, ", not %s", StatusReady)
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, "; validation: %s", strings.Join(r.Codes(), ", "))
		for _, p := range r.Problems {
			b.WriteString("\n  " + p.Code)
			if p.Path != "" {
				b.WriteString(" " + p.Path)
			}
			b.WriteString(": " + p.Message)
		}
	}
	return fmt.Errorf("%w: %s", ErrNotReady, b.String())
}
