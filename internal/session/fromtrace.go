package session

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// An agent's own log (a Claude Code project log, a Codex rollout, a
// Gemini CLI chat) becomes a session log through the trace package
// source reads it into: FromTrace writes a normalized trace as a session,
// so that everything that reads session logs (resume, learn, the index
// and its inbox, split, codify) reads what agents did outside
// crystallize too. Going through the trace rather than the agent's
// records keeps one reader per agent format, and lets the caller redact
// the trace with the redactor every shared trace goes through before it
// is written as markdown.
//
// A trace keeps the tool calls, not the conversation, so the session is
// built from them:
//
//   - the title is the first line of the user's first prompt (the trace's
//     goal), and the preamble holds the whole prompt in a fenced block, so
//     that no markdown in it (a "## " line, a callout) changes the
//     structure of the log;
//   - phases are cycles of work: a phase opens where the agent starts to
//     look again (an observation after a change or a command), and where
//     the calls switch between the session and a subagent working inline
//     (Claude Code's sidechain); each is named after what it did, such as
//     "Explore, edit and run";
//   - each action is one tool call: a shell command as the command it ran
//     (a compound command line is one action per command, as the trace
//     splits it, so that codify reads each as mine does), any other tool
//     as its name and short arguments;
//   - a call that failed (an error, a non-zero exit code) is followed by
//     an [!error] callout, which learn turns into a case and resume pairs
//     with what handled it;
//   - subagents that have a log of their own are linked from the
//     preamble by [!subagent] callouts (link mode) and listed in the
//     frontmatter.
//
// The session's status is paused: a log ends where the agent stopped,
// and whether the work was done is not something it records; paused is
// the status the format gives a session that can be continued.

// Nested is a subagent session FromTrace links to: Session is the id the
// link names (the nested log's file name without ".md"), the other fields
// describe it.
type Nested struct {
	Session string
	Agent   string
	Model   string
	Tokens  int64
	// Goal is the nested session's first prompt, for the summary.
	Goal string
}

// Limits of the text FromTrace copies into one line of the log. A session
// log is read by people and by an agent resuming it; the trace keeps
// every byte.
const (
	maxTitle    = 100 // runes of the title
	maxCallLine = 200 // runes of a tool call's code span
	maxArg      = 60  // runes of one argument of a non-shell tool
	maxResult   = 80  // runes of a result's first line
)

// agentNames are the readable names of the agents source reads.
var agentNames = map[string]string{
	"claude-code": "Claude Code",
	"codex":       "Codex CLI",
	"gemini-cli":  "Gemini CLI",
	"otel":        "an OpenTelemetry export",
}

