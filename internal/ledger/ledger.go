// Package ledger is the state directory's record of people's decisions
// on bundles: the approval ledger, each line authenticated with the state
// key, which a run checks a bundle's approval against, and the archive of
// the workflow bytes and side effects each approval approved, from which
// a later review shows what changed since.
//
// A bundle's approvals live in its candidate.json, which anyone who can
// write the bundle can edit: an approval record appended by hand for the
// current workflow hash passes validate. The ledger binds approvals to the
// machine's state: `crystallize approve` also appends the decision to
// <StateDir>/File, each line authenticated with the state key (package
// statekey). When the configuration sets [approvals] require_ledger, the
// runner runs a bundle for real only when, besides being ready, the
// latest authenticated decision the ledger holds for its candidate id and
// workflow sha256 is an approval (Check); otherwise it is refused with
// approval_unauthenticated. The config's author opts in, since a ledger
// is local: a bundle approved on another machine (or with another state
// directory) must be approved again where it runs.
//
// What it proves: a crystallize process that could read this state key
// recorded the approval of these workflow bytes for this candidate. What
// it does not: who typed --approver (anyone with the account), or
// anything against someone who can read the key.
//
// The runner reads the ledger before it runs a bundle, and package review
// records a bundle's decision in it (review.ApproveBundle). So that the
// runner reads it without a level more beneath it, the package imports
// neither bundle nor toolexec: it keeps its own copies of the name of an
// approval (bundle.DecisionApproved) and of the state directory's file
// names (toolexec's, which keeps them out of the file built-ins' reach),
// and a test pins the copies to the originals.
package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/statekey"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// File is the ledger's name under the state directory
// (toolexec.ApprovalLedgerFile).
const File = "approvals.jsonl"

// stateKeyFile is the state key's name under the state directory
// (toolexec.StateKeyFile).
const stateKeyFile = "state.key"

// approved is the decision of an approval (bundle.DecisionApproved).
const approved = "approved"

// maxLedger bounds the ledger read.
const maxLedger = 16 << 20

// ErrUnauthenticated: the ledger does not hold an authenticated approval
// of the bundle's workflow bytes.
var ErrUnauthenticated = errors.New("approval not authenticated")

// Entry is one decision in the approval ledger.
type Entry struct {
	CandidateID    string `json:"candidate_id"`
	WorkflowSHA256 string `json:"workflow_sha256"`
	// Decision is bundle.DecisionApproved or DecisionRejected, as in
	// approval_history.
	Decision   string `json:"decision"`
	Actor      string `json:"actor"`
	RecordedAt string `json:"recorded_at"`
	// Bundle is the absolute path of the bundle directory, for readers.
	Bundle string `json:"bundle"`
	// Workflow is the name of the bundle's workflow, so that a reader
	// can find the approved versions of one workflow across candidates
	// (LastApproved). Entries written before it was recorded have none.
	Workflow string `json:"workflow,omitempty"`
	MAC      string `json:"mac,omitempty"`
}

// macInput is what an entry's MAC covers: every field but the MAC. The
// workflow name is left out when empty, so that entries written before
// it was recorded still verify.
func (e Entry) macInput() []byte {
	fields := map[string]any{
		"candidate_id": e.CandidateID, "workflow_sha256": e.WorkflowSHA256,
		"decision": e.Decision, "actor": e.Actor, "recorded_at": e.RecordedAt, "bundle": e.Bundle,
	}
	if e.Workflow != "" {
		fields["workflow"] = e.Workflow
	}
	return stepvalue.Canonical(fields)
}

// syncFile makes a file's contents durable; tests count the calls.
var syncFile = (*os.File).Sync

// stateKey returns the key under stateDir, creating it when create is set
// and there is none (statekey.Load), synced through syncFile.
func stateKey(stateDir string, create bool) ([]byte, error) {
	return statekey.Load(filepath.Join(stateDir, stateKeyFile), create, syncFile)
}

