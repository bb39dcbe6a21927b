package runner

import (
	"errors"

	"github.com/crystallize-dev/crystallize/internal/ledger"
)

// checkApprovalLedger applies [approvals] require_ledger to a ready
// bundle about to run for real: the approval ledger under the state
// directory (package ledger) must hold an authenticated approval of its
// candidate and workflow bytes. The refusal's remedy is to record one.
func checkApprovalLedger(w *Workflow, opts Options) error {
	if opts.Config == nil || !opts.Config.Approvals.RequireLedger || w.Bundle == nil || opts.DryRun || opts.AllowUnapproved {
		return nil
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	err := ledger.Check(stateDir, w.Bundle.Manifest.CandidateID, w.SHA256, opts.Log)
	if errors.Is(err, ledger.ErrUnauthenticated) {
		return withRemedy(err, RemedyApprove, stateDir)
	}
	return err
}
