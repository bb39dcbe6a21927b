// Package runrecord writes the record of a workflow run: trace.json, the
// run's trace in canonical JSON that the replay oracle and mining read as
// they read recorded traces, and session.md, its log in the session
// format that crystallize session resume reads back. The runner fills a
// Run, a plain value; this package turns it into the files' bytes. A
// record is not state a resume trusts (that is the journal, which the
// runner writes and syncs), so its files are replaced atomically but
// never synced.
package runrecord

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/session"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Run is what a run's record is written from.
type Run struct {
	ID string
	// Workflow is the workflow's name, File its file and SHA256 the
	// digest of its source; BundleStatus is the promotion status of the
	// bundle it came from, "" for a bare file.
	Workflow, File, SHA256, BundleStatus string
	Status                               string
	// Model is the model the run was configured with, "" for none.
	Model           string
	DryRun          bool
	AllowUnapproved bool
	Started, Ended  time.Time
	Duration        time.Duration
	// Steps counts executed host calls: ToolCalls + ModelCalls +
	// Approvals.
	Steps, ToolCalls, ModelCalls, Approvals int
	TokensUsed                              int64
	// Refused counts the calls refused before they ran.
	Refused  int
	Receipts []Receipt
	// Actions are the trace's actions, one per executed call and check.
	Actions []trace.Action
	Phases  []Phase
	// ResumePoint is the step reference a resume continues at ("step-3"),
	// session.NoResumePoint for a run that completed.
	ResumePoint string
	// Meta is the trace's metadata member crystallize_run: what the run
	// was and did, as the runner states it.
	Meta map[string]any
}

// Receipt is the record of one executed tool or model call. Digests are
// of canonical JSON (sorted keys) after secrets are replaced.
type Receipt struct {
	ID              string             `json:"receipt_id"`
	Step            int                `json:"step"`
	Kind            string             `json:"kind"`
	Tool            string             `json:"tool"`
	Status          string             `json:"status"`
	ArgumentsSHA256 string             `json:"arguments_sha256"`
	ResultSHA256    string             `json:"result_sha256"`
	SideEffects     []trace.SideEffect `json:"side_effects"`
	DurationMS      int64              `json:"duration_ms"`
	// Usage is set on the receipts of model calls.
	Usage *ModelUsage `json:"usage,omitempty"`
}

