package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/jsontext"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/statekey"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Suspending and resuming a run.
//
// A run that reaches ctx.approve for a boundary nobody has decided stops
// in state pending_approval and writes journal.json next to its trace:
// everything needed to run it again (target, config, parameters, options)
// and, for every completed step, what it was called with and what it
// returned. Resume does not restore an interpreter (Starlark threads
// cannot be serialized); it runs the workflow again from the start and
// answers every step up to the pending one from the journal, without
// executing it. Starlark is deterministic (no clock, randomness or I/O),
// so the same parameters and answers take the workflow down the same
// path to the same ctx.approve; a step that does not match its journal
// entry (the workflow or its inputs changed) stops the resume with
// ErrJournal before anything executes. Secrets are re-resolved, not
// journaled: outputs are journaled with secret values replaced, and put
// back when replayed.

var (
	// ErrPendingApproval: the run stopped at an approval nobody has
	// decided yet; Result.Pending says which.
	ErrPendingApproval = errors.New("approval pending")
	// ErrRejected: an approval boundary was rejected.
	ErrRejected = errors.New("approval rejected")
	// ErrJournal: a resumed run does not follow its journal, or the
	// journal cannot be resumed.
	ErrJournal = errors.New("cannot resume")
)

// Prompter asks a person to decide an approval boundary. The cli passes
// one only when stdin is a terminal.
type Prompter interface {
	Ask(ctx context.Context, boundary, prompt string) (approved bool, err error)
}

// JournalCall is one completed step: enough to recognize it and answer it
// again when the run is resumed.
type JournalCall struct {
	Step int `json:"step"`
	// Kind is "tool", "model" or "approve".
	Kind string `json:"kind"`
	Name string `json:"name"`
	// ArgumentsSHA256 is the receipt's digest of the arguments (secrets
	// replaced).
	ArgumentsSHA256 string `json:"arguments_sha256"`
	// Output is what the step returned to the workflow, secrets
	// replaced.
	Output any `json:"output"`
	// Error is the failure of a tolerant call (ctx.try_tool, a tool
	// call of ctx.agent), which the workflow saw instead of an output.
	Error string `json:"error,omitempty"`
}

// Journal is the persisted state of a suspended run.
type Journal struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	// Target is the absolute path of the bundle or .star file, Config
	// that of the configuration ("" for none).
	Target         string            `json:"target"`
	Config         string            `json:"config,omitempty"`
	Workflow       string            `json:"workflow"`
	WorkflowSHA256 string            `json:"workflow_sha256"`
	Params         Params            `json:"params"`
	DryRun         bool              `json:"dry_run"`
	Unapproved     bool              `json:"allow_unapproved"`
	Verify         bool              `json:"verify,omitempty"`
	Approve        []string          `json:"approve"`
	MaxSteps       uint64            `json:"max_steps"`
	Started        string            `json:"started"`
	Pending        *runstate.Pending `json:"pending,omitempty"`
	// Resumes counts how often the run was resumed.
	Resumes int           `json:"resumes"`
	Calls   []JournalCall `json:"calls"`

	// The run's records so far, carried over into the resumed run's.
	Actions  []trace.Action `json:"actions"`
	Receipts []Receipt      `json:"receipts"`
	Phases   []JournalPhase `json:"phases"`
	Counts   JournalCounts  `json:"counts"`
}

// JournalPhase is a session.md section carried over.
type JournalPhase struct {
	Title string   `json:"title"`
	Lines []string `json:"lines"`
}

// JournalCounts are the Result counters carried over.
type JournalCounts struct {
	Steps, ToolCalls, ModelCalls, Approvals int
	TokensUsed                              int64
	CostUSD                                 float64
	Model                                   string
}

