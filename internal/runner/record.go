package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/runrecord"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// write records the run: trace.json and session.md under
// <StateDir>/runs/<run-id>/ (runrecord writes them).
func (h *host) write() error {
	dir := filepath.Join(h.opts.StateDir, "runs", h.opts.RunID)
	h.res.Dir = dir
	rec := h.recordData()
	data, err := runrecord.EncodeTrace(rec.Trace(), rec.Receipts)
	if err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	if err := atomicfile.MkdirUntracked(h.opts.StateDir); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	if err := runrecord.WriteFile(filepath.Join(dir, runstate.TraceFile), data); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	// The journal, what a resume needs, is written before the log, so
	// that nothing in the log can keep a suspended run from resuming.
	if err := h.writeJournal(dir); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	md, err := rec.Session()
	if err != nil {
		// What a workflow logged (a notification nested deeper than the
		// format holds) must not cost the run its record: the log says
		// why it holds no phases, and trace.json holds the run.
		if md, err = rec.PlainSession(err); err != nil {
			return fmt.Errorf("recording run: %w", err)
		}
	}
	if err := runrecord.WriteFile(filepath.Join(dir, runstate.SessionFile), md); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	return nil
}

// recordData is what the run's record is written from, as it stands.
func (h *host) recordData() *runrecord.Run {
	r := h.res
	resume := session.NoResumePoint
	if r.Status != runstate.StatusCompleted {
		resume = "step-" + strconv.Itoa(h.step)
	}
	if r.Pending != nil {
		resume = "step-" + strconv.Itoa(r.Pending.Step)
	}
	return &runrecord.Run{
		ID: r.RunID, Workflow: h.w.Name, File: h.w.File, SHA256: h.w.SHA256, BundleStatus: h.w.Status(),
		Status: r.Status, Model: h.model, DryRun: r.DryRun, AllowUnapproved: r.AllowUnapproved,
		Started: r.Started, Ended: r.Ended, Duration: r.Duration,
		Steps: r.Steps, ToolCalls: r.ToolCalls, ModelCalls: r.ModelCalls, Approvals: r.Approvals, TokensUsed: r.TokensUsed,
		Refused: len(r.Refusals), Receipts: r.Receipts, Actions: h.actions, Phases: h.phases,
		ResumePoint: resume, Meta: h.runMeta(),
	}
}

// runMeta is the trace's crystallize_run member: what the run was and
// did.
func (h *host) runMeta() map[string]any {
	r := h.res
	refusals := make([]any, len(r.Refusals))
	for i, rf := range r.Refusals {
		m := map[string]any{"step": rf.Step, "tool": rf.Tool, "reason": rf.Reason}
		if len(rf.Missing) > 0 {
			m["missing_capabilities"] = toAny(rf.Missing)
		}
		refusals[i] = m
	}
	run := map[string]any{
		"run_id":           r.RunID,
		"workflow":         h.w.Name,
		"workflow_file":    filepath.ToSlash(h.w.File),
		"workflow_sha256":  h.w.SHA256,
		"workflow_origin":  h.w.Origin(),
		"status":           r.Status,
		"dry_run":          r.DryRun,
		"allow_unapproved": r.AllowUnapproved,
		"refusals":         refusals,
		"steps":            r.Steps,
	}
	if fb := h.fallbackRecords(); len(fb) > 0 {
		run["fallbacks"] = fb
	}
	if st := h.w.Status(); st != "" {
		run["bundle_status"] = st
	}
	if r.Error != "" {
		run["error"] = r.Error
	}
	if p := r.Pending; p != nil {
		run["pending_approval"] = map[string]any{"step": p.Step, "boundary": p.Boundary}
	}
	if r.Output != nil {
		run["output"] = r.Output
	}
	if v := r.Verification; v != nil {
		m := map[string]any{"candidate_id": v.CandidateID, "passed": v.Passed, "expected_receipts": v.Expected, "receipts": v.Actual}
		if d := v.Divergence; d != nil {
			m["divergence"] = map[string]any{"path": d.Path, "message": d.Message}
		}
		run["verification"] = m
	}
	return run
}

