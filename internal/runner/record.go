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
	"time"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/replay"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// write records the run: trace.json and session.md under
// <StateDir>/runs/<run-id>/.
func (h *host) write() error {
	dir := filepath.Join(h.opts.StateDir, "runs", h.opts.RunID)
	h.res.Dir = dir
	t, err := h.trace()
	if err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	data, err := encodeTrace(t, h.res.Receipts)
	if err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	if err := atomicfile.MkdirUntracked(h.opts.StateDir); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	if err := writeRecord(filepath.Join(dir, runstate.TraceFile), data); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	// The journal, what a resume needs, is written before the log, so
	// that nothing in the log can keep a suspended run from resuming.
	if err := h.writeJournal(dir); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	md, err := h.session()
	if err != nil {
		// What a workflow logged (a notification nested deeper than the
		// format holds) must not cost the run its record: the log says
		// why it holds no phases, and trace.json holds the run.
		if md, err = h.plainSession(err); err != nil {
			return fmt.Errorf("recording run: %w", err)
		}
	}
	if err := writeRecord(filepath.Join(dir, runstate.SessionFile), md); err != nil {
		return fmt.Errorf("recording run: %w", err)
	}
	return nil
}

// writeRecord replaces the record file p with data atomically but
// without syncing it (atomicfile.NoSync): a reader never sees half a
// trace.json, and a link planted at p is replaced, not written through.
// A record is not state a resume trusts (that is the journal, which is
// synced), so a completed run pays for no fsync.
func writeRecord(p string, data []byte) error {
	return atomicfile.WriteSync(p, data, 0o644, atomicfile.NoSync)
}

// trace builds the run's trace: one action per executed call, and a
// replay_run whose effect_receipts are the receipts, so that the replay
// oracle and mining read runs as they read recorded traces. Receipt ids,
// durations and the run id change on every run and are allowlisted. The
// receipts themselves are left out of the value (effect_receipts is
// empty): encodeTrace writes them from h.res.Receipts, without building
// a map of each.
func (h *host) trace() (*trace.Trace, error) {
	r := h.res
	usage := false
	for _, rc := range r.Receipts {
		usage = usage || rc.Usage != nil
	}
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
	var total trace.Usage
	for _, a := range h.actions {
		if a.Cost != nil {
			total.ModelCalls += a.Cost.ModelCalls
			total.InputTokens += a.Cost.InputTokens
			total.OutputTokens += a.Cost.OutputTokens
			total.TotalCostUSD += a.Cost.TotalCostUSD
		}
	}
	total.WallMS = r.Duration.Milliseconds()
	actions := h.actions
	if actions == nil {
		actions = []trace.Action{}
	}
	allow := []trace.AllowlistRule{
		{Path: "/run_id", Reason: "run ids are allocated per execution"},
		{Path: "/effect_receipts/*/receipt_id", Reason: "receipt ids are allocated per execution"},
		{Path: "/effect_receipts/*/duration_ms", Reason: "durations vary between executions"},
	}
	if usage {
		// Only with model calls: a rule that matches nothing is a
		// warning of the oracle.
		allow = append(allow, trace.AllowlistRule{Path: "/effect_receipts/*/usage", Reason: "token counts and cost vary between model calls"})
	}
	return &trace.Trace{
		Version:         trace.SchemaVersion,
		ID:              r.RunID,
		WorkflowID:      h.w.Name,
		StartedAt:       r.Started.UTC().Format(time.RFC3339Nano),
		FinishedAt:      r.Ended.UTC().Format(time.RFC3339Nano),
		Actions:         actions,
		ReplayRun:       map[string]any{"run_id": r.RunID, "effect_receipts": []any{}},
		ReplayAllowlist: allow,
		Usage:           &total,
		Metadata:        map[string]any{"crystallize_run": run},
	}, nil
}

