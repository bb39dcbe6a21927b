package source

import (
	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// SessionAdapter converts agent session logs into traces: files in which
// many JSON records together make one or more sessions (a Claude Code
// project log, a Codex rollout, an OTLP/JSON export grouped by trace id).
// Unlike an Adapter, it sees a whole file at once.
type SessionAdapter interface {
	// Name identifies the format, for messages and reports.
	Name() string
	// DetectRecord reports whether doc, the first JSON object of a file,
	// is a record of this format. It looks only at the shape of doc.
	DetectRecord(doc map[string]any) bool
	// DecodeSessions converts the records of one file into one trace per
	// session, normalizing tool calls with rules. The error, if any, is a
	// trace.ErrorList naming every problem at its line and JSON path.
	// Sessions that hold no tool call are returned in skipped with a
	// reason, never as an error.
	DecodeSessions(records []Record, file string, rules *normalize.Rules) (traces []*trace.Trace, skipped []SkippedSession, err error)
}

// Record is one JSON object of a session file.
type Record struct {
	// Line is the 1-based line of a JSON Lines record, or 0 for a *.json
	// file holding one document.
	Line int
	// Doc is the parsed object.
	Doc map[string]any
	// Raw is the record's bytes as read, without the line ending.
	Raw []byte
}

// SkippedSession is a session that did not become a trace, and why.
type SkippedSession struct {
	// ID is the session's id in its format.
	ID string
	// Line is the first line of the session in its file, or 0.
	Line int
	// Reason is a stable code, such as "no_tool_calls".
	Reason string
	// Message explains the reason to a person.
	Message string
}