// FromTrace returns the session log of t, a normalized trace of an agent
// session (see the comment above), linking the subagent sessions nested.
// The result passes Validate; an error says why t cannot be written (it
// should not happen for a trace that source returned).
func FromTrace(t *trace.Trace, nested []Nested) (*Session, error) {
	meta := func(k string) string {
		v, _ := t.Metadata[k].(string)
		return strings.TrimSpace(v)
	}
	agent := meta("agent")
	if agent == "" {
		agent = "agent"
	}
	s := &Session{Meta: Meta{
		SessionID: singleLine(t.ID, 0),
		Status:    "paused",
		Started:   rfc3339(t.StartedAt),
		Ended:     rfc3339(t.FinishedAt),
		Model:     singleLine(meta("model"), 0),
	}}
	if s.Meta.SessionID == "" {
		return nil, fmt.Errorf("trace without an id")
	}
	participant := agent
	if v := meta("agent_version"); v != "" {
		participant += "@" + v
	}
	s.Meta.Participants = []string{singleLine(participant, 0)}
	if u := t.Usage; u != nil {
		s.Meta.TokensUsed = u.InputTokens + u.OutputTokens
	}
	extra := [][2]string{{"agent", agent}, {"source", t.Source}, {"git_branch", meta("git_branch")}}
	for _, kv := range extra {
		if v := singleLine(kv[1], 0); v != "" {
			s.Meta.Extra = append(s.Meta.Extra, Field{Key: kv[0], Value: StringValue(v)})
		}
	}

	goal := meta("goal")
	name := agentNames[agent]
	if name == "" {
		name = agent
	}
	s.Title = fitHeading(firstLine(goal), maxTitle)
	if s.Title == "" {
		s.Title = fitHeading(name+" session "+s.Meta.SessionID, maxTitle)
	}
	intro := "Imported from a session log of " + name
	if t.Source != "" {
		intro += ", " + renderCode(singleLine(t.Source, 0))
	}
	intro += ": the tool calls the agent made, grouped into phases of work. The first prompt was:"
	s.Blocks = append(s.Blocks, Prose{Text: intro + "\n\n" + fenced(goal)})
	for _, n := range nested {
		s.Meta.Subagents = append(s.Meta.Subagents, Subagent{Session: n.Session, Agent: oneWord(n.Agent), Model: singleLine(n.Model, 0), Tokens: n.Tokens})
		title := "@" + oneWord(n.Agent)
		if m := oneWord(n.Model); m != "" && m != "subagent" {
			title += " (" + m + ")"
		}
		body := []string{"mode: link", "[[" + n.Session + "]]"}
		if g := firstLine(n.Goal); g != "" {
			body = append(body, "Summary: "+clip(g, maxTitle))
		}
		s.Blocks = append(s.Blocks, Callout{Type: CalloutSubagent, Title: title, Body: body})
	}

	var cur *Phase
	var kinds []string
	sidechain := false
	flush := func() {
		if cur != nil {
			cur.Name = phaseName(kinds)
			s.Phases = append(s.Phases, *cur)
		}
		cur, kinds = nil, nil
	}
	asks := laterPrompts(t)
	for i := range t.Actions {
		a := &t.Actions[i]
		side, _ := a.Metadata["sidechain"].(bool)
		kind := activity(a)
		// What the person typed before this call opens a phase with
		// it: the work that follows answers it.
		var asked []string
		for len(asks) > 0 && !asks[0].at.After(actionTime(a, asks[0].at)) {
			asked = append(asked, asks[0].text)
			asks = asks[1:]
		}
		if cur != nil && (len(asked) > 0 || side != sidechain || kind == "explore" && kinds[len(kinds)-1] != "explore") {
			flush()
		}
		if len(asked) > 0 {
			cur = &Phase{Agent: oneWord(agent)}
			if side {
				cur.Agent = "subagent"
			}
			sidechain = side
			for _, text := range asked {
				if body := answerLines(text); body != nil {
					cur.Blocks = append(cur.Blocks, Callout{Type: CalloutUser, Body: body})
				}
			}
		}
		if cur == nil {
			cur = &Phase{Agent: oneWord(agent)}
			if side {
				cur.Agent = "subagent"
			}
			sidechain = side
		}
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
		call := toolCall(a)
		appendCall(cur, call)
		if msg := failure(a); msg != "" {
			cur.Blocks = append(cur.Blocks, Callout{Type: CalloutError, Body: []string{
				renderCode(strings.TrimSpace(call.Tool+" "+call.Args)) + " failed: " + msg}})
		}
	}
	if cur != nil {
		// Prompts typed after the last call end the log.
		for _, ask := range asks {
			if body := answerLines(ask.text); body != nil {
				cur.Blocks = append(cur.Blocks, Callout{Type: CalloutUser, Body: body})
			}
		}
	}
	flush()
	if len(s.Phases) == 0 {
		// source skips such sessions; a trace read otherwise may have none.
		pr := s.Blocks[0].(Prose)
		pr.Text += "\n\nThe session made no tool call."
		s.Blocks[0] = pr
	}
	if err := Validate(s); err != nil {
		return nil, fmt.Errorf("session %s: %w", s.Meta.SessionID, err)
	}
	return s, nil
}