// session renders session.md: a session.Session whose frontmatter is the
// run's record and whose body is the run's phases, one "##" phase per step
// with its tool calls and callouts, written by session.Format, so that
// session.md is by construction what session.Parse (and so crystallize
// session resume) reads back; a body the format cannot hold is an error
// rather than a log resume misreads.
//
// The body is the markdown of the phases' lines. The session is built
// from the phases' blocks when they are that body exactly (what
// session.FormatAs checks) and session.Format accepts them;
// else, and for a run whose phases came back from a journal as lines, it
// is read from the markdown with session.ParseBody. Both give the same
// session.md: Format(s) reads back as s, so the markdown that is s's body
// reads as s. Parsing costs a run's log more than the run itself.
func (h *host) session() ([]byte, error) {
	body := h.sessionBody()
	if md, ok := h.builtSession(body); ok {
		return md, nil
	}
	return h.parsedSession(body)
}

// sessionBody is the markdown body of session.md: the title, the
// preamble, the phases' lines under their headings with a thematic break
// between them, and the footer.
func (h *host) sessionBody() string {
	var b strings.Builder
	n := len(h.w.Name) + len(h.w.File) + 256
	for _, p := range h.phases {
		n += len(p.title) + 10
		for _, l := range p.lines {
			n += len(l) + 1
		}
	}
	b.Grow(n)
	b.WriteString("# " + h.w.Name + "\n\n" + h.preamble() + "\n")
	if h.res.AllowUnapproved {
		b.WriteString("\n> [!decision]\n> " + allowUnapprovedNote + "\n")
	}
	for i, p := range h.phases {
		if i > 0 {
			b.WriteString("\n---\n")
		}
		b.WriteString("\n## " + p.title + "\n")
		for _, l := range p.lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	b.WriteString("\n---\n\n" + h.footer() + "\n")
	return b.String()
}

const allowUnapprovedNote = "Run with --allow-unapproved although the bundle is not ready."

// builtSession is session.md built from the phases' blocks, with false
// when a phase holds lines without their blocks, when the blocks are not
// body, or when session.Format refuses them.
func (h *host) builtSession(body string) ([]byte, bool) {
	s := h.sessionMeta()
	s.Title = h.w.Name
	s.Blocks = []session.Block{session.Prose{Text: h.preamble()}}
	if h.res.AllowUnapproved {
		s.Blocks = append(s.Blocks, session.Callout{Type: session.CalloutDecision, Body: []string{allowUnapprovedNote}})
	}
	s.Phases = make([]session.Phase, len(h.phases))
	for i, p := range h.phases {
		if p.loose {
			return nil, false
		}
		// Cloned: the break joins the phase's last paragraph.
		s.Phases[i] = session.Phase{Name: p.title, Blocks: appendProse(slices.Clone(p.blocks), "---")}
	}
	last := &s.Blocks
	if n := len(s.Phases); n > 0 {
		last = &s.Phases[n-1].Blocks
	} else {
		*last = appendProse(*last, "---")
	}
	*last = appendProse(*last, h.footer())
	s.Meta.ResumePoint = resumePhase(s, s.Meta.ResumePoint)
	md, ok, err := session.FormatAs(s, body)
	return md, ok && err == nil
}

// parsedSession is session.md with the session read from body.
func (h *host) parsedSession(body string) ([]byte, error) {
	s := h.sessionMeta()
	// Recorded text (a tool's output, a notification) may hold bytes
	// that are not UTF-8; the format holds only UTF-8.
	if err := session.ParseBody(runstate.SessionFile, strings.ToValidUTF8(body, "\uFFFD"), s); err != nil {
		return nil, err
	}
	s.Meta.ResumePoint = resumePhase(s, s.Meta.ResumePoint)
	return session.Format(s)
}

// preamble is the paragraph that opens session.md: what ran.
func (h *host) preamble() string {
	p := "Run of " + codeSpan(filepath.ToSlash(h.w.File)) + " (sha256 " + h.w.SHA256 + ")"
	if st := h.w.Status(); st != "" {
		p += ", a bundle with promotion status " + st
	}
	return p + "."
}

// footer is the paragraph that closes session.md: the run's counts.
func (h *host) footer() string {
	r := h.res
	return fmt.Sprintf("Steps: %d (%d tool calls, %d model calls, %d approvals); receipts: %d; refusals: %d; status: %s.",
		r.Steps, r.ToolCalls, r.ModelCalls, r.Approvals, len(r.Receipts), len(r.Refusals), r.Status)
}

// plainSession is session.md for a run whose log the session format
// cannot hold (why): the run's frontmatter and a paragraph saying so.
func (h *host) plainSession(why error) ([]byte, error) {
	s := h.sessionMeta()
	s.Meta.ResumePoint = session.NoResumePoint
	reason := strings.Join(strings.Fields(strings.ToValidUTF8(why.Error(), "\uFFFD")), " ")
	md := fmt.Sprintf("# %s\n\nThe log of this run could not be written in the session format (%s); trace.json in this directory holds every step.\n",
		h.w.Name, codeSpan(reason))
	if err := session.ParseBody(runstate.SessionFile, md, s); err != nil {
		return nil, err
	}
	return session.Format(s)
}

// sessionMeta is the session.md frontmatter of the run: its record, and
// in ResumePoint the step reference a resume continues at ("step-3"),
// which session turns into the phase id.
func (h *host) sessionMeta() *session.Session {
	r := h.res
	model := h.model
	if model == "" {
		model = "none"
	}
	resume := session.NoResumePoint
	if r.Status != runstate.StatusCompleted {
		resume = "step-" + strconv.Itoa(h.step)
	}
	if r.Pending != nil {
		resume = "step-" + strconv.Itoa(r.Pending.Step)
	}
	s := &session.Session{Meta: session.Meta{
		SessionID: r.RunID, Started: r.Started.UTC().Format(time.RFC3339), Ended: r.Ended.UTC().Format(time.RFC3339),
		Status: string(r.Status), Model: model, TokensUsed: r.TokensUsed, ResumePoint: resume,
		Extra: []session.Field{{Key: "workflow", Value: session.StringValue(h.w.Name)}},
	}}
	if r.DryRun {
		s.Meta.Extra = append(s.Meta.Extra, session.Field{Key: "dry_run", Value: "true"})
	}
	if r.AllowUnapproved {
		s.Meta.Extra = append(s.Meta.Extra, session.Field{Key: "allow_unapproved", Value: "true"})
	}
	return s
}

// resumePhase is the phase id resume_point names for the run's step
// reference want ("step-3"): want itself when it finds one phase, else the
// last phase for that step (a run resumed at a step logs it again, and a
// fallback logs its own phase for it), else the last phase, where the run
// stopped. A resume_point that names no phase would make the log
// unreadable.
func resumePhase(s *session.Session, want string) string {
	if want == session.NoResumePoint || s.FindPhase(want) >= 0 {
		return want
	}
	ids := s.PhaseIDs()
	for i := len(ids) - 1; i >= 0; i-- {
		if strings.HasPrefix(ids[i], want+"-") {
			return ids[i]
		}
	}
	if len(ids) == 0 {
		return session.NoResumePoint
	}
	return ids[len(ids)-1]
}

// The methods below add to a phase of the log: each appends the lines
// session.md holds and the session block they read as. Consecutive
// paragraphs are one block (session.Parse merges prose), so a paragraph
// after prose joins it.

// paragraph adds text, markdown, as its own paragraph.
func (p *phase) paragraph(text string) {
	p.lines = append(p.lines, "", text)
	p.blocks = appendProse(p.blocks, text)
}

func appendProse(blocks []session.Block, text string) []session.Block {
	if n := len(blocks); n > 0 {
		if prev, ok := blocks[n-1].(session.Prose); ok {
			blocks[n-1] = session.Prose{Text: prev.Text + "\n\n" + text}
			return blocks
		}
	}
	return append(blocks, session.Prose{Text: text})
}

// toolCall adds a "**Tool calls:**" list of one call.
func (p *phase) toolCall(c session.ToolCall) {
	code := c.Tool
	if c.Args != "" {
		code += " " + c.Args
	}
	p.lines = append(p.lines, "", session.ToolCallsMarker, "- "+mdtext.CodeSpan(code)+" → "+c.Result)
	for _, se := range c.SideEffects {
		p.lines = append(p.lines, "- side effect: "+se)
	}
	p.blocks = append(p.blocks, session.ToolCalls{Calls: []session.ToolCall{c}})
}

// callout adds a callout of type typ: "> [!typ] title", then each line
// of body after "> ".
func (p *phase) callout(typ, title string, body ...string) {
	first := "> [!" + typ + "]"
	if title != "" {
		first += " " + title
	}
	p.lines = append(p.lines, "", first)
	for _, l := range body {
		p.lines = append(p.lines, "> "+l)
	}
	p.blocks = append(p.blocks, session.Callout{Type: typ, Title: title, Body: body})
}

// message adds a callout of type typ whose body is lines, a message of
// the workflow: an empty line is written ">".
func (p *phase) message(typ string, lines []string) {
	p.lines = append(p.lines, "", "> [!"+typ+"]")
	for _, l := range lines {
		p.lines = append(p.lines, strings.TrimRight("> "+l, " "))
	}
	p.blocks = append(p.blocks, session.Callout{Type: typ, Body: lines})
}

// retitle turns p's first callout of type from without a title into one
// of type to with title: what a pending step asks, once known.
func (p *phase) retitle(from, to, title string) {
	old := "> [!" + from + "]"
	i := slices.Index(p.lines, old)
	if i < 0 {
		return
	}
	p.lines[i] = "> [!" + to + "] " + title
	for j, b := range p.blocks {
		if c, ok := b.(session.Callout); ok && c.Type == from && c.Fold == "" && c.Title == "" {
			c.Type, c.Title = to, title
			p.blocks[j] = c
			return
		}
	}
	p.loose = true
}

// noteAfterCalls adds line to p as a paragraph right after its tool call
// list, before the receipt, or at its end when it has none: a detail of
// the call (the HTTP request, the MCP server and tool) that the session
// format's tool call items, a call and its side effects, cannot hold.
func (p *phase) noteAfterCalls(line string) {
	at := slices.Index(p.lines, session.ToolCallsMarker)
	if at < 0 {
		p.paragraph(line)
		return
	}
	end := at + 1
	for end < len(p.lines) && p.lines[end] != "" {
		end++
	}
	p.lines = slices.Insert(p.lines, end, "", line)
	calls := slices.IndexFunc(p.blocks, func(b session.Block) bool { _, ok := b.(session.ToolCalls); return ok })
	if calls < 0 {
		p.loose = true
		return
	}
	if next, ok := elem(p.blocks, calls+1).(session.Prose); ok {
		p.blocks[calls+1] = session.Prose{Text: line + "\n\n" + next.Text}
		return
	}
	p.blocks = slices.Insert(p.blocks, calls+1, session.Block(session.Prose{Text: line}))
}

func elem(blocks []session.Block, i int) session.Block {
	if i < len(blocks) {
		return blocks[i]
	}
	return nil
}

// replayRun returns the run's replay_run: its run id and its receipts as
// generic JSON, in the shape the replay oracle compares.
func (h *host) replayRun() map[string]any {
	r := h.res
	receipts := make([]any, len(r.Receipts))
	for i := range r.Receipts {
		receipts[i] = receiptValue(&r.Receipts[i])
	}
	return map[string]any{"run_id": r.RunID, "effect_receipts": receipts}
}

// receiptValue is rc as generic JSON, as replay_run holds it.
func receiptValue(rc *Receipt) map[string]any {
	effects := make([]any, len(rc.SideEffects))
	for j, se := range rc.SideEffects {
		m := map[string]any{"kind": se.Kind, "target": se.Target}
		if se.Capability != "" {
			m["capability"] = se.Capability
		}
		if se.Mutation != "" {
			m["mutation"] = se.Mutation
		}
		effects[j] = m
	}
	m := map[string]any{
		"receipt_id": rc.ID, "step": rc.Step, "kind": rc.Kind, "tool": rc.Tool, "status": rc.Status,
		"arguments_sha256": rc.ArgumentsSHA256, "result_sha256": rc.ResultSHA256,
		"side_effects": effects, "duration_ms": rc.DurationMS,
	}
	if u := rc.Usage; u != nil {
		m["usage"] = map[string]any{"model": u.Model, "input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "cost_usd": u.CostUSD}
	}
	return m
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
	h.phases[len(h.phases)-1].noteAfterCalls("Request: " + codeSpan(line))
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
	h.phases[len(h.phases)-1].noteAfterCalls(line)
}
