package session

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNoPhase is returned by Resume when the phase to resume at names no
// phase of the session.
var ErrNoPhase = errors.New("no such phase")

// ResumeOptions are the options of Resume. The zero value resumes at the
// session's resume_point and loads no nested session.
type ResumeOptions struct {
	// Phase is a phase reference (see Session.FindPhase) to resume at
	// instead of Meta.ResumePoint.
	Phase string
	// Load returns the nested session a [!subagent] callout links or
	// embeds, or nil, nil when it is not available. An error is recorded
	// in the pack, not returned.
	Load func(id string) (*Session, error)
}

// Pack is the context an agent needs to resume a session: what the session
// is for and what happened up to the phase it resumes at. Its JSON form is
// the output of "crystallize session resume --json".
type Pack struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
	// Workflow is the frontmatter's workflow key, set when the log is a
	// crystallize run record.
	Workflow string `json:"workflow,omitempty"`
	// Objective is the title, or the session id when there is none;
	// Background the preamble's prose.
	Objective  string `json:"objective"`
	Background string `json:"background,omitempty"`
	Tokens     int64  `json:"tokens_used"`
	// ResumeAt is the phase to resume at, nil when every phase is done
	// (resume point empty or "none"); Later counts the phases after it,
	// which the pack leaves out.
	ResumeAt *PhaseRef `json:"resume_at"`
	Later    int       `json:"later_phases"`
	// Completed are the phases before ResumeAt; Current is ResumeAt's.
	Completed []PhaseSummary `json:"completed_phases"`
	Current   *PhaseSummary  `json:"current_phase"`
	Decisions []Note         `json:"decisions"`
	Errors    []ErrorNote    `json:"errors"`
	User      []Note         `json:"user_interventions"`
	Subagents []SubagentNote `json:"subagents"`
	Inbox     []Note         `json:"inbox"`
	OpenTasks []Task         `json:"open_tasks"`
}

// PhaseRef names a phase.
type PhaseRef struct {
	Index int    `json:"index"` // 1-based
	ID    string `json:"id"`
	Name  string `json:"name"`
}

