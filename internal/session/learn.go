package session

import (
	"strconv"
	"strings"
)

// CaseSchema is the "schema" of every LearningCase, the $id's last part of
// schemas/learning-case.v1.json.
const CaseSchema = "crystallize.learning-case.v1"

// CaseTypePuzzle is the one LearnOptions.Type there is: a case posed as a
// puzzle, context and failed attempt in, fix out.
const CaseTypePuzzle = "puzzle"

// Kinds of learning case.
const (
	KindFailure    = "failure"    // an [!error] callout
	KindCorrection = "correction" // a [!user] callout after an agent step
)

// LearningCase is one example an agent can learn from, as one JSON Lines
// record of "crystallize session learn". Its JSON form is documented by
// schemas/learning-case.v1.json.
type LearningCase struct {
	Schema  string `json:"schema"`
	Type    string `json:"type"`
	Kind    string `json:"kind"`
	ID      string `json:"id"` // session_id#n, n counting from 1
	Session string `json:"session_id"`
	File    string `json:"file"`
	// Phase is the id of the phase the callout is in, "" in the preamble.
	Phase     string      `json:"phase"`
	PhaseName string      `json:"phase_name"`
	Agent     string      `json:"agent,omitempty"`
	Context   CaseContext `json:"context"`
	// Attempt is the agent step the callout is about: the tool calls
	// before it in its phase, since the previous case's callout.
	Attempt []ToolCall `json:"attempt"`
	// Signal is the callout's text: the error, or what the user said.
	Signal string `json:"signal"`
	// Fix is what came after: the tool calls up to the next [!error] or
	// [!user] in the same phase, and the decisions among them.
	Fix      CaseFix `json:"fix"`
	Resolved bool    `json:"resolved"` // Fix is not empty
}

// CaseContext is what the agent knew before the attempt.
type CaseContext struct {
	Objective string `json:"objective"` // the session's title
	// Previous are the phases completed before this one, by name.
	Previous []string `json:"previous_phases"`
	// Decisions are the [!decision] texts before the callout.
	Decisions []string `json:"decisions"`
}

// CaseFix is the eventual fix of a case.
type CaseFix struct {
	ToolCalls []ToolCall `json:"tool_calls"`
	Notes     []string   `json:"notes"` // [!decision] texts in the fix
}

// Learn returns the learning cases of a session, in document order: one
// per [!error] callout (a failure) and one per [!user] callout that
// follows a tool call in its phase (a correction; a [!user] callout
// before any agent step is an instruction, not a correction). Cases stop
// at phase boundaries, the resumable checkpoints: the fix of an error is
// what its phase did after it. file is recorded in each case.
func Learn(s *Session, file string) []LearningCase {
	var cases []LearningCase
	var decisions, previous []string
	ids := s.PhaseIDs()
	for pi, p := range s.Phases {
		var attempt []ToolCall
		open := -1 // index in cases of the case still collecting its fix, or -1
		for _, b := range p.Blocks {
			switch b := b.(type) {
			case ToolCalls:
				if open >= 0 {
					cases[open].Fix.ToolCalls = append(cases[open].Fix.ToolCalls, b.Calls...)
					cases[open].Resolved = true
				}
				attempt = append(attempt, b.Calls...)
			case Callout:
				var kind string
				switch {
				case b.Is(CalloutDecision):
					decisions = append(decisions, b.Text())
					if open >= 0 {
						cases[open].Fix.Notes = append(cases[open].Fix.Notes, b.Text())
						cases[open].Resolved = true
					}
					continue
				case b.Is(CalloutError):
					kind = KindFailure
				case b.Is(CalloutUser) && len(attempt) > 0:
					kind = KindCorrection
				default:
					continue
				}
				c := LearningCase{
					Schema: CaseSchema, Type: CaseTypePuzzle, Kind: kind,
					ID:      s.Meta.SessionID + "#" + strconv.Itoa(len(cases)+1),
					Session: s.Meta.SessionID, File: file,
					Phase: ids[pi], PhaseName: p.Name, Agent: p.Agent,
					Context: CaseContext{
						Objective: s.Title,
						Previous:  append([]string{}, previous...),
						Decisions: append([]string{}, decisions...),
					},
					Attempt: append([]ToolCall{}, attempt...),
					Signal:  b.Text(),
					Fix:     CaseFix{ToolCalls: []ToolCall{}, Notes: []string{}},
				}
				cases = append(cases, c)
				open = len(cases) - 1
				attempt = nil
			}
		}
		previous = append(previous, p.Name)
	}
	for i := range cases {
		for j := range cases[i].Attempt {
			normalize(&cases[i].Attempt[j])
		}
		for j := range cases[i].Fix.ToolCalls {
			normalize(&cases[i].Fix.ToolCalls[j])
		}
	}
	return cases
}

// normalize trims a tool call's result so that cases compare by content.
func normalize(c *ToolCall) {
	c.Result = strings.TrimSpace(c.Result)
}
