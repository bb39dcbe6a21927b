package registry

import "time"

// Summary is an Entry as "crystallize sessions --json", "sessions prune
// --json" and "status --json" print it: the row with its times in RFC
// 3339, UTC, to the millisecond, and Ended left out while the session
// has not ended. It is a stable contract; Entry's own JSON, with times in
// Unix milliseconds, is the store's.
type Summary struct {
	Number    int    `json:"number"`
	SessionID string `json:"session_id"`
	Name      string `json:"name"`
	AgentType string `json:"agent_type"`
	State     string `json:"state"`
	Status    string `json:"status"`
	Workspace string `json:"workspace"`
	StateDir  string `json:"state_dir"`
	PID       int    `json:"pid"`
	Started   string `json:"started"`
	Heartbeat string `json:"heartbeat"`
	Ended     string `json:"ended,omitempty"`
	// Branch, Agent and Model say who the session is (see Start); empty
	// when not known.
	Branch string `json:"branch"`
	Agent  string `json:"agent"`
	Model  string `json:"model"`
}

// Summary is e's Summary.
func (e Entry) Summary() Summary {
	s := Summary{
		Number: e.Number, SessionID: e.SessionID, Name: e.Name, AgentType: e.AgentType,
		State: e.State, Status: e.Status, Workspace: e.Workspace, StateDir: e.StateDir, PID: e.PID,
		Started: FormatTime(e.Started), Heartbeat: FormatTime(e.Heartbeat),
		Branch: e.Branch, Agent: e.Agent, Model: e.Model,
	}
	if e.Ended != 0 {
		s.Ended = FormatTime(e.Ended)
	}
	return s
}

// Summaries is the Summary of every entry of list, in order; never nil.
func Summaries(list []Entry) []Summary {
	out := make([]Summary, len(list))
	for i, e := range list {
		out[i] = e.Summary()
	}
	return out
}

// FormatTime writes a time the registry and the inbox keep in Unix
// milliseconds as RFC 3339 in UTC, to the millisecond.
func FormatTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
