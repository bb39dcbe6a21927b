package session

import (
	"strconv"
	"strings"
	"unicode"
)

// Session is one parsed session log. Its zero value is not a valid session:
// Meta.SessionID and Meta.Status are required.
type Session struct {
	Meta Meta
	// Title is the text of the "# " heading that opens the body, or ""
	// when the body does not open with one.
	Title string
	// Blocks are the preamble: what comes between the title and the first
	// phase.
	Blocks []Block
	Phases []Phase
}

// Meta is the frontmatter. Write emits the keys in the order of the fields,
// after "type: session", and leaves out empty optional ones; tokens_used is
// always written.
type Meta struct {
	SessionID    string     // session_id, required
	Started      string     // started, RFC 3339, optional
	Ended        string     // ended, RFC 3339, optional
	Status       string     // status, required: one of Statuses
	Channel      string     // channel
	Participants []string   // participants, such as "orchestrator@1.0"
	Model        string     // model
	TokensUsed   int64      // tokens_used
	Subagents    []Subagent // subagents
	ResumePoint  string     // resume_point: a phase reference, or "none"
	Tasks        []Task     // tasks
	// Extra holds the keys the format does not define, in document
	// order, so that tools can add their own (crystallize run adds
	// workflow, dry_run and allow_unapproved).
	Extra []Field
}

// Statuses are the values of Meta.Status. The format defines the first four;
// the others are the run statuses crystallize run records in session.md:
// "cancelled" (stopped by SIGINT), "pending_approval" (waiting at an
// approval boundary) and "rejected" (an approval was refused).
var Statuses = []string{"active", "completed", "failed", "paused", "cancelled", "pending_approval", "rejected"}

// NoResumePoint is the resume_point crystallize run writes for a run with
// nothing left to do; like an empty one, it resumes after the last phase.
const NoResumePoint = "none"

// Subagent is one entry of the frontmatter's subagents: a nested session.
type Subagent struct {
	Session string // session, required: the nested session's id
	Agent   string // agent
	Model   string // model
	Tokens  int64  // tokens, written when not zero
}

// Task is one entry of the frontmatter's tasks, the session's task list.
// The format leaves its serialization open; this package keeps it in the
// frontmatter, next to resume_point, so that resuming needs no other file.
type Task struct {
	Title  string `json:"title"`  // title, required
	Status string `json:"status"` // status, required: one of TaskStatuses
}

// TaskStatuses are the values of Task.Status; a task is open unless it is
// completed or cancelled.
var TaskStatuses = []string{"pending", "in_progress", "completed", "cancelled"}

// Open reports whether t still needs doing.
func (t Task) Open() bool { return t.Status != "completed" && t.Status != "cancelled" }

// Field is a frontmatter key the format does not define. Value is the
// value in YAML as Write emits it: a scalar on one line ("deploy", "true"),
// or a block of lines for a list or mapping, indented by two spaces per
// level.
type Field struct {
	Key   string
	Value string
}

// Phase is one "## " section: a resumable checkpoint. Its id is derived
// from the names of the phases (see Session.PhaseIDs), not stored.
type Phase struct {
	Name    string // heading text without the agent and channel
	Agent   string // from a trailing "@agent" word, without the "@"
	Channel string // from a trailing "#channel" word, without the "#"
	Blocks  []Block
}

// Block is a piece of a phase or of the preamble: Prose, ToolCalls or
// Callout.
type Block interface{ block() }

// Prose is markdown the format gives no meaning to, kept verbatim: one or
// more markdown blocks, without leading or trailing blank lines.
type Prose struct {
	Text string
}

// ToolCalls is a "**Tool calls:**" list.
type ToolCalls struct {
	Calls []ToolCall
}

// ToolCall is one item of a tool call list, "`tool args` → result".
type ToolCall struct {
	Tool string `json:"tool"` // the first word of the code span
	Args string `json:"args"` // the rest of the code span, after one space
	// Result is the markdown after the arrow, such as "12 matches" or
	// "`{"ok":true}` (ok, 3 ms)".
	Result string `json:"result"`
	// SideEffects are the "- side effect: text" items that follow the
	// call, as crystallize run records them.
	SideEffects []string `json:"side_effects,omitempty"`
}

// Callout is a block quote opened by "[!type]". Body holds its lines after
// the first, without the "> " prefix; their meaning depends on the type
// (see Callout.Delegation for subagents).
type Callout struct {
	Type  string // as written; compare with strings.EqualFold
	Fold  string // "+", "-" or "": Obsidian's fold marker after "]"
	Title string // the rest of the first line
	Body  []string
}

func (Prose) block()     {}
func (ToolCalls) block() {}
func (Callout) block()   {}

// The callout types of the format.
const (
	CalloutSubagent         = "subagent"
	CalloutDecision         = "decision"
	CalloutError            = "error"
	CalloutUser             = "user"
	CalloutDecisionNeeded   = "decision_needed"
	CalloutApprovalRequired = "approval_required"
	CalloutTaskComplete     = "task_complete"
)

