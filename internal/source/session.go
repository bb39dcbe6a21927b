package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"time"

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
	// DetectRecord reports whether doc, one of the first JSON objects of
	// a file, is a record of this format. It looks only at the shape of
	// doc. The loader asks about each of the first records in turn
	// (detectRecords of them) until an adapter claims one, or one is a
	// document of the trace formats.
	DetectRecord(doc map[string]any) bool
	// DecodeSessions converts the records of one file into one trace per
	// session, normalizing tool calls with rules. The error, if any, is a
	// trace.ErrorList naming every problem at its line and JSON path.
	// Sessions that hold no tool call are returned in skipped with a
	// reason, never as an error.
	//
	// The traces returned alongside an error are the sessions of the file
	// that had no problem; the loader keeps them when asked to skip
	// invalid input. Each trace's Origin.Line is the first line of its
	// session and its SourceHash covers the session's records (see
	// HashRecords); the loader sets Origin.Path and Source, fills in a
	// SourceHash of every record of the file when the adapter left it
	// empty, and normalizes the trace.
	DecodeSessions(records []Record, file string, rules *normalize.Rules) (traces []*trace.Trace, skipped []SkippedSession, err error)
}

// sessionAdapters is the registry of session formats, in detection order:
// the first whose DetectRecord accepts one of the first records of a file
// decodes the whole file. Session formats are tried before the document formats of
// defaultAdapters, because a file they claim is not one trace per line.
// Like defaultAdapters it is an array, so that it cannot be changed
// through a shared slice; a new format is one more element.
var sessionAdapters = [...]SessionAdapter{Claude{}, Codex{}, OTLP{}, OTLPLogs{}, Gemini{}, GeminiChat{}}

// SessionAdapters returns the registered session adapters in detection
// order. The slice is a copy.
func SessionAdapters() []SessionAdapter {
	return append([]SessionAdapter(nil), sessionAdapters[:]...)
}

// detectSession returns the session adapter for a file whose first record
// is doc, or nil when the file holds documents of the other formats.
func detectSession(doc map[string]any) SessionAdapter {
	for _, a := range sessionAdapters {
		if a.DetectRecord(doc) {
			return a
		}
	}
	return nil
}

// shaper is implemented by the session adapters that read only part of
// each record: the loader parses their records with trace.ParseShaped,
// and leaves out what the shape does not keep. DecodeSessions must give
// the same result for a record parsed whole and shaped.
type shaper interface {
	recordShape() *trace.Shape
}

// unique is the shape of a member whose value seldom repeats (see
// trace.Shape.Unique).
var unique = &trace.Shape{Unique: true}

// recordShape returns the shape of a's records, or nil to keep them whole.
func recordShape(a SessionAdapter) *trace.Shape {
	if s, ok := a.(shaper); ok {
		return s.recordShape()
	}
	return nil
}

// Record is one JSON object of a session file.
type Record struct {
	// Line is the 1-based line of a JSON Lines record, or 0 for a *.json
	// file holding one document.
	Line int
	// Doc is the parsed object. The loader leaves out of it the members
	// its adapter does not read (see shaper).
	Doc map[string]any
	// Raw is the record's bytes as read, without the line ending.
	Raw []byte
}

// ReasonNoToolCalls is the reason code of a session that recorded no tool
// call: there is nothing in it to mine, which is normal (a question
// answered from the model's knowledge) and not an error.
const ReasonNoToolCalls = "no_tool_calls"

// SkippedSession is a session that did not become a trace, and why.
type SkippedSession struct {
	// Path is the file as messages show it. Adapters leave it empty; the
	// loader sets it.
	Path string
	// Format is the name of the adapter that read the session. Adapters
	// leave it empty; the loader sets it.
	Format string
	// ID is the session's id in its format.
	ID string
	// Line is the first line of the session in its file, or 0.
	Line int
	// Reason is a stable code, such as "no_tool_calls".
	Reason string
	// Message explains the reason to a person.
	Message string
}

// A Note is something a load read past without counting it, and that is
// not an error: a record of a type its format's reader does not know, a
// file that is not a session log, a session that repeats another, an
// empty file. (A line of a session log that is not JSON is listed in
// Result.Skipped, with the other bad lines.) Notes are listed in Result.Notes
// so that a summary can say what was passed over and why: nothing is
// passed over in silence.
type Note struct {
	// Path is the file as messages show it.
	Path string
	// Line is the line in the file, or 0 for the whole file.
	Line int
	// Format is the name of the adapter that read the file, if any.
	Format string
	// Code is a stable code: NoteUnknownRecord, NoteNotSessionLog,
	// NoteCopy, NoteRepeats or NoteEmpty.
	Code string
	// Detail is what the note is about, for grouping: the record type
	// of NoteUnknownRecord, the id of the session a NoteCopy or
	// NoteRepeats repeats.
	Detail string
	// ID is the id of the session a NoteCopy or NoteRepeats is about.
	ID string
	// Message explains the note to a person.
	Message string
}

