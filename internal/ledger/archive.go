package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/capped"
	"github.com/crystallize-dev/crystallize/internal/statekey"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The approved archive.
//
// The ledger records which workflow bytes were approved, by sha256, not
// the bytes: a bundle mined again in place (the same workflow, a new
// candidate) keeps no copy of what was approved before, and a reviewer
// could not see what changed since. Approving therefore also keeps the
// approved workflow file, content addressed, as
// <StateDir>/ArchiveDir/<sha256>.star, and its side effects as
// <sha256>.effects.json, authenticated with the state key. A reader
// trusts a copy only when its bytes hash to its name and the side
// effects' MAC holds: anyone who can write the state directory can
// replace a file, and a replaced one must never pass for what was
// approved.

// ArchiveDir is the archive's directory under the state directory.
const ArchiveDir = "approved"

// maxArchived bounds the read of an archived file.
const maxArchived = 16 << 20

// approvedEffects is the content of a <sha256>.effects.json file.
type approvedEffects struct {
	Workflow       string          `json:"workflow"`
	WorkflowSHA256 string          `json:"workflow_sha256"`
	SideEffects    json.RawMessage `json:"side_effects"`
	MAC            string          `json:"mac"`
}

// macInput is what the MAC covers: the workflow's name and sha256 and the
// side effects as compact JSON, so that the file's indentation is not
// part of it. Bytes that are not JSON cover nothing a MAC can match.
func (e approvedEffects) macInput() []byte {
	var b bytes.Buffer
	b.WriteString(e.Workflow)
	b.WriteByte(0)
	b.WriteString(e.WorkflowSHA256)
	b.WriteByte(0)
	if err := json.Compact(&b, e.SideEffects); err != nil {
		return nil
	}
	return b.Bytes()
}

// archivePaths are the archive's files for the workflow sha256 sha.
func archivePaths(stateDir, sha string) (star, effects string) {
	dir := filepath.Join(stateDir, ArchiveDir)
	return filepath.Join(dir, sha+".star"), filepath.Join(dir, sha+".effects.json")
}

// Approved is a workflow a person approved, as its bundle's manifest
// says it: the workflow's name, the path of its file (for errors) and the
// sha256 approved, with the file's bytes and the side effects the
// manifest declares.
type Approved struct {
	Workflow, Path, SHA256 string
	Source                 []byte
	SideEffects            []trace.SideEffect
}

// Archive keeps a's workflow bytes and side effects under stateDir. The
// bytes must hash to the sha256 approved: what is kept is what was
// approved.
func Archive(stateDir string, a Approved) error {
	sum := sha256.Sum256(a.Source)
	sha := hex.EncodeToString(sum[:])
	if sha != a.SHA256 {
		return fmt.Errorf("archiving the approved workflow: %s has sha256 %s, not the approved %s", a.Path, sha, a.SHA256)
	}
	key, err := stateKey(stateDir, true)
	if err != nil {
		return err
	}
	effects := a.SideEffects
	if effects == nil {
		effects = []trace.SideEffect{}
	}
	raw, err := json.Marshal(effects)
	if err != nil {
		return err
	}
	e := approvedEffects{Workflow: a.Workflow, WorkflowSHA256: sha, SideEffects: raw}
	e.MAC = statekey.MAC(key, "approved_effects", sha, e.macInput())
	meta, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(stateDir, ArchiveDir), 0o700); err != nil {
		return err
	}
	star, eff := archivePaths(stateDir, sha)
	if err := atomicfile.Write(star, a.Source, 0o600); err != nil {
		return err
	}
	return atomicfile.Write(eff, append(meta, '\n'), 0o600)
}

// ApprovedVersion is an approved version of a workflow, as the ledger
// records it and the archive keeps it.
type ApprovedVersion struct {
	// Workflow is the workflow's name, SHA256 its bytes' sha256, and the
	// rest the ledger entry that approved them.
	Workflow, SHA256                       string
	CandidateID, Actor, RecordedAt, Bundle string
	// Source and SideEffects are the archived copy; both are empty when
	// Err is set.
	Source      []byte
	SideEffects []trace.SideEffect
	// Err says why the archive cannot show these bytes: a file is
	// missing, or does not hold what was approved.
	Err error
}

// ErrArchive: the archived copy of an approved workflow is missing or
// does not match what was approved.
var ErrArchive = errors.New("approved archive")

