package runner

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/ledger"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
)

// TestApprovalLedgerRemedy: under [approvals] require_ledger, a ready
// bundle the ledger holds no approval of is refused with the remedy of
// recording one in that state directory, and runs once it is recorded; a
// state directory that cannot be read is an error with no remedy, since
// approving would not get past it.
func TestApprovalLedgerRemedy(t *testing.T) {
	w := &Workflow{SHA256: "sha1", Bundle: &bundle.Bundle{Manifest: &bundle.Manifest{CandidateID: "cand_1"}}}
	state := t.TempDir()
	opts := Options{Config: &runconfig.Config{Approvals: runconfig.ApprovalsConfig{RequireLedger: true}}, StateDir: state}

	err := checkApprovalLedger(w, opts)
	var re *RemedyError
	if !errors.As(err, &re) || re.Remedy != RemedyApprove || re.StateDir != state || !errors.Is(err, ledger.ErrUnauthenticated) {
		t.Fatalf("no approval in the ledger: %v, want a RemedyApprove for %s", err, state)
	}
	if err := ledger.Record(state, ledger.Entry{CandidateID: "cand_1", WorkflowSHA256: "sha1", Decision: bundle.DecisionApproved, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}); err != nil {
		t.Fatal(err)
	}
	if err := checkApprovalLedger(w, opts); err != nil {
		t.Errorf("after the approval is recorded: %v", err)
	}

	if err := os.Chmod(filepath.Join(state, "state.key"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = checkApprovalLedger(w, opts)
	if err == nil || errors.As(err, &re) {
		t.Errorf("unusable state key: %v, want an error with no remedy", err)
	}
}
