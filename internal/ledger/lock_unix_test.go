//go:build unix

package ledger

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/bundle"
)

// TestRecordWaitsForLedgerLock checks that recording an approval
// waits while another holder (another crystallize process) has the ledger
// locked, so that the repair of a torn last line never cuts off an entry
// being appended, and goes on once the lock is released.
func TestRecordWaitsForLedgerLock(t *testing.T) {
	state := t.TempDir()
	e := Entry{CandidateID: "cand_1", WorkflowSHA256: "sha1", Decision: bundle.DecisionApproved, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}
	if err := Record(state, e); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(state, File), os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unlock, err := atomicfile.Lock(f)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	e.WorkflowSHA256 = "sha2"
	go func() { done <- Record(state, e) }()
	select {
	case err := <-done:
		unlock()
		t.Fatalf("Record finished (%v) while the ledger was locked", err)
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Record did not go on after the lock was released")
	}
	if err := Check(state, "cand_1", "sha2", nil); err != nil {
		t.Errorf("the approval recorded after the wait: %v", err)
	}
}