// The codes of Note.
const (
	// NoteUnknownRecord is a record of a type the format's reader does
	// not read and that holds no tool call: passed over.
	NoteUnknownRecord = "unknown_record_type"
	// NoteNotSessionLog is a file in an agent's home directory that is
	// not a session log (settings, prompt history, todos, caches).
	NoteNotSessionLog = "not_session_log"
	// NoteCopy is a session, or the part of one, that repeats another
	// session of the load (a compaction, a side question, a fork):
	// read once, as the session it repeats.
	NoteCopy = "copy"
	// NoteRepeats is a session that repeats calls of another and goes on
	// with its own (a fork, a resumed session): it is a trace of its own
	// calls only.
	NoteRepeats = "repeats"
	// NoteEmpty is a file with nothing to read: a JSON Lines file
	// without a record, an empty file in an agent's home, or a Claude
	// Code log whose records name no session.
	NoteEmpty = "empty_file"
)

// noter is implemented by the session adapters that pass over records
// of types they do not know: notes returns a note for each such record
// of a file. It is separate from DecodeSessions so that an adapter that
// knows every record it can meet need not implement it.
type noter interface {
	notes(records []Record, file string) []Note
}

// HashRecords returns the source hash of a session made of recs: the
// "sha256:" hex digest of the records' bytes as read, joined with "\n".
// For a session that is a whole file this is the hash of the file with
// its line endings normalized and blank lines dropped, so that a session
// keeps its hash when other sessions are appended to its file, and two
// sessions of one file have different hashes.
func HashRecords(recs []Record) string {
	h := sha256.New()
	for i, r := range recs {
		if i > 0 {
			h.Write([]byte{'\n'})
		}
		h.Write(r.Raw)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Shared helpers of the session decoders.

// actionList gathers the actions of a session's calls, to be made into
// one slice of their exact length. Appended one call at a time, the
// actions left a slice up to twice their size, and a session's actions are
// what a load keeps: the slack was a fifth of the memory of a loaded
// Claude Code session.
type actionList struct {
	parts [][]trace.Action
	n     int
}

func (l *actionList) add(acts []trace.Action) {
	l.parts = append(l.parts, acts)
	l.n += len(acts)
}

// actions returns the actions added, in order, or nil when there are none.
func (l *actionList) actions() []trace.Action {
	if l.n == 0 {
		return nil
	}
	out := make([]trace.Action, 0, l.n)
	for _, p := range l.parts {
		out = append(out, p...)
	}
	return out
}

// parseTime parses an RFC 3339 timestamp, with or without fractional
// seconds, as agents write them.
func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// millisBetween returns b − a in milliseconds, when both are timestamps
// and b is not before a; a clock that went backwards gives no duration
// rather than a negative one.
func millisBetween(a, b string) (int64, bool) {
	ta, ok1 := parseTime(a)
	tb, ok2 := parseTime(b)
	if !ok1 || !ok2 || tb.Before(ta) {
		return 0, false
	}
	return tb.Sub(ta).Milliseconds(), true
}

// checkTime records a problem when the member key of obj is present but
// not an RFC 3339 timestamp, and returns it.
func checkTime(d *trace.Fields, obj map[string]any, p, key string) string {
	s := d.OptString(obj, p, key)
	if s != "" {
		if _, ok := parseTime(s); !ok {
			d.Errorf(trace.Member(p, key), "invalid timestamp %q: expected RFC 3339", s)
			return ""
		}
	}
	return s
}

// turnUsage is what one model turn cost: the model, its tokens and its
// latency.
type turnUsage struct {
	model         string
	input, output int64
	// cacheRead and cacheWrite are the part of input read from and
	// written to the prompt cache, which a price table prices apart.
	cacheRead, cacheWrite int64
	wallMS                int64
}

// splitCost divides a model turn's usage over the n tool calls it produced:
// the first call carries the model call and the remainder of each integer
// division, so that the shares sum exactly to the turn. A turn's cost is
// what crystallizing the calls saves, and no call is worth more than
// another in a way the log records.
func splitCost(u turnUsage, n int) []*trace.Cost {
	out := make([]*trace.Cost, n)
	for i := range out {
		c := &trace.Cost{
			Model:            u.model,
			InputTokens:      u.input / int64(n),
			OutputTokens:     u.output / int64(n),
			CacheReadTokens:  u.cacheRead / int64(n),
			CacheWriteTokens: u.cacheWrite / int64(n),
			WallMS:           u.wallMS / int64(n),
		}
		if i == 0 {
			c.ModelCalls = 1
			c.InputTokens += u.input % int64(n)
			c.OutputTokens += u.output % int64(n)
			c.CacheReadTokens += u.cacheRead % int64(n)
			c.CacheWriteTokens += u.cacheWrite % int64(n)
			c.WallMS += u.wallMS % int64(n)
		}
		out[i] = c
	}
	return out
}

// textOf returns the text of a message content: a string, or the "text"
// members of its text blocks joined with "\n". ok is false when the
// content holds anything that is not text.
func textOf(content any) (text string, ok bool) {
	switch c := content.(type) {
	case string:
		return c, true
	case []any:
		var b bytes.Buffer
		for _, e := range c {
			blk, isObj := e.(map[string]any)
			if !isObj {
				return "", false
			}
			switch blk["type"] {
			case "text", "input_text", "output_text":
				s, _ := blk["text"].(string)
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(s)
			default:
				return "", false
			}
		}
		return b.String(), true
	}
	return "", false
}
