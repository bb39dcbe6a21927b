package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
)

// TestApprovalLedger: the ledger admits a bundle only with an
// authenticated approval of its candidate and workflow bytes as the
// latest decision, and refuses a ledger with a line its key did not MAC.
func TestApprovalLedger(t *testing.T) {
	entry := func(decision, sha string) LedgerEntry {
		return LedgerEntry{CandidateID: "cand_1", WorkflowSHA256: sha, Decision: decision, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, state string)
		want  string // "" for admitted
	}{
		{"no key", func(*testing.T, string) {}, "has no state.key"},
		{"no ledger", func(t *testing.T, state string) { stateKey(state, true) }, "records no approval"},
		{"approved", func(t *testing.T, state string) {
			RecordApproval(state, entry(bundle.DecisionApproved, "sha1"))
		}, ""},
		{"other workflow bytes", func(t *testing.T, state string) {
			RecordApproval(state, entry(bundle.DecisionApproved, "sha0"))
		}, "holds no approval of candidate cand_1 with workflow sha256 sha1"},
		{"rejected later", func(t *testing.T, state string) {
			RecordApproval(state, entry(bundle.DecisionApproved, "sha1"))
			RecordApproval(state, entry(bundle.DecisionRejected, "sha1"))
		}, "holds no approval"},
		{"forged line", func(t *testing.T, state string) {
			stateKey(state, true)
			os.WriteFile(filepath.Join(state, ApprovalLedgerFile), []byte(`{"candidate_id":"cand_1","workflow_sha256":"sha1","decision":"approved","actor":"x","recorded_at":"t","bundle":"b","mac":"00"}`+"\n"), 0o600)
		}, "approvals.jsonl:1 is not an approval this state directory's key recorded"},
		{"line signed with another key", func(t *testing.T, state string) {
			other := t.TempDir()
			RecordApproval(other, entry(bundle.DecisionApproved, "sha1"))
			stateKey(state, true)
			data, _ := os.ReadFile(filepath.Join(other, ApprovalLedgerFile))
			os.WriteFile(filepath.Join(state, ApprovalLedgerFile), data, 0o600)
		}, "is not an approval this state directory's key recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			tt.setup(t, state)
			err := checkLedger(state, "cand_1", "sha1")
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkLedger = %v, want admitted", err)
			case tt.want != "" && (!errors.Is(err, ErrApprovalUnauthenticated) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("checkLedger = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRecordApprovalSyncs: an approval is on disk when RecordApproval
// returns, so a crash right after approving does not lose it.
func TestRecordApprovalSyncs(t *testing.T) {
	state := t.TempDir()
	if _, err := stateKey(state, true); err != nil {
		t.Fatal(err)
	}
	var synced []string
	sync := syncFile
	syncFile = func(f *os.File) error { synced = append(synced, filepath.Base(f.Name())); return sync(f) }
	t.Cleanup(func() { syncFile = sync })
	e := LedgerEntry{CandidateID: "cand_1", WorkflowSHA256: "sha1", Decision: bundle.DecisionApproved, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}
	if err := RecordApproval(state, e); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != ApprovalLedgerFile {
		t.Errorf("RecordApproval synced %q, want [%s]", synced, ApprovalLedgerFile)
	}
	if err := checkLedger(state, "cand_1", "sha1"); err != nil {
		t.Errorf("checkLedger after RecordApproval: %v", err)
	}
}
