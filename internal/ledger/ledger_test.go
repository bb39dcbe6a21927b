package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/statekey"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestApprovalLedger: the ledger admits a bundle only with an
// authenticated approval of its candidate and workflow bytes as the
// latest decision, and refuses a ledger with a line its key did not MAC.
func TestApprovalLedger(t *testing.T) {
	entry := func(decision, sha string) Entry {
		return Entry{CandidateID: "cand_1", WorkflowSHA256: sha, Decision: decision, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, state string)
		want  string // "" for admitted
	}{
		{"no key", func(*testing.T, string) {}, "has no state.key"},
		{"no ledger", func(t *testing.T, state string) { stateKey(state, true) }, "records no approval"},
		{"approved", func(t *testing.T, state string) {
			Record(state, entry(bundle.DecisionApproved, "sha1"))
		}, ""},
		{"other workflow bytes", func(t *testing.T, state string) {
			Record(state, entry(bundle.DecisionApproved, "sha0"))
		}, "holds no approval of candidate cand_1 with workflow sha256 sha1"},
		{"rejected later", func(t *testing.T, state string) {
			Record(state, entry(bundle.DecisionApproved, "sha1"))
			Record(state, entry(bundle.DecisionRejected, "sha1"))
		}, "holds no approval"},
		{"forged line", func(t *testing.T, state string) {
			stateKey(state, true)
			os.WriteFile(filepath.Join(state, File), []byte(`{"candidate_id":"cand_1","workflow_sha256":"sha1","decision":"approved","actor":"x","recorded_at":"t","bundle":"b","mac":"00"}`+"\n"), 0o600)
		}, "approvals.jsonl:1 is not an approval this state directory's key recorded"},
		// Authentic, but encoding/json reads "Workflow_sha256" as the
		// workflow_sha256 that a reader of the line sees as sha0.
		{"case-folded name", func(t *testing.T, state string) {
			key, _ := stateKey(state, true)
			e := entry(bundle.DecisionApproved, "sha1")
			mac := statekey.MAC(key, "approval", e.CandidateID, e.macInput())
			os.WriteFile(filepath.Join(state, File), []byte(`{"candidate_id":"cand_1","workflow_sha256":"sha0","decision":"approved","actor":"lead","recorded_at":"2026-01-01T00:00:00Z","bundle":"b","Workflow_sha256":"sha1","mac":"`+mac+`"}`+"\n"), 0o600)
		}, "approvals.jsonl:1 is not an approval this state directory's key recorded"},
		{"line signed with another key", func(t *testing.T, state string) {
			other := t.TempDir()
			Record(other, entry(bundle.DecisionApproved, "sha1"))
			stateKey(state, true)
			data, _ := os.ReadFile(filepath.Join(other, File))
			os.WriteFile(filepath.Join(state, File), data, 0o600)
		}, "is not an approval this state directory's key recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := t.TempDir()
			tt.setup(t, state)
			err := Check(state, "cand_1", "sha1", nil)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check = %v, want admitted", err)
			case tt.want != "" && (!errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRecordSyncs: an approval is on disk when Record
// returns, so a crash right after approving does not lose it.
func TestRecordSyncs(t *testing.T) {
	state := t.TempDir()
	if _, err := stateKey(state, true); err != nil {
		t.Fatal(err)
	}
	var synced []string
	sync := syncFile
	syncFile = func(f *os.File) error { synced = append(synced, filepath.Base(f.Name())); return sync(f) }
	t.Cleanup(func() { syncFile = sync })
	e := Entry{CandidateID: "cand_1", WorkflowSHA256: "sha1", Decision: bundle.DecisionApproved, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}
	if err := Record(state, e); err != nil {
		t.Fatal(err)
	}
	if len(synced) != 1 || synced[0] != File {
		t.Errorf("Record synced %q, want [%s]", synced, File)
	}
	if err := Check(state, "cand_1", "sha1", nil); err != nil {
		t.Errorf("Check after Record: %v", err)
	}
}

// TestLedgerTornLastLine: an append cut short leaves the start of an entry
// without its newline at the end of the ledger. Exactly that is tolerated,
// with a warning naming the line: the decisions before it still count, and
// the next approval removes it (or completes it, when only the newline was
// lost). A broken line that is not the torn end is still refused.
func TestLedgerTornLastLine(t *testing.T) {
	entry := func(decision, sha string) Entry {
		return Entry{CandidateID: "cand_1", WorkflowSHA256: sha, Decision: decision, Actor: "lead", RecordedAt: "2026-01-01T00:00:00Z", Bundle: "b"}
	}
	setup := func(t *testing.T) (state, ledger, whole string) {
		state = t.TempDir()
		if err := Record(state, entry(bundle.DecisionApproved, "sha1")); err != nil {
			t.Fatal(err)
		}
		if err := Record(state, entry(bundle.DecisionApproved, "sha2")); err != nil {
			t.Fatal(err)
		}
		ledger = filepath.Join(state, File)
		return state, ledger, readFile(t, ledger)
	}
	state, ledger, whole := setup(t)
	first := whole[:strings.IndexByte(whole, '\n')+1]
	second := whole[len(first):]

	// Every cut of the second entry, newline excluded.
	for cut := 1; cut < len(second)-1; cut++ {
		if err := os.WriteFile(ledger, []byte(first+second[:cut]), 0o600); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		if err := Check(state, "cand_1", "sha1", &log); err != nil {
			t.Fatalf("cut at %d: Check = %v, want the first approval admitted", cut, err)
		}
		if !strings.Contains(log.String(), "approvals.jsonl:2: the last line is the torn end of an approval") {
			t.Fatalf("cut at %d: warning = %q", cut, log.String())
		}
		if err := Check(state, "cand_1", "sha2", nil); !errors.Is(err, ErrUnauthenticated) {
			t.Fatalf("cut at %d: the torn approval counts: %v", cut, err)
		}
	}

	// The next approval cuts the torn end off, and the ledger is whole.
	if err := Record(state, entry(bundle.DecisionApproved, "sha3")); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for _, sha := range []string{"sha1", "sha3"} {
		if err := Check(state, "cand_1", sha, &log); err != nil {
			t.Errorf("after the next approval: Check(%s) = %v", sha, err)
		}
	}
	if log.Len() != 0 || strings.Count(readFile(t, ledger), "\n") != 2 {
		t.Errorf("after the next approval: warning %q, ledger:\n%s", log.String(), readFile(t, ledger))
	}

	// Only the newline lost: the entry is whole and authenticated, so it
	// counts, and the next approval keeps it.
	state, ledger, whole = setup(t)
	if err := os.WriteFile(ledger, []byte(strings.TrimSuffix(whole, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Check(state, "cand_1", "sha2", nil); err != nil {
		t.Errorf("entry without its newline: Check = %v", err)
	}
	if err := Record(state, entry(bundle.DecisionApproved, "sha3")); err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{"sha1", "sha2", "sha3"} {
		if err := Check(state, "cand_1", sha, nil); err != nil {
			t.Errorf("entry without its newline, then another: Check(%s) = %v", sha, err)
		}
	}

	// Not torn: a broken line before others, or a broken last line that
	// ends with its newline, is refused.
	for name, content := range map[string]string{
		"broken earlier line":       first[:len(first)/2] + "\n" + second,
		"broken last line, newline": first + second[:len(second)/2] + "\n",
	} {
		state, ledger, _ = setup(t)
		if err := os.WriteFile(ledger, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Check(state, "cand_1", "sha1", nil); !errors.Is(err, ErrUnauthenticated) || !strings.Contains(err.Error(), "is not an approval this state directory's key recorded") {
			t.Errorf("%s: Check = %v, want a refusal", name, err)
		}
	}
}

// TestNames pins the ledger's copies of names to the originals: the name
// of an approval a bundle's approval_history records (a ledger that spelt
// it otherwise would admit no bundle), and the file names of the state
// directory that toolexec keeps out of the file built-ins' reach (a
// ledger under another name would be a file a tool may rewrite).
func TestNames(t *testing.T) {
	if approved != bundle.DecisionApproved {
		t.Errorf("the ledger reads %q as an approval; a bundle records %q", approved, bundle.DecisionApproved)
	}
	if File != toolexec.ApprovalLedgerFile || stateKeyFile != toolexec.StateKeyFile {
		t.Errorf("the ledger is %s with key %s; toolexec protects %s and %s", File, stateKeyFile, toolexec.ApprovalLedgerFile, toolexec.StateKeyFile)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
