package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
)

// The approval ledger.
//
// A bundle's approvals live in its candidate.json, which anyone who can
// write the bundle can edit: an approval record appended by hand for the
// current workflow hash passes validate. The ledger binds approvals to the
// machine's state: `crystallize approve` also appends the decision to
// <StateDir>/ApprovalLedgerFile, each line authenticated with the state
// key (see statekey.go). When the configuration sets [approvals]
// require_ledger, a bundle runs for real only when, besides being ready,
// the latest authenticated decision the ledger holds for its candidate id
// and workflow sha256 is an approval; otherwise it is refused with
// approval_unauthenticated. The config's author opts in, since a ledger is
// local: a bundle approved on another machine (or with another state
// directory) must be approved again where it runs.
//
// What it proves: a crystallize process that could read this state key
// recorded the approval of these workflow bytes for this candidate. What
// it does not: who typed --approver (anyone with the account), or
// anything against someone who can read the key.

// ApprovalLedgerFile is the ledger's name under the state directory.
const ApprovalLedgerFile = "approvals.jsonl"

// maxLedger bounds the ledger read.
const maxLedger = 16 << 20

// ErrApprovalUnauthenticated: the ledger does not hold an authenticated
// approval of the bundle's workflow bytes.
var ErrApprovalUnauthenticated = errors.New("approval not authenticated")

// LedgerEntry is one decision in the approval ledger.
type LedgerEntry struct {
	CandidateID    string `json:"candidate_id"`
	WorkflowSHA256 string `json:"workflow_sha256"`
	// Decision is bundle.DecisionApproved or DecisionRejected, as in
	// approval_history.
	Decision   string `json:"decision"`
	Actor      string `json:"actor"`
	RecordedAt string `json:"recorded_at"`
	// Bundle is the absolute path of the bundle directory, for readers.
	Bundle string `json:"bundle"`
	MAC    string `json:"mac,omitempty"`
}

// macInput is what an entry's MAC covers: every field but the MAC.
func (e LedgerEntry) macInput() []byte {
	return canonical(map[string]any{
		"candidate_id": e.CandidateID, "workflow_sha256": e.WorkflowSHA256,
		"decision": e.Decision, "actor": e.Actor, "recorded_at": e.RecordedAt, "bundle": e.Bundle,
	})
}

// RecordApproval appends e, authenticated with the state key (created on
// first use), to the ledger under stateDir.
func RecordApproval(stateDir string, e LedgerEntry) error {
	key, err := stateKey(stateDir, true)
	if err != nil {
		return err
	}
	if abs, err := filepath.Abs(e.Bundle); err == nil {
		e.Bundle = abs
	}
	e.MAC = recordMAC(key, "approval", e.CandidateID, e.macInput())
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(stateDir, ApprovalLedgerFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(line, '\n'))
	if werr == nil {
		// An approval the user was told is recorded must survive a
		// crash, as the journal and the state key do.
		werr = syncFile(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// checkLedger refuses a bundle whose candidate id and workflow sha256 the
// ledger under stateDir holds no authenticated approval for as its latest
// authenticated decision. A line whose MAC fails is refused outright: the
// ledger was tampered with.
func checkLedger(stateDir, candidateID, sha string) error {
	p := filepath.Join(stateDir, ApprovalLedgerFile)
	fail := func(format string, args ...any) error {
		return withRemedy(fmt.Errorf("%w: approval_unauthenticated: %s", ErrApprovalUnauthenticated, fmt.Sprintf(format, args...)), RemedyApprove, stateDir)
	}
	key, err := stateKey(stateDir, false)
	if errors.Is(err, os.ErrNotExist) {
		return fail("the state directory has no %s, so no approval in it can be authenticated", StateKeyFile)
	}
	if err != nil {
		return err
	}
	st, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return fail("%s records no approval", p)
	}
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fail("%s is not a regular file", p)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLedger+1))
	if err != nil {
		return err
	}
	if len(data) > maxLedger {
		return fail("%s is larger than %d bytes", p, maxLedger)
	}
	latest := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxLedger)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e LedgerEntry
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil || !checkMAC(key, "approval", e.CandidateID, e.macInput(), e.MAC) {
			return fail("%s:%d is not an approval this state directory's key recorded", p, n)
		}
		if e.CandidateID == candidateID && e.WorkflowSHA256 == sha {
			latest = e.Decision
		}
	}
	if latest != bundle.DecisionApproved {
		return fail("%s holds no approval of candidate %s with workflow sha256 %s", p, candidateID, sha)
	}
	return nil
}

// checkApprovalLedger applies [approvals] require_ledger to a ready
// bundle about to run for real.
func checkApprovalLedger(w *Workflow, opts Options) error {
	if opts.Config == nil || !opts.Config.Approvals.RequireLedger || w.Bundle == nil || opts.DryRun || opts.AllowUnapproved {
		return nil
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	return checkLedger(stateDir, w.Bundle.Manifest.CandidateID, w.SHA256)
}
