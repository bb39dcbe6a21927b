package review

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/ledger"
)

// ApproveBundle records a person's decision on the bundle in dir
// (bundle.Approve) and appends it to the approval ledger under stateDir
// (ledger.Record), which a run checks the bundle's approval against. A
// decision that reached the manifest but not the ledger is an error
// saying so. crystallize approve calls it, and Decide after validating.
//
// The ledger line is appended while the bundle is still locked
// (bundle.Approval.Record): a decision taken at the same time waits, so
// the ledger's last word on the bundle is the manifest's last decision.
//
// An approval also keeps the approved workflow bytes and side effects in
// the state directory's archive (ledger.Archive), before the ledger line:
// an approval the ledger holds has its copy, from which a later review
// shows what changed since.
func ApproveBundle(dir, stateDir string, a bundle.Approval) (*bundle.Manifest, error) {
	a.Record = func(last bundle.ApprovalRecord) error {
		b, err := bundle.Read(dir)
		if err == nil && last.Decision == bundle.DecisionApproved {
			var src []byte
			if src, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(b.Manifest.Workflow.Path))); err == nil {
				m := b.Manifest
				err = ledger.Archive(stateDir, ledger.Approved{Workflow: m.Workflow.Name, Path: m.Workflow.Path, SHA256: m.Workflow.SHA256, Source: src, SideEffects: m.SideEffects})
			}
		}
		if err == nil {
			err = ledger.Record(stateDir, ledger.Entry{
				CandidateID: last.CandidateID, WorkflowSHA256: last.WorkflowSHA256, Decision: last.Decision,
				Actor: last.Actor, RecordedAt: last.RecordedAt, Bundle: dir, Workflow: b.Manifest.Workflow.Name,
			})
		}
		if err != nil {
			return fmt.Errorf("the decision is in %s but not in the approval ledger: %w", filepath.Join(dir, bundle.ManifestFile), err)
		}
		return nil
	}
	m, err := bundle.Approve(dir, a)
	if err != nil {
		return nil, err
	}
	return m, nil
}