// ModelUsage is what one model call used: the model that answered, its
// tokens, and their cost at the configured prices.
type ModelUsage struct {
	Model        string  `json:"model"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// WriteFile replaces the record file p with data atomically but
// without syncing it (atomicfile.NoSync): a reader never sees half a
// trace.json, and a link planted at p is replaced, not written through.
// A record is not state a resume trusts (that is the journal, which is
// synced), so a completed run pays for no fsync.
func WriteFile(p string, data []byte) error {
	return atomicfile.WriteSync(p, data, 0o644, atomicfile.NoSync)
}

// Trace builds the run's trace: its actions, and a replay_run whose
// effect_receipts are the receipts, so that the replay oracle and mining
// read runs as they read recorded traces. Receipt ids, durations and the
// run id change on every run and are allowlisted. The receipts
// themselves are left out of the value (effect_receipts is empty):
// EncodeTrace writes them from r.Receipts, without building a map of
// each.
func (r *Run) Trace() *trace.Trace {
	usage := false
	for _, rc := range r.Receipts {
		usage = usage || rc.Usage != nil
	}
	var total trace.Usage
	for _, a := range r.Actions {
		if a.Cost != nil {
			total.ModelCalls += a.Cost.ModelCalls
			total.InputTokens += a.Cost.InputTokens
			total.OutputTokens += a.Cost.OutputTokens
			total.TotalCostUSD += a.Cost.TotalCostUSD
		}
	}
	total.WallMS = r.Duration.Milliseconds()
	actions := r.Actions
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
		ID:              r.ID,
		WorkflowID:      r.Workflow,
		StartedAt:       r.Started.UTC().Format(time.RFC3339Nano),
		FinishedAt:      r.Ended.UTC().Format(time.RFC3339Nano),
		Actions:         actions,
		ReplayRun:       map[string]any{"run_id": r.ID, "effect_receipts": []any{}},
		ReplayAllowlist: allow,
		Usage:           &total,
		Metadata:        map[string]any{"crystallize_run": r.Meta},
	}
}

// ReplayRun returns a run's replay_run: its run id and its receipts as
// generic JSON, in the shape the replay oracle compares.
func ReplayRun(runID string, receipts []Receipt) map[string]any {
	values := make([]any, len(receipts))
	for i := range receipts {
		values[i] = ReceiptValue(&receipts[i])
	}
	return map[string]any{"run_id": runID, "effect_receipts": values}
}

// ReceiptValue is rc as generic JSON, as replay_run holds it.
func ReceiptValue(rc *Receipt) map[string]any {
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

// Session renders session.md: a session.Session whose frontmatter is the
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
func (r *Run) Session() ([]byte, error) {
	body := r.sessionBody()
	if md, ok := r.fromBlocks(body); ok {
		return md, nil
	}
	return r.fromMarkdown(body)
}

// sessionBody is the markdown body of session.md: the title, the
// preamble, the phases' lines under their headings with a thematic break
// between them, and the footer.
func (r *Run) sessionBody() string {
	var b strings.Builder
	n := len(r.Workflow) + len(r.File) + 256
	for _, p := range r.Phases {
		n += len(p.Title) + 10
		for _, l := range p.Lines {
			n += len(l) + 1
		}
	}
	b.Grow(n)
	b.WriteString("# " + r.Workflow + "\n\n" + r.preamble() + "\n")
	if r.AllowUnapproved {
		b.WriteString("\n> [!decision]\n> " + allowUnapprovedNote + "\n")
	}
	for i, p := range r.Phases {
		if i > 0 {
			b.WriteString("\n---\n")
		}
		b.WriteString("\n## " + p.Title + "\n")
		for _, l := range p.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	b.WriteString("\n---\n\n" + r.footer() + "\n")
	return b.String()
}

const allowUnapprovedNote = "Run with --allow-unapproved although the bundle is not ready."

// FromBlocks is session.md built from the phases' blocks, with false
// when a phase holds lines without their blocks, when the blocks are not
// the phases' lines, or when session.Format refuses them.
func (r *Run) FromBlocks() ([]byte, bool) { return r.fromBlocks(r.sessionBody()) }

func (r *Run) fromBlocks(body string) ([]byte, bool) {
	s := r.sessionMeta()
	s.Title = r.Workflow
	s.Blocks = []session.Block{session.Prose{Text: r.preamble()}}
	if r.AllowUnapproved {
		s.Blocks = append(s.Blocks, session.Callout{Type: session.CalloutDecision, Body: []string{allowUnapprovedNote}})
	}
	s.Phases = make([]session.Phase, len(r.Phases))
	for i, p := range r.Phases {
		if p.Loose {
			return nil, false
		}
		// Cloned: the break joins the phase's last paragraph.
		s.Phases[i] = session.Phase{Name: p.Title, Blocks: appendProse(slices.Clone(p.Blocks), "---")}
	}
	last := &s.Blocks
	if n := len(s.Phases); n > 0 {
		last = &s.Phases[n-1].Blocks
	} else {
		*last = appendProse(*last, "---")
	}
	*last = appendProse(*last, r.footer())
	s.Meta.ResumePoint = resumePhase(s, s.Meta.ResumePoint)
	md, ok, err := session.FormatAs(s, body)
	return md, ok && err == nil
}

// FromMarkdown is session.md with the session read from the markdown of
// the phases' lines.
func (r *Run) FromMarkdown() ([]byte, error) { return r.fromMarkdown(r.sessionBody()) }

func (r *Run) fromMarkdown(body string) ([]byte, error) {
	s := r.sessionMeta()
	// Recorded text (a tool's output, a notification) may hold bytes
	// that are not UTF-8; the format holds only UTF-8.
	if err := session.ParseBody(runstate.SessionFile, strings.ToValidUTF8(body, "\uFFFD"), s); err != nil {
		return nil, err
	}
	s.Meta.ResumePoint = resumePhase(s, s.Meta.ResumePoint)
	return session.Format(s)
}

// preamble is the paragraph that opens session.md: what ran.
func (r *Run) preamble() string {
	p := "Run of " + codeSpan(filepath.ToSlash(r.File)) + " (sha256 " + r.SHA256 + ")"
	if r.BundleStatus != "" {
		p += ", a bundle with promotion status " + r.BundleStatus
	}
	return p + "."
}

// footer is the paragraph that closes session.md: the run's counts.
func (r *Run) footer() string {
	return fmt.Sprintf("Steps: %d (%d tool calls, %d model calls, %d approvals); receipts: %d; refusals: %d; status: %s.",
		r.Steps, r.ToolCalls, r.ModelCalls, r.Approvals, len(r.Receipts), r.Refused, r.Status)
}

// PlainSession is session.md for a run whose log the session format
// cannot hold (why): the run's frontmatter and a paragraph saying so.
func (r *Run) PlainSession(why error) ([]byte, error) {
	s := r.sessionMeta()
	s.Meta.ResumePoint = session.NoResumePoint
	reason := strings.Join(strings.Fields(strings.ToValidUTF8(why.Error(), "\uFFFD")), " ")
	md := fmt.Sprintf("# %s\n\nThe log of this run could not be written in the session format (%s); trace.json in this directory holds every step.\n",
		r.Workflow, codeSpan(reason))
	if err := session.ParseBody(runstate.SessionFile, md, s); err != nil {
		return nil, err
	}
	return session.Format(s)
}

// sessionMeta is the session.md frontmatter of the run: its record, and
// in ResumePoint the step reference a resume continues at ("step-3"),
// which session turns into the phase id.
func (r *Run) sessionMeta() *session.Session {
	model := r.Model
	if model == "" {
		model = "none"
	}
	s := &session.Session{Meta: session.Meta{
		SessionID: r.ID, Started: r.Started.UTC().Format(time.RFC3339), Ended: r.Ended.UTC().Format(time.RFC3339),
		Status: r.Status, Model: model, TokensUsed: r.TokensUsed, ResumePoint: r.ResumePoint,
		Extra: []session.Field{{Key: "workflow", Value: session.StringValue(r.Workflow)}},
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

// codeSpan is s on one line as a markdown code span.
func codeSpan(s string) string { return mdtext.CodeSpan(stepvalue.OneLine(s)) }