// ask is a prompt the person typed during the session, with its time.
type ask struct {
	at   time.Time
	text string
}

// laterPrompts are the prompts of t's prompt log after the first (the
// goal, which the preamble holds), in time order; a prompt whose time
// does not parse is left out, as it cannot be placed among the calls.
func laterPrompts(t *trace.Trace) []ask {
	list, _ := t.Metadata[trace.MetaPrompts].([]any)
	var out []ask
	for i, v := range list {
		p, _ := v.(map[string]any)
		ts, _ := p["timestamp"].(string)
		text, _ := p["text"].(string)
		at, err := time.Parse(time.RFC3339Nano, ts)
		if i == 0 || err != nil || strings.TrimSpace(text) == "" {
			continue
		}
		out = append(out, ask{at, text})
	}
	slices.SortStableFunc(out, func(a, b ask) int { return a.at.Compare(b.at) })
	return out
}

// actionTime is when a was called, or dflt when its time is unknown (a
// prompt is then placed before it).
func actionTime(a *trace.Action, dflt time.Time) time.Time {
	if at, err := time.Parse(time.RFC3339Nano, a.Timestamp); err == nil {
		return at
	}
	return dflt
}

// appendCall adds c to the phase's last tool call list, or opens one.
func appendCall(p *Phase, c ToolCall) {
	if n := len(p.Blocks); n > 0 {
		if tc, ok := p.Blocks[n-1].(ToolCalls); ok {
			tc.Calls = append(tc.Calls, c)
			p.Blocks[n-1] = tc
			return
		}
	}
	p.Blocks = append(p.Blocks, ToolCalls{Calls: []ToolCall{c}})
}

// activity is what an action does, for the phase names.
func activity(a *trace.Action) string {
	switch a.Kind {
	case trace.KindObservation:
		return "explore"
	case trace.KindFileMutation:
		return "edit"
	case trace.KindHumanApproval:
		return "ask"
	}
	return "run"
}