// PhaseSummary is a phase as the pack shows it: its name, who ran it and
// its tool calls.
type PhaseSummary struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Agent     string     `json:"agent,omitempty"`
	Channel   string     `json:"channel,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

// Note is a callout's text and the phase it is in ("" for the preamble).
type Note struct {
	Phase string `json:"phase"`
	Type  string `json:"type"`
	Text  string `json:"text"`
}

// ErrorNote is an [!error] callout and how it was handled: the next thing
// the log records after it (a tool call, a decision, a user intervention
// or a task_complete), or "" when nothing follows it before the resume
// point.
type ErrorNote struct {
	Phase   string `json:"phase"`
	Text    string `json:"text"`
	Handled string `json:"handled_by"`
}

// SubagentNote is a [!subagent] callout, with what the nested session says
// about itself when Load found it.
type SubagentNote struct {
	Phase   string `json:"phase"`
	Agent   string `json:"agent"`
	Model   string `json:"model,omitempty"`
	Mode    string `json:"mode"`
	Session string `json:"session,omitempty"`
	Tokens  int64  `json:"tokens,omitempty"`
	Summary string `json:"summary"`
	// Status and Objective come from the nested session; LoadError
	// says why it could not be read.
	Status    string `json:"status,omitempty"`
	Objective string `json:"objective,omitempty"`
	LoadError string `json:"load_error,omitempty"`
}

// Resume rebuilds the context up to the phase to resume at (opts.Phase,
// else Meta.ResumePoint): the phases before it are completed; the notes
// (decisions, errors, user interventions, subagents and the inbox
// callouts decision_needed, approval_required and task_complete) are
// gathered from the preamble, the completed phases and the phase resumed
// at, which may have been partly done. With no resume point, every phase
// is completed. Open tasks are the frontmatter's tasks not completed or
// cancelled.
func Resume(s *Session, opts ResumeOptions) (*Pack, error) {
	ref := opts.Phase
	if ref == "" {
		ref = s.Meta.ResumePoint
	}
	ids := s.PhaseIDs()
	at := len(s.Phases)
	if ref != "" && (ref != NoResumePoint || opts.Phase != "") {
		at = s.FindPhase(ref)
		if at < 0 {
			return nil, fmt.Errorf("%w: %s (phases: %s)", ErrNoPhase, ref, strings.Join(ids, ", "))
		}
	}
	p := &Pack{
		SessionID: s.Meta.SessionID,
		Status:    s.Meta.Status,
		Objective: s.Title,
		Tokens:    s.Meta.TokensUsed,
		Completed: []PhaseSummary{}, Decisions: []Note{}, Errors: []ErrorNote{}, User: []Note{},
		Subagents: []SubagentNote{}, Inbox: []Note{}, OpenTasks: []Task{},
	}
	for _, f := range s.Meta.Extra {
		if f.Key == "workflow" {
			p.Workflow = f.Value
		}
	}
	if p.Objective == "" {
		p.Objective = s.Meta.SessionID
	}
	var bg []string
	for _, b := range s.Blocks {
		if pr, ok := b.(Prose); ok {
			bg = append(bg, pr.Text)
		}
	}
	p.Background = strings.Join(bg, "\n\n")
	tokens := map[string]int64{}
	for _, sa := range s.Meta.Subagents {
		tokens[sa.Session] = sa.Tokens
	}

	// open holds the errors still waiting for what handled them.
	var open []int
	handle := func(how string) {
		for _, i := range open {
			p.Errors[i].Handled = how
		}
		open = open[:0]
	}
	visit := func(phase string, blocks []Block) {
		for _, b := range blocks {
			switch b := b.(type) {
			case ToolCalls:
				if len(b.Calls) > 0 {
					c := b.Calls[0]
					handle("tool call " + renderCode(strings.TrimSpace(c.Tool+" "+c.Args)) + " → " + c.Result)
				}
			case Callout:
				n := Note{Phase: phase, Type: strings.ToLower(b.Type), Text: b.Text()}
				switch {
				case b.Is(CalloutDecision):
					handle("decision: " + n.Text)
					p.Decisions = append(p.Decisions, n)
				case b.Is(CalloutUser):
					handle("user: " + n.Text)
					p.User = append(p.User, n)
				case b.Is(CalloutError):
					p.Errors = append(p.Errors, ErrorNote{Phase: phase, Text: n.Text})
					open = append(open, len(p.Errors)-1)
				case b.Is(CalloutTaskComplete):
					handle("task complete: " + n.Text)
					p.Inbox = append(p.Inbox, n)
				case b.Is(CalloutDecisionNeeded), b.Is(CalloutApprovalRequired):
					p.Inbox = append(p.Inbox, n)
				case b.Is(CalloutSubagent):
					d, _ := b.Delegation()
					sn := SubagentNote{Phase: phase, Agent: d.Agent, Model: d.Model, Mode: d.Mode, Session: d.Session, Summary: d.Summary, Tokens: tokens[d.Session]}
					if sn.Summary == "" {
						sn.Summary = strings.TrimSpace(strings.Join(d.Content, "\n"))
					}
					if d.Session != "" && opts.Load != nil {
						nested, err := opts.Load(d.Session)
						switch {
						case err != nil:
							sn.LoadError = err.Error()
						case nested != nil:
							sn.Status = nested.Meta.Status
							sn.Objective = nested.Title
						}
					}
					p.Subagents = append(p.Subagents, sn)
				}
			}
		}
	}
	visit("", s.Blocks)
	for i := 0; i < len(s.Phases) && i <= at; i++ {
		ph := s.Phases[i]
		sum := PhaseSummary{ID: ids[i], Name: ph.Name, Agent: ph.Agent, Channel: ph.Channel, ToolCalls: []ToolCall{}}
		for _, b := range ph.Blocks {
			if tc, ok := b.(ToolCalls); ok {
				sum.ToolCalls = append(sum.ToolCalls, tc.Calls...)
			}
		}
		visit(ids[i], ph.Blocks)
		if i < at {
			p.Completed = append(p.Completed, sum)
			continue
		}
		p.ResumeAt = &PhaseRef{Index: i + 1, ID: ids[i], Name: ph.Name}
		p.Current = &sum
	}
	if at < len(s.Phases) {
		p.Later = len(s.Phases) - at - 1
	}
	for _, t := range s.Meta.Tasks {
		if t.Open() {
			p.OpenTasks = append(p.OpenTasks, t)
		}
	}
	return p, nil
}

// WriteMarkdown writes the pack as markdown for an agent's context: one
// section per kind of note, "none" for an empty one, in a fixed order.
func (p *Pack) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Resume %s\n\n", p.SessionID)
	fmt.Fprintf(&b, "Objective: %s\n", p.Objective)
	fmt.Fprintf(&b, "Status: %s; tokens used: %d\n", p.Status, p.Tokens)
	if p.Workflow != "" {
		fmt.Fprintf(&b, "Workflow run of: %s\n", p.Workflow)
	}
	if p.ResumeAt != nil {
		fmt.Fprintf(&b, "Resume at: phase %d, `%s` (%s)", p.ResumeAt.Index, p.ResumeAt.ID, p.ResumeAt.Name)
		if p.Later > 0 {
			fmt.Fprintf(&b, "; %d later phase(s) left out", p.Later)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("Resume at: after the last phase\n")
	}
	if p.Background != "" {
		fmt.Fprintf(&b, "\n## Background\n\n%s\n", p.Background)
	}
	phase := func(s PhaseSummary) {
		fmt.Fprintf(&b, "- `%s` %s", s.ID, s.Name)
		if s.Agent != "" {
			fmt.Fprintf(&b, " @%s", s.Agent)
		}
		if s.Channel != "" {
			fmt.Fprintf(&b, " #%s", s.Channel)
		}
		b.WriteString("\n")
		for _, c := range s.ToolCalls {
			fmt.Fprintf(&b, "  - %s → %s\n", renderCode(strings.TrimSpace(c.Tool+" "+c.Args)), c.Result)
		}
	}
	section := func(title string, n int, each func(i int)) {
		fmt.Fprintf(&b, "\n## %s\n\n", title)
		if n == 0 {
			b.WriteString("none\n")
			return
		}
		for i := range n {
			each(i)
		}
	}
	where := func(phase string) string {
		if phase == "" {
			return "preamble"
		}
		return phase
	}
	indent := func(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }
	section("Completed phases", len(p.Completed), func(i int) { phase(p.Completed[i]) })
	if p.Current != nil {
		section("Current phase", 1, func(int) { phase(*p.Current) })
	}
	section("Decisions", len(p.Decisions), func(i int) {
		fmt.Fprintf(&b, "- [%s] %s\n", where(p.Decisions[i].Phase), indent(p.Decisions[i].Text))
	})
	section("Errors", len(p.Errors), func(i int) {
		e := p.Errors[i]
		fmt.Fprintf(&b, "- [%s] %s\n", where(e.Phase), indent(e.Text))
		if e.Handled == "" {
			b.WriteString("  handled by: nothing yet\n")
		} else {
			fmt.Fprintf(&b, "  handled by: %s\n", indent(e.Handled))
		}
	})
	section("User interventions", len(p.User), func(i int) {
		fmt.Fprintf(&b, "- [%s] %s\n", where(p.User[i].Phase), indent(p.User[i].Text))
	})
	section("Subagents", len(p.Subagents), func(i int) {
		s := p.Subagents[i]
		fmt.Fprintf(&b, "- [%s] @%s", where(s.Phase), s.Agent)
		if s.Model != "" {
			fmt.Fprintf(&b, " (%s)", s.Model)
		}
		fmt.Fprintf(&b, ", %s", s.Mode)
		if s.Session != "" {
			fmt.Fprintf(&b, " [[%s]]", s.Session)
		}
		if s.Tokens != 0 {
			fmt.Fprintf(&b, ", %d tokens", s.Tokens)
		}
		b.WriteString("\n")
		if s.Summary != "" {
			fmt.Fprintf(&b, "  summary: %s\n", indent(s.Summary))
		}
		if s.Objective != "" || s.Status != "" {
			fmt.Fprintf(&b, "  nested session: %s (%s)\n", s.Objective, s.Status)
		}
		if s.LoadError != "" {
			fmt.Fprintf(&b, "  nested session unreadable: %s\n", indent(s.LoadError))
		}
	})
	section("Inbox", len(p.Inbox), func(i int) {
		fmt.Fprintf(&b, "- [%s] %s: %s\n", where(p.Inbox[i].Phase), p.Inbox[i].Type, indent(p.Inbox[i].Text))
	})
	section("Open tasks", len(p.OpenTasks), func(i int) {
		fmt.Fprintf(&b, "- %s (%s)\n", p.OpenTasks[i].Title, p.OpenTasks[i].Status)
	})
	_, err := io.WriteString(w, b.String())
	return err
}
