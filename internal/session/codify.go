package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ErrNoToolCalls is returned by ToTrace for a session without a single
// tool call: there is nothing to codify.
var ErrNoToolCalls = errors.New("session has no tool calls")

// Review values ToTrace records in an action's metadata under "review".
const (
	// ReviewRecovery marks the tool call that followed an [!error]: what
	// the agent did to recover was a judgement, so the step is fuzzy and
	// needs review before it runs unattended.
	ReviewRecovery = "error_recovery"
)

// ToTrace converts a session into a crystallization trace, so that the
// miner can treat an agent session like any recorded run. file names the
// session in the trace's metadata.
//
// Each tool call becomes one tool_call action, in document order. The
// action's name is the call's tool, except in a phase that crystallize run
// wrote ("Step N · tool.name" with one call), where the tool is the name
// after the dot and the command line is kept as metadata "command". The
// arguments are split as a shell would split them (see SplitArgs):
// "--name=value" becomes parameter name, and every other word becomes
// arg1, arg2, … in order ("--name value" is not guessed at: the word after
// a flag may as well be positional). A caller that knows the tool's
// command template can rename the positional ones. The result becomes the
// output: the JSON in its leading code span when there is one, else the
// text. "- side effect: `kind target`" items become side effects.
//
// Metadata keeps what mining does not interpret: the phase id, name, agent
// and channel, the raw arguments and result, and the callouts of the phase
// that precede the call. Two callouts change the step itself: a [!user]
// intervention makes the next tool call an approval boundary (the human
// stepped in there, so a workflow must stop there too), and the tool call
// after an [!error] is a recovery, marked fuzzy with review
// ReviewRecovery. Unknown callouts and prose are not needed and dropped.
//
// The trace id is the session_id; ToTrace returns ErrNoToolCalls when the
// session records no tool call. s is not modified.
func ToTrace(s *Session, file string) (*trace.Trace, error) {
	t := &trace.Trace{
		Version:    trace.SchemaVersion,
		ID:         s.Meta.SessionID,
		StartedAt:  s.Meta.Started,
		FinishedAt: s.Meta.Ended,
		Metadata:   map[string]any{"source": "session", "session_file": file},
	}
	for _, f := range s.Meta.Extra {
		if f.Key == "workflow" {
			t.WorkflowID = f.Value
		}
	}
	if s.Title != "" {
		t.Metadata["goal"] = s.Title
	}
	ids := s.PhaseIDs()
	var user, failure string
	for pi, p := range s.Phases {
		var callouts []any
		stepTool := runStepTool(p)
		for _, b := range p.Blocks {
			switch b := b.(type) {
			case Callout:
				callouts = append(callouts, map[string]any{"type": strings.ToLower(b.Type), "text": b.Text()})
				switch {
				case b.Is(CalloutUser):
					user = b.Text()
				case b.Is(CalloutError):
					failure = b.Text()
				}
			case ToolCalls:
				for _, c := range b.Calls {
					a := action(len(t.Actions)+1, c, stepTool)
					a.Metadata["phase"] = ids[pi]
					a.Metadata["phase_name"] = p.Name
					if p.Agent != "" {
						a.Metadata["agent"] = p.Agent
					}
					if p.Channel != "" {
						a.Metadata["channel"] = p.Channel
					}
					if len(callouts) > 0 {
						a.Metadata["callouts"] = callouts
						callouts = nil
					}
					if user != "" {
						a.Approval = &trace.Approval{Required: true, Prompt: user, Boundary: "user_intervention"}
						user = ""
					}
					if failure != "" {
						fuzzy := true
						a.Fuzzy = &fuzzy
						a.Metadata["review"] = ReviewRecovery
						a.Metadata["recovers_from"] = failure
						failure = ""
					}
					t.Actions = append(t.Actions, a)
				}
			}
		}
	}
	if len(t.Actions) == 0 {
		return nil, fmt.Errorf("%s: %w", file, ErrNoToolCalls)
	}
	return t, nil
}

// runStepTool returns the tool of a phase crystallize run wrote, "Step N ·
// tool" with one tool call, or "".
func runStepTool(p Phase) string {
	rest, ok := strings.CutPrefix(p.Name, "Step ")
	if !ok {
		return ""
	}
	num, tool, ok := strings.Cut(rest, " · ")
	if _, err := strconv.Atoi(num); !ok || err != nil || tool == "" || strings.ContainsAny(tool, " \t") {
		return ""
	}
	n := 0
	for _, b := range p.Blocks {
		if tc, ok := b.(ToolCalls); ok {
			n += len(tc.Calls)
		}
	}
	if n != 1 {
		return ""
	}
	return tool
}

// action builds the nth action of a trace from one tool call.
func action(n int, c ToolCall, stepTool string) trace.Action {
	a := trace.Action{
		ID:       "a" + strconv.Itoa(n),
		Kind:     trace.KindToolCall,
		Name:     c.Tool,
		Metadata: map[string]any{"args": c.Args, "result": c.Result},
	}
	if stepTool != "" {
		a.Name = stepTool
		a.Metadata["command"] = c.Tool
	}
	params := map[string]any{}
	pos := 0
	// A credential an option passes in the next word (curl -u user:pw,
	// --token X) is joined to its option first, so that it reaches the
	// miner in one word with the option that makes it a credential, and
	// the workflow reads it as a secret instead of writing it.
	for _, w := range redact.JoinOptionValues(SplitArgs(c.Args)) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(w, "--"), "="); ok && strings.HasPrefix(w, "--") && k != "" {
			// --user=name:password stays one word: its name does not
			// say it holds a credential, the word does.
			if _, secret := redact.Secret(w); !secret || redact.SensitiveKey(k) {
				params[k] = v
				continue
			}
		}
		pos++
		params["arg"+strconv.Itoa(pos)] = w
	}
	if len(params) > 0 {
		a.Parameters = params
	}
	a.Output = resultValue(c.Result)
	for _, se := range c.SideEffects {
		kind, target, _ := strings.Cut(strings.Trim(strings.TrimSpace(se), "`"), " ")
		a.SideEffects = append(a.SideEffects, trace.SideEffect{Kind: kind, Target: strings.TrimSpace(target)})
	}
	return a
}

// resultValue is the JSON value of a result's leading code span, or the
// result as a string when it has none or it is not JSON.
func resultValue(r string) any {
	if rest, ok := strings.CutPrefix(r, "`"); ok {
		if span, _, ok := strings.Cut(rest, "`"); ok {
			d := json.NewDecoder(bytes.NewReader([]byte(span)))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err == nil && !d.More() {
				return v
			}
		}
	}
	return r
}

// SplitArgs splits a tool call's arguments into words as a POSIX shell
// would, without expansion: runs of blanks separate words, single quotes
// keep everything literally, double quotes keep everything but a
// backslash before '"' or '\', and a backslash outside quotes escapes the
// next character. An unterminated quote ends at the end of the string.
func SplitArgs(s string) []string {
	var words []string
	var w strings.Builder
	in := false // inside a word
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '\'':
			in = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			in = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			in = true
			i++
			w.WriteByte(s[i])
		default:
			in = true
			w.WriteByte(c)
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