// Is reports whether c has type typ, ignoring case as Obsidian does.
func (c Callout) Is(typ string) bool { return strings.EqualFold(c.Type, typ) }

// Text is the callout's content as one string: the title and the body
// lines, joined by newlines and trimmed.
func (c Callout) Text() string {
	lines := append([]string{c.Title}, c.Body...)
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// Subagent modes: how a [!subagent] callout holds the delegated work.
const (
	ModeInline = "inline" // the work is written in the callout
	ModeLink   = "link"   // a wikilink [[id]] to the nested session
	ModeEmbed  = "embed"  // a transclusion ![[id]] of the nested session
)

// Delegation is what a [!subagent] callout says.
type Delegation struct {
	Agent   string // from "@agent" in the title, without the "@"
	Model   string // from "(model)" in the title
	Mode    string // ModeInline, ModeLink or ModeEmbed
	Session string // the linked or embedded session id, "" when inline
	Summary string // the text after "Summary:", or ""
	// Content is the body without the mode, link and summary lines: the
	// inline work, or a description of it.
	Content []string
}

// Delegation reads c as a [!subagent] callout. The mode is the one a
// "mode:" line names; without one it is embed when the body holds
// "![[id]]", link when it holds "[[id]]" (optionally after "→ ", as in
// the format's example), else inline. It returns the problems it finds, such
// as a link mode without a link.
func (c Callout) Delegation() (Delegation, []string) {
	var d Delegation
	var problems []string
	for _, w := range strings.Fields(c.Title) {
		switch {
		case strings.HasPrefix(w, "@") && len(w) > 1 && d.Agent == "":
			d.Agent = w[1:]
		case strings.HasPrefix(w, "(") && strings.HasSuffix(w, ")") && len(w) > 2 && d.Model == "":
			d.Model = w[1 : len(w)-1]
		}
	}
	if d.Agent == "" {
		problems = append(problems, "subagent callout without @agent")
	}
	var link, embed string
	for _, l := range c.Body {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "mode:") && d.Mode == "":
			d.Mode = strings.TrimSpace(strings.TrimPrefix(t, "mode:"))
			continue
		case strings.HasPrefix(t, "Summary:") && d.Summary == "":
			d.Summary = strings.TrimSpace(strings.TrimPrefix(t, "Summary:"))
			continue
		}
		if id, ok := wikilink(t, "![["); ok && embed == "" {
			embed = id
			continue
		}
		if id, ok := wikilink(strings.TrimSpace(strings.TrimPrefix(t, "→")), "[["); ok && link == "" {
			link = id
			continue
		}
		d.Content = append(d.Content, l)
	}
	switch d.Mode {
	case "":
		switch {
		case embed != "":
			d.Mode, d.Session = ModeEmbed, embed
		case link != "":
			d.Mode, d.Session = ModeLink, link
		default:
			d.Mode = ModeInline
		}
	case ModeEmbed:
		d.Session = embed
		if embed == "" {
			problems = append(problems, "subagent embed without ![[id]]")
		}
	case ModeLink:
		d.Session = link
		if link == "" {
			problems = append(problems, "subagent link without [[id]]")
		}
	case ModeInline:
	default:
		problems = append(problems, "subagent mode "+strconv.Quote(d.Mode)+" is not one of inline, link, embed")
	}
	return d, problems
}

// wikilink returns id when s is exactly open+id+"]]", with an optional
// "|alias" after the id.
func wikilink(s, open string) (string, bool) {
	if !strings.HasPrefix(s, open) || !strings.HasSuffix(s, "]]") || len(s) < len(open)+3 {
		return "", false
	}
	id := s[len(open) : len(s)-2]
	if i := strings.IndexByte(id, '|'); i >= 0 {
		id = id[:i]
	}
	id = strings.TrimSpace(id)
	if id == "" || strings.ContainsAny(id, "[]") {
		return "", false
	}
	return id, true
}

// PhaseIDs returns the id of every phase, in order: the slug of its name,
// made unique by the first free suffix "-2", "-3", … (see the package
// documentation).
func (s *Session) PhaseIDs() []string {
	ids := make([]string, len(s.Phases))
	used := make(map[string]bool, len(s.Phases))
	for i, p := range s.Phases {
		base := slug(p.Name)
		id := base
		for n := 2; used[id]; n++ {
			id = base + "-" + strconv.Itoa(n)
		}
		used[id] = true
		ids[i] = id
	}
	return ids
}

// FindPhase resolves a phase reference: an exact id, else "phase-N" for the
// Nth phase, else the one phase whose id starts with ref+"-". It returns
// the phase's index, or -1.
func (s *Session) FindPhase(ref string) int {
	ids := s.PhaseIDs()
	for i, id := range ids {
		if id == ref {
			return i
		}
	}
	if n, ok := strings.CutPrefix(ref, "phase-"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 1 && i <= len(ids) && strconv.Itoa(i) == n {
			return i - 1
		}
	}
	found := -1
	for i, id := range ids {
		if strings.HasPrefix(id, ref+"-") {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// slug lowercases name and replaces each run of characters other than
// letters and digits by "-".
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "phase"
	}
	return b.String()
}