// candidateStep returns the step of the workflow's candidate that a call
// of tool name at run step step performs: the candidate step with that
// index and name (a generated workflow makes its calls in step order),
// else the first non-model step with that name, else nil (a bare file, or
// a tool the candidate does not know).
func (h *host) candidateStep(step int, name string) *candidate.Step {
	c := h.w.Candidate
	if c == nil {
		return nil
	}
	var first *candidate.Step
	for i := range c.Steps {
		s := &c.Steps[i]
		if s.Name != name || s.Kind == trace.KindModelCall {
			continue
		}
		if s.Index == step {
			return s
		}
		if first == nil {
			first = s
		}
	}
	return first
}

// The three functions below say what a tool call is, for the check before
// it and the record after it. The binding decides what it declares; what
// it leaves out comes from the candidate step the call performs, so that
// a run with plain command bindings records the kind, capabilities and
// side effects of the traces it was mined from, and mining the run with
// them finds the same steps (same signatures, same side effects) by
// construction rather than by a config that repeats the traces.

// callKind is the binding's kind when it sets one (kind, or an HTTP
// binding), else the candidate step's, else tool_call.
func (h *host) callKind(step int, name string, b *toolexec.Binding) trace.Kind {
	if b.Tool != nil && (b.Tool.Kind != "" || b.Tool.HTTP != nil) {
		return b.Kind()
	}
	if s := h.candidateStep(step, name); s != nil && s.Kind != "" {
		return s.Kind
	}
	return b.Kind()
}