// ReadJournal reads the journal of run runID under stateDir.
func ReadJournal(stateDir, runID string) (*Journal, error) {
	if runID == "" || !filepath.IsLocal(runID) || strings.ContainsAny(runID, `/\`) {
		return nil, fmt.Errorf("%w: %q is not a run id", ErrJournal, runID)
	}
	p := filepath.Join(stateDir, "runs", runID, runstate.JournalFile)
	// Regular files only, like every other input: a FIFO in the state
	// directory would block resume.
	data, err := readRegular(p)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(filepath.Dir(p)); serr != nil {
			return nil, fmt.Errorf("%w: no run %s in %s", ErrJournal, runID, filepath.Join(stateDir, "runs"))
		}
		return nil, fmt.Errorf("%w: run %s was never suspended (it has no %s)", ErrJournal, runID, runstate.JournalFile)
	}
	if err != nil {
		return nil, fmt.Errorf("reading journal: %w", err)
	}
	// The journal decides what the resumed run does; only one this
	// state directory's key authenticates, for this run, is read at all.
	key, err := stateKey(stateDir, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: journal_unauthenticated: the state directory has no %s, so no journal in it can be authenticated", ErrJournal, p, StateKeyFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJournal, err)
	}
	mac, err := readRegular(filepath.Join(filepath.Dir(p), journalMACFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: journal_unauthenticated: it has no %s (the file was removed: a run writes it before its journal)", ErrJournal, p, journalMACFile)
	}
	if err != nil || !anyMAC(key, runID, data, mac) {
		return nil, fmt.Errorf("%w: %s: journal_unauthenticated: the journal was not written by run %s with this state directory's key (or was changed since)", ErrJournal, p, runID)
	}
	// More than one MAC is a rewrite cut short after its journal was in
	// place (see writeJournalPair): finish it, so that the journal it
	// replaced, should a copy be put back, is no longer accepted. Where
	// the file cannot be written the journal is still read: it is
	// authentic, and nothing else of the run can be written there either.
	if own := statekey.MAC(key, "journal", runID, data) + "\n"; string(mac) != own {
		_ = writeDurable(filepath.Join(filepath.Dir(p), journalMACFile), []byte(own))
	}
	j := new(Journal)
	if errs := trace.CheckNames(data, p, 1, j); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrJournal, errs)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(j); err != nil {
		// Authenticated but not a journal this version reads: still a
		// run that cannot be resumed, as callers test with ErrJournal.
		return nil, fmt.Errorf("%w: %s: %w", ErrJournal, p, err)
	}
	if j.RunID != runID {
		return nil, fmt.Errorf("%w: %s: journal_unauthenticated: the journal is run %s's, not %s's", ErrJournal, p, j.RunID, runID)
	}
	return j, nil
}

// Resume continues the suspended run j. w must be the workflow j recorded
// (the same bytes). From opts it takes Config, Tools, Model, HTTPClient,
// Getenv, Environ, Prompter, Log, StateDir and Now; Approve is added to
// the approvals the run was started with, and Reject lists boundaries to
// reject. The run id, parameters, DryRun, AllowUnapproved, Verify and
// MaxSteps are the journal's. The run keeps its record directory, and its records
// continue where they stopped.
func Resume(ctx context.Context, w *Workflow, j *Journal, opts Options) (*Result, error) {
	if j.Status != runstate.StatusPendingApproval || j.Pending == nil {
		return nil, fmt.Errorf("%w: run %s is %s, not %s", ErrJournal, j.RunID, j.Status, runstate.StatusPendingApproval)
	}
	// An answer the decision does not offer is refused before anything
	// runs: it would end the run as failed and leave it to no resume.
	if p := j.Pending; opts.Decide != "" && p.Kind == runstate.PendingDecision && !slices.Contains(p.Options, opts.Decide) {
		return nil, fmt.Errorf("%w: %q is not an option of %s (options: %s)", ErrDecision, opts.Decide, p.Boundary, quoteList(p.Options))
	}
	unlock, err := lockResume(opts.StateDir, j)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if w.SHA256 != j.WorkflowSHA256 {
		return nil, fmt.Errorf("%w: %s has sha256 %s, but run %s ran %s; the workflow changed", ErrJournal, w.File, w.SHA256, j.RunID, j.WorkflowSHA256)
	}
	for _, b := range opts.Reject {
		if slices.Contains(opts.Approve, b) {
			return nil, fmt.Errorf("boundary %s is both approved and rejected", b)
		}
	}
	cfg := opts.Config
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	opts.RunID = j.RunID
	opts.DryRun = j.DryRun
	opts.AllowUnapproved = j.Unapproved
	opts.MaxSteps = j.MaxSteps
	// The bundle may have changed (or its approval been withdrawn) since
	// the run was suspended: readiness is decided again, as run does.
	if err := admit(w, opts); err != nil {
		return nil, err
	}
	approve := slices.Clone(j.Approve)
	for _, b := range opts.Approve {
		if !slices.Contains(approve, b) {
			approve = append(approve, b)
		}
	}
	opts.Approve = approve
	if err := Check(w, cfg, opts.Tools); err != nil {
		return nil, err
	}
	opts.Verify = j.Verify
	opts, exp, err := prepare(w, cfg, opts)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	h := newHost(ctx, w, cfg, opts)
	h.expect = exp
	h.journal = j
	h.replayUntil = j.Pending.Step
	h.actions = j.Actions
	h.res.Receipts = j.Receipts
	for _, p := range j.Phases {
		h.phases = append(h.phases, runrecord.Phase{Title: p.Title, Lines: p.Lines, Loose: true})
	}
	c := j.Counts
	h.res.Steps, h.res.ToolCalls, h.res.ModelCalls, h.res.Approvals = c.Steps, c.ToolCalls, c.ModelCalls, c.Approvals
	h.res.TokensUsed, h.res.CostUSD, h.model = c.TokensUsed, c.CostUSD, c.Model
	h.calls = j.Calls
	started, err := time.Parse(time.RFC3339Nano, j.Started)
	if err != nil {
		started = opts.Now()
	}
	h.res.Started = started
	return h.run(j.Params)
}

// resumeLockFile is the lock a resume of a run holds in its directory
// until the resumed run has rewritten its journal.
const resumeLockFile = "resume.lock"

// lockResume makes one resume of a suspended run the only one. Two
// resumes started together both read the journal as pending, and each
// would run the steps after the boundary: the side effects the journal
// exists to keep from happening twice. The first takes the run's lock
// and holds it until its journal is rewritten; another one meanwhile is
// refused at once. One that gets the lock after the first is done reads
// the journal again and finds it no longer the one it was given (the
// run completed, or was suspended further on), and is refused too. A
// resume that left the run where it was (no answer given) changed
// nothing the journal it was given says.
func lockResume(stateDir string, j *Journal) (unlock func(), err error) {
	if stateDir == "" {
		stateDir = DefaultStateDir
	}
	f, err := os.OpenFile(filepath.Join(stateDir, "runs", j.RunID, resumeLockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking run %s: %w", j.RunID, err)
	}
	release, ok, err := atomicfile.TryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking run %s: %w", j.RunID, err)
	}
	if !ok {
		f.Close()
		return nil, fmt.Errorf("%w: run %s is already being resumed by another process", ErrJournal, j.RunID)
	}
	unlock = func() { release(); f.Close() }
	now, err := ReadJournal(stateDir, j.RunID)
	if err != nil {
		unlock()
		return nil, err
	}
	if now.Status != runstate.StatusPendingApproval || now.Pending == nil {
		unlock()
		return nil, fmt.Errorf("%w: run %s is already resumed: it is %s now", ErrJournal, j.RunID, now.Status)
	}
	if now.Pending.Step != j.Pending.Step {
		unlock()
		return nil, fmt.Errorf("%w: run %s was resumed meanwhile and waits at step %d now; resume it again", ErrJournal, j.RunID, now.Pending.Step)
	}
	return unlock, nil
}

// replaying reports whether step is answered from the journal.
func (h *host) replaying(step int) bool { return step < h.replayUntil }

// replay answers step from the journal, checking that the workflow calls
// what the journal recorded.
func (h *host) replay(step int, kind, name, argsDigest string) (starlark.Value, error) {
	out, failure, err := h.replayCall(step, kind, name, argsDigest)
	if err == nil && failure != nil {
		err = failure // unreachable: only tolerant calls journal failures
	}
	if err != nil {
		return nil, err
	}
	return toStarlark(out)
}

// replayCall is replay for Go callers: it returns the recorded output, or
// the recorded failure of a tolerant call.
func (h *host) replayCall(step int, kind, name, argsDigest string) (out any, failure, err error) {
	if step > len(h.journal.Calls) || h.journal.Calls[step-1].Step != step {
		return nil, nil, fmt.Errorf("%w: the journal has no step %d", ErrJournal, step)
	}
	c := h.journal.Calls[step-1]
	if c.Kind != kind || c.Name != name || c.ArgumentsSHA256 != argsDigest {
		return nil, nil, fmt.Errorf("%w: step %d is %s %s with arguments %s, but the journal recorded %s %s with arguments %s; the workflow or its inputs changed",
			ErrJournal, step, kind, name, argsDigest, c.Kind, c.Name, c.ArgumentsSHA256)
	}
	if c.Error != "" {
		return nil, errors.New(c.Error), nil
	}
	return h.secrets.Restore(c.Output), nil, nil
}

// journalCall records a completed step for resume.
func (h *host) journalCall(step int, kind, name, argsDigest string, out any) {
	h.calls = append(h.calls, JournalCall{Step: step, Kind: kind, Name: name, ArgumentsSHA256: argsDigest, Output: out})
}

// journalFailure records a tolerant step that failed, with its error
// (secrets already replaced), so a resumed run fails it the same way.
func (h *host) journalFailure(step int, kind, name, argsDigest string, failure error) {
	h.calls = append(h.calls, JournalCall{Step: step, Kind: kind, Name: name, ArgumentsSHA256: argsDigest, Error: failure.Error()})
}

// writeJournal writes journal.json: always for a suspended run, and for a
// resumed one, so that its status says it can no longer be resumed.
func (h *host) writeJournal(dir string) error {
	if h.res.Status != runstate.StatusPendingApproval && h.journal == nil || h.driven {
		return nil
	}
	data, err := jsontext.Canonical(h.snapshot())
	if err != nil {
		return err
	}
	key, err := stateKey(h.opts.StateDir, true)
	if err != nil {
		return err
	}
	return writeJournalPair(dir, key, h.opts.RunID, data)
}

// snapshot is the run's journal as it stands.
func (h *host) snapshot() *Journal {
	j := &Journal{
		RunID: h.opts.RunID, Status: h.res.Status,
		Workflow: h.w.Name, WorkflowSHA256: h.w.SHA256,
		Params: h.params, DryRun: h.opts.DryRun, Unapproved: h.opts.AllowUnapproved, Verify: h.opts.Verify,
		Approve: h.opts.Approve, MaxSteps: h.opts.MaxSteps,
		Started: h.res.Started.UTC().Format(time.RFC3339Nano),
		Pending: h.res.Pending, Calls: h.calls,
		Actions: h.actions, Receipts: h.res.Receipts,
		Counts: JournalCounts{
			Steps: h.res.Steps, ToolCalls: h.res.ToolCalls, ModelCalls: h.res.ModelCalls, Approvals: h.res.Approvals,
			TokensUsed: h.res.TokensUsed, CostUSD: h.res.CostUSD, Model: h.model,
		},
	}
	if h.journal != nil {
		j.Resumes = h.journal.Resumes + 1
	}
	if t, err := filepath.Abs(h.w.Target); err == nil && h.w.Target != "" {
		j.Target = t
	}
	if h.cfg.File != "" {
		j.Config = h.cfg.File
	}
	if j.Approve == nil {
		j.Approve = []string{}
	}
	if j.Calls == nil {
		j.Calls = []JournalCall{}
	}
	if j.Params == nil {
		j.Params = Params{}
	}
	// The pending phase is rewritten when the run is resumed; the
	// journal keeps the phases before it.
	phases := h.phases
	if h.res.Status == runstate.StatusPendingApproval && h.pendingPhase >= 0 {
		phases = phases[:h.pendingPhase]
	}
	for _, p := range phases {
		j.Phases = append(j.Phases, JournalPhase{Title: p.Title, Lines: p.Lines})
	}
	return j
}

// journalWriteStep is called between the writes of writeJournalPair; a
// test makes it fail to stand for a crash at that point.
var journalWriteStep = func(step string) error { return nil }

// writeJournalPair replaces the run's journal with data and its MAC so that
// a crash at any point leaves a pair ReadJournal accepts: the journal as it
// was, or the new one. Each file is written whole and durably (a temporary
// file synced and renamed over it, see writeDurable), but two renames are
// not one, so the order carries the proof. journal.mac may hold several
// MACs, one a line, and a journal is authentic when one of them is its MAC:
//
//  1. journal.mac gets the new journal's MAC and, when the journal on disk
//     is authentic, that journal's MAC too;
//  2. journal.json is replaced by the new journal;
//  3. journal.mac is left with the new journal's MAC alone.
//
// Before 1 and after 1 the old journal is on disk with its MAC; after 2
// and after 3 the new one is with its own. The old MAC is kept only for a
// journal that the old file authenticates, so a journal changed by anyone
// but its run is never blessed by its rewrite, and it is gone once the
// rewrite is complete: the journal of a resumed run that has ended, which
// says it can no longer be resumed, is the only one accepted. A crash in
// step 1 or 2 of that rewrite leaves the run resumable, as a crash before
// the rewrite would.
func writeJournalPair(dir string, key []byte, runID string, data []byte) error {
	jp, mp := filepath.Join(dir, runstate.JournalFile), filepath.Join(dir, journalMACFile)
	mac := statekey.MAC(key, "journal", runID, data)
	macs := mac + "\n"
	if old := currentJournalMAC(jp, mp, key, runID); old != "" && old != mac {
		macs += old + "\n"
	}
	if err := writeDurable(mp, []byte(macs)); err != nil {
		return err
	}
	if err := journalWriteStep("mac"); err != nil {
		return err
	}
	if err := writeDurable(jp, data); err != nil {
		return err
	}
	if err := journalWriteStep("journal"); err != nil {
		return err
	}
	if macs == mac+"\n" {
		return nil
	}
	return writeDurable(mp, []byte(mac+"\n"))
}

// currentJournalMAC returns the MAC of the journal on disk when
// journal.mac authenticates it, else "".
func currentJournalMAC(journalPath, macPath string, key []byte, runID string) string {
	data, err := readRegular(journalPath)
	if err != nil {
		return ""
	}
	macs, err := readRegular(macPath)
	if err != nil || !anyMAC(key, runID, data, macs) {
		return ""
	}
	return statekey.MAC(key, "journal", runID, data)
}

// anyMAC reports whether one of the lines of macs is the journal MAC of
// data; see writeJournalPair for why there may be more than one.
func anyMAC(key []byte, runID string, data, macs []byte) bool {
	for _, line := range strings.Split(string(macs), "\n") {
		if line = strings.TrimSpace(line); line != "" && statekey.Check(key, "journal", runID, data, line) {
			return true
		}
	}
	return false
}

// syncFile makes a file's contents durable; tests count the calls.
var syncFile = (*os.File).Sync

// writeDurable replaces the file p (mode 0600) with data atomically and
// durably (atomicfile), its syncs made through syncFile.
func writeDurable(p string, data []byte) error {
	return atomicfile.WriteSync(p, data, 0o600, syncFile)
}

// LoadConfig loads the configuration a resumed run uses: file when the
// caller names one, else the one the run was started with (Config), else
// none, which is the empty configuration of the current directory.
func (j *Journal) LoadConfig(file string) (*runconfig.Config, error) {
	if file == "" {
		file = j.Config
	}
	if file == "" {
		return &runconfig.Config{Dir: "."}, nil
	}
	return runconfig.LoadConfig(file)
}