// Record appends e, authenticated with the state key (created on first
// use), to the ledger under stateDir.
func Record(stateDir string, e Entry) error {
	key, err := stateKey(stateDir, true)
	if err != nil {
		return err
	}
	if abs, err := filepath.Abs(e.Bundle); err == nil {
		e.Bundle = abs
	}
	e.MAC = statekey.MAC(key, "approval", e.CandidateID, e.macInput())
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(stateDir, File), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	unlock, werr := atomicfile.Lock(f)
	if werr == nil {
		werr = endTornLine(f, key)
		if werr == nil {
			_, werr = f.Write(append(line, '\n'))
		}
		if werr == nil {
			// An approval the user was told is recorded must survive a
			// crash, as the journal and the state key do.
			werr = syncFile(f)
		}
		unlock()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// endTornLine makes the ledger f end with a whole line before an entry is
// appended. An entry is written as one line with its newline in one write,
// so a ledger that does not end with a newline holds the start of an
// entry whose write was cut short (a crash, a full disk): nobody was told
// it was recorded. When what was written is a whole authenticated entry
// missing only its newline, the newline is added; otherwise the torn bytes
// are cut off, since appending after them would turn them into a broken
// line in the middle of the ledger, which Check refuses as tampering.
func endTornLine(f *os.File, key []byte) error {
	data, err := io.ReadAll(io.LimitReader(f, maxLedger+1))
	if err != nil || len(data) == 0 || data[len(data)-1] == '\n' || len(data) > maxLedger {
		return err
	}
	start := bytes.LastIndexByte(data, '\n') + 1
	if _, ok := ledgerLine(key, data[start:]); ok {
		_, err = f.Write([]byte("\n"))
		return err
	}
	return f.Truncate(int64(start))
}

// ledgerLine decodes one line of the ledger and checks its MAC.
func ledgerLine(key, line []byte) (Entry, bool) {
	var e Entry
	// DisallowUnknownFields still takes "Decision" for "decision": the
	// names must be exact too.
	if len(trace.CheckNames(line, "", 1, &e)) > 0 {
		return e, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || dec.More() || !statekey.Check(key, "approval", e.CandidateID, e.macInput(), e.MAC) {
		return e, false
	}
	return e, true
}

// Check refuses, with ErrUnauthenticated, a bundle whose candidate id and
// workflow sha256 the ledger under stateDir holds no authenticated
// approval for as its latest authenticated decision. A line whose MAC
// fails is refused outright: the ledger was tampered with. The one
// exception is a last line without its newline that is not an entry: the
// torn end of an append that was cut short (see endTornLine). It is
// ignored with a warning to log, as it never was a decision anybody was
// told is recorded; a broken line that ends with its newline, or one
// before others, is not torn and is refused.
func Check(stateDir, candidateID, sha string, log io.Writer) error {
	p := filepath.Join(stateDir, File)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: approval_unauthenticated: %s", ErrUnauthenticated, fmt.Sprintf(format, args...))
	}
	key, err := stateKey(stateDir, false)
	if errors.Is(err, os.ErrNotExist) {
		return fail("the state directory has no %s, so no approval in it can be authenticated", stateKeyFile)
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
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, raw := range lines {
		n := i + 1
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		e, ok := ledgerLine(key, raw)
		if !ok && i == len(lines)-1 && !bytes.HasSuffix(raw, []byte("\n")) {
			if log != nil {
				fmt.Fprintf(log, "warning: %s:%d: the last line is the torn end of an approval whose write was cut short; it is ignored, and the next crystallize approve removes it\n", p, n)
			}
			continue
		}
		if !ok {
			return fail("%s:%d is not an approval this state directory's key recorded", p, n)
		}
		if e.CandidateID == candidateID && e.WorkflowSHA256 == sha {
			latest = e.Decision
		}
	}
	if latest != approved {
		return fail("%s holds no approval of candidate %s with workflow sha256 %s", p, candidateID, sha)
	}
	return nil
}