// callCapabilities is what a call needs: the binding's capabilities when
// it declares any, else the candidate step's and its side effects',
// sorted. A call the candidate says writes files needs fs.write even when
// its binding forgot to say so: deny by default.
func (h *host) callCapabilities(step int, name string, b *toolexec.Binding) []string {
	if caps := b.Capabilities(); len(caps) > 0 || b.Builtin != "" {
		return caps
	}
	s := h.candidateStep(step, name)
	if s == nil {
		return b.Capabilities()
	}
	var caps []string
	add := func(c string) {
		if c != "" && !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	for _, c := range s.Capabilities {
		add(c)
	}
	for _, se := range s.SideEffects {
		add(se.Capability)
	}
	sort.Strings(caps)
	return caps
}

// callSideEffects is what a call declares it changes: the binding's side
// effects when it declares any (or is a built-in, whose effects the call
// itself records), else the candidate step's, with a target the candidate
// parameterized (metadata target_parameter) taken from the call's
// argument of that name, and one computed from the workflow's parameters
// (candidate.TargetExpression) computed from this run's.
func (h *host) callSideEffects(step int, name string, b *toolexec.Binding, args map[string]any) []trace.SideEffect {
	if effects := b.SideEffects(); len(effects) > 0 || b.Builtin != "" {
		return effects
	}
	s := h.candidateStep(step, name)
	if s == nil || len(s.SideEffects) == 0 {
		return b.SideEffects()
	}
	out := make([]trace.SideEffect, len(s.SideEffects))
	var values map[string]string
	for i, se := range s.SideEffects {
		target := se.Target
		if p, _ := se.Metadata["target_parameter"].(string); p != "" {
			if v, ok := args[p]; ok {
				target = stepvalue.ArgString(v)
			}
		}
		if _, ok := se.Metadata[candidate.TargetExpression]; ok {
			if values == nil {
				values = map[string]string{}
				for k, v := range h.params {
					if s, ok := v.(string); ok {
						values[k] = s
					}
				}
			}
			target = replay.EffectTarget(se, values)
		}
		out[i] = trace.SideEffect{Kind: se.Kind, Target: target, Capability: se.Capability, Mutation: se.Mutation}
	}
	return out
}

// RunRecord reports whether s, read from name, is the session log of a
// workflow run as Run records it: its frontmatter has workflow:, and name
// is <state-dir>/runs/<session_id>/session.md. It returns the run id and
// the state directory.
func RunRecord(name string, s *session.Session) (runID, stateDir string, ok bool) {
	workflow := false
	for _, f := range s.Meta.Extra {
		workflow = workflow || f.Key == "workflow"
	}
	runDir := filepath.Dir(filepath.Clean(name))
	runs := filepath.Dir(runDir)
	id := s.Meta.SessionID
	if !workflow || filepath.Base(name) != runstate.SessionFile || filepath.Base(runDir) != id || filepath.Base(runs) != "runs" {
		return "", "", false
	}
	return id, filepath.Dir(runs), true
}

// NothingToResumeError is the answer for the session log of a run that
// has ended: completed or rejected, or no longer waiting at an approval.
type NothingToResumeError struct {
	RunID, Status string
}

func (e *NothingToResumeError) Error() string {
	return fmt.Sprintf("run %s already %s; nothing to resume", e.RunID, e.Status)
}

// RunLog is what the session log of a run is to a caller that would
// continue it.
type RunLog struct {
	RunID, StateDir string
	// Status is the status the log records.
	Status string
	// Journal is the journal of the run waiting at an approval; nil when
	// the run was never suspended (there is no journal beside the log), so
	// only its context can be resumed.
	Journal *Journal
}

// OpenRunLog says what the session log s, read from name, is to a caller
// that would continue it: nil when it is not a run's log (RunRecord); a
// *NothingToResumeError for a run that has ended (completed or rejected,
// or no longer waiting at an approval).
func OpenRunLog(name string, s *session.Session) (*RunLog, error) {
	id, stateDir, ok := RunRecord(name, s)
	if !ok {
		return nil, nil
	}
	r := &RunLog{RunID: id, StateDir: stateDir, Status: s.Meta.Status}
	_, err := os.Stat(filepath.Join(filepath.Dir(name), runstate.JournalFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if r.Status == runstate.StatusCompleted || r.Status == runstate.StatusRejected {
			return nil, &NothingToResumeError{RunID: id, Status: r.Status}
		}
		return r, nil
	case err != nil:
		return nil, err
	}
	if r.Journal, err = ReadJournal(stateDir, id); err != nil {
		return nil, err
	}
	if r.Journal.Status != runstate.StatusPendingApproval {
		return nil, &NothingToResumeError{RunID: id, Status: r.Journal.Status}
	}
	return r, nil
}

// recordRequest adds the method and URL of an http call to its action
// and session phase, just recorded. Headers, which hold the secrets, are
// never recorded.
func (h *host) recordRequest(r *toolexec.Request) {
	line := r.Method + " " + h.secrets.Scrub(r.URL)
	h.actions[len(h.actions)-1].Metadata["request"] = line
	h.phases[len(h.phases)-1].NoteAfterCalls("Request: " + codeSpan(line))
}

// recordMCP adds, to the action and session phase of the call just
// recorded, the MCP server and tool it called and the tool's annotations
// (when the server was reached). It does nothing for other bindings.
func (h *host) recordMCP(b *toolexec.Binding, name string) {
	if b.Tool == nil || b.Tool.MCP == "" || len(h.actions) == 0 {
		return
	}
	server, tool := b.Tool.MCP, toolexec.MCPToolName(b.Pattern, b.Tool, name)
	m := map[string]any{"server": server, "tool": tool}
	line := "MCP server " + codeSpan(server) + ", tool " + codeSpan(tool)
	if ann, ok := h.tools.MCPAnnotations(server, tool); ok {
		m["annotations"] = ann
		var hints []string
		for _, k := range sortedKeys(ann) {
			if v, ok := ann[k].(bool); ok {
				hints = append(hints, fmt.Sprintf("%s=%t", k, v))
			}
		}
		line += ": " + strings.Join(hints, ", ")
	}
	h.actions[len(h.actions)-1].Metadata["mcp"] = m
	h.phases[len(h.phases)-1].NoteAfterCalls(line)
}