// phaseName names a phase after its activities in order: "Explore",
// "Edit and run", "Explore, edit and run".
func phaseName(kinds []string) string {
	var b strings.Builder
	for i, k := range kinds {
		switch {
		case i == 0:
			b.WriteString(strings.ToUpper(k[:1]) + k[1:])
			continue
		case i == len(kinds)-1:
			b.WriteString(" and ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(k)
	}
	return b.String()
}

// toolCall renders a as a tool call: a shell command as the command it
// ran, any other tool as its action name and its short scalar parameters
// as --key=value.
func toolCall(a *trace.Action) ToolCall {
	var c ToolCall
	if cmd, ok := a.Metadata["command"].(string); ok && strings.TrimSpace(cmd) != "" {
		line := singleLine(cmd, maxCallLine)
		c.Tool, c.Args, _ = strings.Cut(line, " ")
	} else {
		c.Tool = oneWord(a.Name)
		var args []string
		for _, k := range sortedKeys(a.Parameters) {
			if v, ok := scalar(a.Parameters[k]); ok {
				args = append(args, "--"+k+"="+shellQuote(clip(firstLine(v), maxArg)))
			}
		}
		c.Args = strings.Join(args, " ")
	}
	if c.Tool == "" {
		c.Tool = "tool"
	}
	c.Result = result(a)
	return c
}

// result summarizes what a call returned: its exit code, and the first
// line of its output with the number of lines.
func result(a *trace.Action) string {
	var parts []string
	if code, ok := integer(a.Metadata["exit_code"]); ok {
		parts = append(parts, "exit "+strconv.FormatInt(code, 10))
	}
	out := a.Output
	if out == nil {
		out = a.ObservedOutput
	}
	switch out := out.(type) {
	case nil:
		if len(parts) == 0 {
			parts = append(parts, "no result")
		}
	case string:
		text := strings.TrimSpace(out)
		if text == "" {
			parts = append(parts, "no output")
			break
		}
		lines := strings.Count(text, "\n") + 1
		part := renderCode(clip(firstLine(text), maxResult))
		if lines > 1 {
			part += " (" + strconv.Itoa(lines) + " lines)"
		}
		parts = append(parts, part)
	default:
		parts = append(parts, "a JSON result")
	}
	return strings.Join(parts, ", ")
}

// failure is why a failed: its error, or its non-zero exit code; "" when
// it did not fail.
func failure(a *trace.Action) string {
	if e, ok := a.Metadata["error"].(string); ok && strings.TrimSpace(e) != "" {
		return renderCode(clip(firstLine(e), maxResult))
	}
	if e, ok := a.Metadata["error"].(bool); ok && e {
		if out, ok := a.Output.(string); ok && strings.TrimSpace(out) != "" {
			return renderCode(clip(firstLine(out), maxResult))
		}
		return "the tool reported an error"
	}
	if code, ok := integer(a.Metadata["exit_code"]); ok && code != 0 {
		return "exit code " + strconv.FormatInt(code, 10)
	}
	return ""
}

// integer returns v as an integer when it is a whole number, in any of
// the forms a trace holds numbers in (json.Number when decoded, Go
// numbers when built).
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	case float64:
		return int64(v), v == float64(int64(v))
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

// scalar returns v as text when it is a string, number or boolean.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// shellQuote quotes s as a POSIX shell word when it needs quoting, so
// that codify splits the arguments as they were given.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,~", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fenced renders text as a fenced code block whose fence no line of text
// can close, or "(none)" for no text.
func fenced(text string) string {
	text = strings.TrimSpace(strings.ReplaceAll(strings.ToValidUTF8(text, "\uFFFD"), "\r", ""))
	if text == "" {
		return "(none)"
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, flatten(strings.TrimRight(l, " \t")))
	}
	text = strings.Join(lines, "\n")
	fence := mdtext.Fence(text)
	if len(fence) < 3 {
		fence = "```"
	}
	return fence + "text\n" + text + "\n" + fence
}

// flatten returns l unchanged unless it nests deeper than a session log
// can hold (see limitNesting), in which case its leading markers and
// indentation are dropped: a prompt can hold any line, the log cannot.
func flatten(l string) string {
	if markers, indent := nesting(l); markers <= maxMarkers && indent <= maxIndent {
		return l
	}
	return strings.TrimLeft(l, " \t>*+-")
}

// firstLine is the first non-blank line of s, trimmed, on one line (see
// singleLine).
func firstLine(s string) string {
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = singleLine(l, 0); l != "" {
			return l
		}
	}
	return ""
}

// singleLine is s on one line: its lines joined by " ", control characters
// dropped, clipped to max runes (0: no limit).
func singleLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.Join(strings.Fields(s), " ")
	if max > 0 {
		s = clip(s, max)
	}
	return s
}

// oneWord is s with every run of spaces replaced by "-".
func oneWord(s string) string { return strings.Join(strings.Fields(singleLine(s, 0)), "-") }

// clip cuts s to max runes, marking the cut with "…".
func clip(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// fitHeading is s fit for a heading: one line, clipped, without a
// trailing run of "#" (which a heading drops) or a trailing @word or
// #word (which a phase heading reads as its agent or channel).
func fitHeading(s string, max int) string {
	s = singleLine(s, max)
	for {
		w := lastWord(s)
		if w == "" || strings.Trim(w, "#") != "" && !isTag(w) {
			return s
		}
		s = strings.TrimSpace(strings.TrimSuffix(s, w))
	}
}

// rfc3339 returns t when it is an RFC 3339 time, else "".
func rfc3339(t string) string {
	if _, err := time.Parse(time.RFC3339, t); err != nil {
		return ""
	}
	return t
}