// LastApproved finds, in the ledger under stateDir, the most recent
// approval of the workflow named workflow whose sha256 is not notSHA and
// whose bytes are still approved (the ledger's latest decision on them
// is an approval), and reads its archived copy. Nil, with no error, when
// the ledger holds none (an approval recorded before the archive existed
// names no workflow). A ledger line whose MAC fails is an error, as
// Check refuses it; an archived copy that is missing or tampered
// with is returned with Err set, never with its bytes.
func LastApproved(stateDir, workflow, notSHA string) (*ApprovedVersion, error) {
	if workflow == "" {
		return nil, nil
	}
	p := filepath.Join(stateDir, File)
	key, err := stateKey(stateDir, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := readRegularLimit(p, maxLedger)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	latest := map[string]string{} // workflow sha256 -> its latest decision
	var last *Entry
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, raw := range lines {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		e, ok := ledgerLine(key, raw)
		if !ok && i == len(lines)-1 && !bytes.HasSuffix(raw, []byte("\n")) {
			continue // the torn end of an append (see Check)
		}
		if !ok {
			return nil, fmt.Errorf("%s:%d is not an approval this state directory's key recorded", p, i+1)
		}
		if e.Workflow != workflow {
			continue
		}
		latest[e.WorkflowSHA256] = e.Decision
		if e.Decision == approved && e.WorkflowSHA256 != notSHA {
			last = &e
		}
	}
	// The last approval of other bytes, unless those bytes were rejected
	// since: then the one before, and so on.
	if last != nil && latest[last.WorkflowSHA256] != approved {
		last = nil
		for i := len(lines) - 1; i >= 0 && last == nil; i-- {
			e, ok := ledgerLine(key, lines[i])
			if ok && e.Workflow == workflow && e.Decision == approved && e.WorkflowSHA256 != notSHA && latest[e.WorkflowSHA256] == approved {
				last = &e
			}
		}
	}
	if last == nil {
		return nil, nil
	}
	v := &ApprovedVersion{Workflow: workflow, SHA256: last.WorkflowSHA256, CandidateID: last.CandidateID,
		Actor: last.Actor, RecordedAt: last.RecordedAt, Bundle: last.Bundle}
	src, effects, err := readArchived(stateDir, key, workflow, last.WorkflowSHA256)
	if err != nil {
		v.Err = err
		return v, nil
	}
	v.Source, v.SideEffects = src, effects
	return v, nil
}

// readArchived reads the archived copy of the workflow bytes sha, and
// checks that the workflow file hashes to its name and the side effects
// carry the state key's MAC for this workflow and these bytes.
func readArchived(stateDir string, key []byte, workflow, sha string) ([]byte, []trace.SideEffect, error) {
	star, eff := archivePaths(stateDir, sha)
	src, err := readRegularLimit(star, maxArchived)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrArchive, star, err)
	}
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != sha {
		return nil, nil, fmt.Errorf("%w: %s has sha256 %s, not the %s its name says was approved: it was changed after the approval", ErrArchive, star, got, sha)
	}
	meta, err := readRegularLimit(eff, maxArchived)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrArchive, eff, err)
	}
	var e approvedEffects
	// As for the ledger: encoding/json would take "Side_Effects" for
	// "side_effects" and the last of two; the names must be exact.
	if errs := trace.CheckNames(meta, eff, 1, &e); len(errs) > 0 {
		return nil, nil, fmt.Errorf("%w: %v", ErrArchive, errs)
	}
	dec := json.NewDecoder(bytes.NewReader(meta))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrArchive, eff, err)
	}
	if e.Workflow != workflow || e.WorkflowSHA256 != sha || e.macInput() == nil || !statekey.Check(key, "approved_effects", sha, e.macInput(), e.MAC) {
		return nil, nil, fmt.Errorf("%w: %s is not the side effects this state directory's key recorded for workflow %s with sha256 %s: it was changed after the approval", ErrArchive, eff, workflow, sha)
	}
	var effects []trace.SideEffect
	if err := json.Unmarshal(e.SideEffects, &effects); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: side_effects: %v", ErrArchive, eff, err)
	}
	return src, effects, nil
}

// readRegularLimit reads the regular file p, up to limit bytes
// (capped.ReadFile); a symbolic link, which could lead out of the state
// directory, is refused.
func readRegularLimit(p string, limit int64) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s is a symbolic link", p)
	}
	return capped.ReadFile(p, limit)
}
