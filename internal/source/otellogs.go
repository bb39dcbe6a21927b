package source

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// OTLPLogs is the SessionAdapter for the OpenTelemetry log records that
// Claude Code, Codex and Gemini CLI export as their telemetry events, in
// OTLP/JSON:
// an object {"resourceLogs": [{"resource": …, "scopeLogs": [{"scope": …,
// "logRecords": [record, …]}]}]} per *.json file or per line of a *.jsonl
// file, as a collector's file exporter writes them. These agents report
// tool activity as log records, not spans, so OTLP does not see it.
//
// A record's event is its event.name attribute (or the record's own
// eventName, which OTLP 1.5 added). Claude Code writes the
// bare name ("tool_result") there and the full one in the body
// ("claude_code.tool_result"); Codex writes the full one ("codex.tool_result")
// there. The events read are:
//
//   - claude_code.tool_result: one tool call; tool_name, tool_use_id,
//     success ("true" or "false"), duration_ms, error, and the call's
//     input as a JSON string in tool_input (or, when only tool details are
//     logged, the parameters Claude Code picks out in tool_parameters:
//     full_command of a Bash call, file_path, an MCP tool's server and
//     tool name);
//   - claude_code.api_request: one model call; model, input_tokens,
//     cache_read_tokens, cache_creation_tokens, output_tokens, cost_usd,
//     duration_ms. It is logged when the response is complete, before the
//     tools it asked for run: the tool results after it are its calls;
//   - codex.tool_result: one tool call; tool_name, call_id, arguments (the
//     call's arguments as written, a JSON object for function tools),
//     success, duration_ms, output;
//   - codex.sse_event with event.kind response.completed: the end of one
//     model response, with input_token_count and output_token_count. Codex
//     runs the calls of a response as they stream, so the tool results
//     before it are its calls;
//   - gemini_cli.tool_call: one tool call of Gemini CLI; function_name,
//     function_args (a JSON string), success (a boolean), duration_ms,
//     error; gemini_cli.api_response: one model call, logged before the
//     tools it asked for run, with input_token_count, output_token_count,
//     thoughts_token_count (billed as output) and duration_ms;
//   - claude_code.user_prompt, codex.user_prompt and gemini_cli.user_prompt:
//     the prompt, when the user let it be logged, is the goal.
//
// Records are grouped by session (session.id for Claude Code and Gemini CLI,
// conversation.id for Codex, on the record or its resource) into one trace
// per session, ordered by time and event.sequence; a record delivered
// twice is read once. Other events (tool decisions, API errors, hooks)
// and records that are not agent events are passed over.
type OTLPLogs struct{}

// Name returns "otel-logs".
func (OTLPLogs) Name() string { return "otel-logs" }

// DetectRecord reports whether doc is an OTLP/JSON logs export: an object
// with resourceLogs.
func (OTLPLogs) DetectRecord(doc map[string]any) bool {
	_, ok := doc["resourceLogs"]
	return ok
}

// logEvent is one agent event read from a log record.
type logEvent struct {
	name     string // the full event name: claude_code.tool_result
	agent    string // claude-code or codex
	session  string
	time     uint64 // Unix nanoseconds, 0 when unknown
	seq      int64  // event.sequence, or -1
	attrs    map[string]any
	rawAttrs []any
	resource map[string]any
	line     int
	rec      int // index of the record holding it
	path     string
	order    int // position in the file
}

// kind is the event name without its agent's prefix.
func (e *logEvent) kind() string {
	_, k, _ := strings.Cut(e.name, ".")
	return k
}

func (e *logEvent) str(key string) string {
	s, _ := e.attrs[key].(string)
	return s
}

// attrPath is the JSON path of the value of the event's attribute key.
func (e *logEvent) attrPath(key string) string {
	return attributePath(e.path, e.rawAttrs, key)
}

// logAgents maps the prefix of an event name to the agent that writes it.
var logAgents = map[string]string{"claude_code": "claude-code", "codex": "codex", "gemini_cli": "gemini-cli"}

// DecodeSessions reads the log records of one file into one trace per
// session. Sessions in which a problem was found are left out and every
// problem is in the error, so a caller that skips invalid input keeps
// the rest.
func (OTLPLogs) DecodeSessions(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	return decodeExports(records, file, rules, "resourceLogs")
}

// decodeExports decodes a file of OTLP/JSON exports. A collector's file
// exporter may serve the traces, logs and metrics pipelines alike, and
// then writes the exports of every signal to one file: the span exports
// go to the span reader, the log exports to the log reader, and the
// metric exports, which hold no tool call, are passed over. A record that
// is none of them goes to the reader of own, the signal the file was
// recognized by, which reports it.
func decodeExports(records []Record, file string, rules *normalize.Rules, own string) ([]*trace.Trace, []SkippedSession, error) {
	var spans, logs []Record
	for _, r := range records {
		_, isSpans := r.Doc["resourceSpans"]
		_, isLogs := r.Doc["resourceLogs"]
		_, isMetrics := r.Doc["resourceMetrics"]
		switch {
		case isSpans:
			spans = append(spans, r)
		case isLogs:
			logs = append(logs, r)
		case isMetrics:
		case own == "resourceSpans":
			spans = append(spans, r)
		default:
			logs = append(logs, r)
		}
	}
	var traces []*trace.Trace
	var skipped []SkippedSession
	var errs trace.ErrorList
	for _, part := range [...]struct {
		recs   []Record
		decode func([]Record, string, *normalize.Rules) ([]*trace.Trace, []SkippedSession, error)
	}{{spans, decodeSpans}, {logs, decodeLogs}} {
		if len(part.recs) == 0 {
			continue
		}
		t, s, err := part.decode(part.recs, file, rules)
		traces, skipped = append(traces, t...), append(skipped, s...)
		if list, ok := err.(trace.ErrorList); ok {
			errs = append(errs, list...)
		} else if err != nil {
			errs = append(errs, &trace.Error{File: file, Msg: err.Error()})
		}
	}
	slices.SortStableFunc(traces, func(a, b *trace.Trace) int { return a.Origin.Line - b.Origin.Line })
	slices.SortStableFunc(skipped, func(a, b SkippedSession) int { return a.Line - b.Line })
	errs.Sort()
	return traces, skipped, errs.Err()
}

// decodeLogs is DecodeSessions for the records that are log exports.
func decodeLogs(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	var errs trace.ErrorList
	bySession := map[string][]*logEvent{}
	var order []string
	bad := map[string]bool{}
	seen := map[string]*logEvent{}
	n := 0
	for ri, rec := range records {
		d := &trace.Fields{File: file, Line: rec.Line}
		evs := readOTLPLogs(d, rec.Doc, rec.Line, &n)
		for _, ev := range evs {
			ev.rec = ri
			if ev.session == "" {
				if ev.kind() == "tool_result" || ev.kind() == "tool_call" {
					d.Errorf(trace.Member(ev.path, "attributes"), "%s record names no session (session.id or conversation.id)", ev.name)
				}
				continue
			}
			// Exporters deliver at least once: a record sent again is the
			// same event. Another record with the same identity says
			// something else, and keeping either would hide the other.
			key := ev.session + "\x00" + ev.name + "\x00" + strconv.FormatUint(ev.time, 10) + "\x00" +
				strconv.FormatInt(ev.seq, 10) + "\x00" + ev.str("tool_use_id") + ev.str("call_id")
			if first := seen[key]; first != nil {
				if !reflect.DeepEqual(first.attrs, ev.attrs) {
					d.Errorf(ev.path, "%s event sent again with different attributes (first at line %d, %s)", ev.name, first.line, first.path)
				}
				continue
			}
			seen[key] = ev
			if _, ok := bySession[ev.session]; !ok {
				order = append(order, ev.session)
			}
			bySession[ev.session] = append(bySession[ev.session], ev)
		}
		if len(d.Errs) > 0 {
			for _, ev := range evs {
				bad[ev.session] = true
			}
			errs = append(errs, d.Errs...)
		}
	}
	var traces []*trace.Trace
	var skipped []SkippedSession
	for _, id := range order {
		evs := bySession[id]
		t, terrs := logTrace(id, evs, file, rules.Actions)
		switch {
		case len(terrs) > 0:
			errs = append(errs, terrs...)
		case bad[id]:
		case t == nil:
			skipped = append(skipped, SkippedSession{
				ID: id, Line: evs[0].line, Reason: ReasonNoToolCalls,
				Message: fmt.Sprintf("%s session %s has no tool_result event in its %d events", evs[0].agent, id, len(evs)),
			})
		default:
			t.SourceHash = sessionHash(id, records, evs)
			traces = append(traces, t)
		}
	}
	errs.Sort()
	return traces, skipped, errs.Err()
}

// sessionHash is the source hash of a session whose events are evs: the
// "sha256:" hex digest of its id and of the records holding its events,
// in file order, joined with "\n". One export request often carries the
// events of several sessions, so the records alone would not tell them
// apart; a session keeps its hash when records of other sessions are
// added to its file.
func sessionHash(id string, records []Record, evs []*logEvent) string {
	idx := make([]int, 0, len(evs))
	for _, ev := range evs {
		idx = append(idx, ev.rec)
	}
	slices.Sort(idx)
	recs := []Record{{Raw: []byte(id)}}
	for _, i := range slices.Compact(idx) {
		recs = append(recs, records[i])
	}
	return HashRecords(recs)
}

// readOTLPLogs reads the agent events of one export request, reporting
// problems in d; n numbers the events in file order.
func readOTLPLogs(d *trace.Fields, doc map[string]any, line int, n *int) []*logEvent {
	rls, ok := doc["resourceLogs"].([]any)
	if !ok {
		if v, present := doc["resourceLogs"]; !present {
			d.Errorf("$.resourceLogs", "missing required field")
		} else {
			d.TypeError("$.resourceLogs", "array", v)
		}
		return nil
	}
	var out []*logEvent
	for i, rlv := range rls {
		rp := trace.Element("$.resourceLogs", i)
		rl, ok := rlv.(map[string]any)
		if !ok {
			d.TypeError(rp, "object", rlv)
			continue
		}
		var resource map[string]any
		if res := d.OptObject(rl, rp, "resource"); res != nil {
			resource = otelAttributes(d, res, trace.Member(rp, "resource"))
		}
		sls, _ := d.OptArray(rl, rp, "scopeLogs")
		for j, slv := range sls {
			sp := trace.Element(trace.Member(rp, "scopeLogs"), j)
			sl, ok := slv.(map[string]any)
			if !ok {
				d.TypeError(sp, "object", slv)
				continue
			}
			recs, _ := d.OptArray(sl, sp, "logRecords")
			for k, v := range recs {
				p := trace.Element(trace.Member(sp, "logRecords"), k)
				if ev := readLogRecord(d, v, p, resource); ev != nil {
					ev.line, ev.order = line, *n
					*n++
					out = append(out, ev)
				}
			}
		}
	}
	return out
}

// readLogRecord reads one log record, or returns nil when it is not an
// event of an agent this adapter reads.
func readLogRecord(d *trace.Fields, v any, p string, resource map[string]any) *logEvent {
	m, ok := v.(map[string]any)
	if !ok {
		d.TypeError(p, "object", v)
		return nil
	}
	ev := &logEvent{path: p, resource: resource, seq: -1}
	ev.attrs = otelAttributes(d, m, p)
	ev.rawAttrs, _ = m["attributes"].([]any)
	var body string
	if b, present := m["body"]; present && b != nil {
		body, _ = otelValue(d, b, trace.Member(p, "body")).(string)
	}
	name := ev.str("event.name")
	if name == "" {
		// OTLP 1.5 gave log records an eventName of their own, which
		// newer SDKs write instead of the attribute.
		name = d.OptString(m, p, "eventName")
	}
	if !strings.Contains(name, ".") && name != "" && strings.HasSuffix(body, "."+name) {
		name = body
	}
	prefix, _, _ := strings.Cut(name, ".")
	ev.name, ev.agent = name, logAgents[prefix]
	if ev.agent == "" {
		return nil
	}
	for _, k := range [...]string{"session.id", "conversation.id"} {
		if s, _ := ev.attrs[k].(string); s != "" {
			ev.session = s
			break
		}
		if s, _ := resource[k].(string); s != "" {
			ev.session = s
			break
		}
	}
	if s, ok := logInt(d, ev, "event.sequence"); ok {
		ev.seq = s
	}
	// Codex leaves timeUnixNano 0 and dates the event in event.timestamp;
	// the observed time, when the collector saw it, comes last.
	ev.time = otelTime(d, m, p, "timeUnixNano")
	if ev.time == 0 {
		if ts := ev.str("event.timestamp"); ts != "" {
			if t, ok := parseTime(ts); ok && t.UnixNano() > 0 {
				ev.time = uint64(t.UnixNano())
			} else {
				d.Errorf(ev.attrPath("event.timestamp"), "invalid timestamp %q: expected RFC 3339", ts)
			}
		}
	}
	if ev.time == 0 {
		ev.time = otelTime(d, m, p, "observedTimeUnixNano")
	}
	return ev
}

// logInt reads an integer attribute, which OTLP carries as an intValue
// and Codex, formatting every value, as a decimal string.
func logInt(d *trace.Fields, ev *logEvent, key string) (int64, bool) {
	switch v := ev.attrs[key].(type) {
	case nil:
		return 0, false
	case int64:
		return v, true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), true
		}
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n, true
		}
	}
	d.Errorf(ev.attrPath(key), "%s: expected an integer, got %s", key, attrText(ev.attrs[key]))
	return 0, false
}

// logFloat reads a number attribute (a cost), given as a double, an
// integer or a decimal string.
func logFloat(d *trace.Fields, ev *logEvent, key string) (float64, bool) {
	switch v := ev.attrs[key].(type) {
	case nil:
		return 0, false
	case float64:
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v, true
		}
	case int64:
		return float64(v), true
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
	}
	d.Errorf(ev.attrPath(key), "%s: expected a number, got %s", key, attrText(ev.attrs[key]))
	return 0, false
}

// logBool reads a boolean attribute, given as a boolValue or, as both
// agents write success, the string "true" or "false".
func logBool(d *trace.Fields, ev *logEvent, key string) (value, ok bool) {
	switch v := ev.attrs[key].(type) {
	case nil:
		return false, false
	case bool:
		return v, true
	case string:
		switch v {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	d.Errorf(ev.attrPath(key), "%s: expected true or false, got %s", key, attrText(ev.attrs[key]))
	return false, false
}

func attrText(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return trace.TypeName(v)
}

// logJSON parses an attribute that holds JSON as a string (Claude Code's
// tool_input and tool_parameters, Codex's arguments). ok is false, and
// nothing is reported, when the string is not JSON; a JSON document with
// a repeated member name is reported.
func logJSON(d *trace.Fields, ev *logEvent, key, text string) (v any, ok bool) {
	if v, ok := parseJSONText(text); ok {
		return v, true
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	// Valid JSON that parseJSONText refused has a duplicate key.
	if dups := textDuplicates(text, d.File, d.Line, ev.attrPath(key)); len(dups) > 0 {
		d.Errs = append(d.Errs, dups...)
		return nil, false
	}
	return v, true
}

// logTurn is one model call of a session and the tool calls it made.
type logTurn struct {
	usage turnUsage
	cost  float64
	calls []*normalize.Call
}

// logTrace builds the trace of one session, or nil when it has no tool
// call; problems come back with their record's position.
func logTrace(id string, evs []*logEvent, file string, actions func(normalize.Call) []trace.Action) (*trace.Trace, trace.ErrorList) {
	slices.SortStableFunc(evs, func(a, b *logEvent) int {
		if a.time != b.time {
			if a.time < b.time {
				return -1
			}
			return 1
		}
		if a.seq != b.seq {
			if a.seq < b.seq {
				return -1
			}
			return 1
		}
		return a.order - b.order
	})
	var errs trace.ErrorList
	var calls []*normalize.Call
	var turns []*logTurn
	var open []*normalize.Call // Codex calls not yet closed by a response
	agent := evs[0].agent
	meta := map[string]any{"agent": agent, "session_id": id}
	if svc, _ := evs[0].resource["service.name"].(string); svc != "" {
		meta["service"] = svc
	}
	usage := &trace.Usage{}
	var goal string
	var first, last uint64
	for i, ev := range evs {
		d := &trace.Fields{File: file, Line: ev.line}
		if ev.time != 0 {
			if first == 0 {
				first = ev.time
			}
			last = max(last, ev.time)
		}
		model := ev.str("model")
		if model != "" {
			if _, ok := meta["model"]; !ok {
				meta["model"] = model
			}
		}
		switch ev.name {
		case "claude_code.tool_result", "codex.tool_result", "gemini_cli.tool_call":
			c := logCall(d, ev, id, i)
			if c == nil {
				break
			}
			calls = append(calls, c)
			switch {
			case agent == "codex":
				open = append(open, c)
			case len(turns) > 0:
				turns[len(turns)-1].calls = append(turns[len(turns)-1].calls, c)
			}
		case "claude_code.api_request":
			t := &logTurn{usage: turnUsage{model: model}}
			in, _ := logInt(d, ev, "input_tokens")
			cr, _ := logInt(d, ev, "cache_read_tokens")
			cc, _ := logInt(d, ev, "cache_creation_tokens")
			out, _ := logInt(d, ev, "output_tokens")
			ms, _ := logInt(d, ev, "duration_ms")
			t.usage.input, t.usage.output, t.usage.wallMS = in+cr+cc, out, max(ms, 0)
			t.cost, _ = logFloat(d, ev, "cost_usd")
			turns = append(turns, t)
		case "codex.sse_event":
			if ev.str("event.kind") != "response.completed" || ev.attrs["input_token_count"] == nil {
				break
			}
			t := &logTurn{usage: turnUsage{model: model}}
			t.usage.input, _ = logInt(d, ev, "input_token_count")
			t.usage.output, _ = logInt(d, ev, "output_token_count")
			t.calls, open = open, nil
			turns = append(turns, t)
		case "gemini_cli.api_response":
			t := &logTurn{usage: turnUsage{model: model}}
			in, _ := logInt(d, ev, "input_token_count")
			out, _ := logInt(d, ev, "output_token_count")
			th, _ := logInt(d, ev, "thoughts_token_count")
			ms, _ := logInt(d, ev, "duration_ms")
			t.usage.input, t.usage.output, t.usage.wallMS = in, out+th, max(ms, 0)
			turns = append(turns, t)
		case "claude_code.user_prompt", "codex.user_prompt", "gemini_cli.user_prompt":
			if p := strings.TrimSpace(ev.str("prompt")); goal == "" && p != "" && p != "[REDACTED]" {
				goal = p
			}
		}
		errs = append(errs, d.Errs...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if len(calls) == 0 {
		return nil, nil
	}
	for _, t := range turns {
		usage.ModelCalls++
		usage.InputTokens += t.usage.input
		usage.OutputTokens += t.usage.output
		usage.WallMS += t.usage.wallMS
		usage.TotalCostUSD += t.cost
		if len(t.calls) == 0 {
			continue
		}
		for i, c := range splitCost(t.usage, len(t.calls)) {
			if i == 0 {
				c.TotalCostUSD = t.cost
			}
			t.calls[i].Cost = c
		}
	}
	if goal != "" {
		meta["goal"] = goal
	}
	var acts actionList
	for _, c := range calls {
		if c.DurationMS != nil {
			usage.WallMS += *c.DurationMS
		}
		acts.add(actions(*c))
	}
	t := &trace.Trace{Version: trace.SchemaVersion, ID: id, Usage: usage, Metadata: meta}
	if first != 0 {
		t.StartedAt, t.FinishedAt = nanoTime(first), nanoTime(last)
	}
	t.Actions = acts.actions()
	t.Origin.Line = evs[0].line
	for _, ev := range evs {
		t.Origin.Line = min(t.Origin.Line, ev.line)
	}
	return t, nil
}

// logCall converts a tool_result event into the normalization table's
// Call, or returns nil after reporting why it cannot.
func logCall(d *trace.Fields, ev *logEvent, session string, i int) *normalize.Call {
	nameKey := "tool_name"
	if ev.agent == "gemini-cli" {
		nameKey = "function_name"
	}
	c := &normalize.Call{Tool: ev.str(nameKey)}
	if c.Tool == "" {
		d.Errorf(trace.Member(ev.path, "attributes"), "%s event names no tool (%s)", ev.name, nameKey)
		return nil
	}
	c.ID = ev.str("tool_use_id")
	if c.ID == "" {
		c.ID = ev.str("call_id")
	}
	if c.ID == "" {
		// Older versions log no call id: the event's place in its
		// session names it.
		c.ID = session + ".tool-" + strconv.Itoa(i+1)
	}
	if ev.time != 0 {
		c.Timestamp = nanoTime(ev.time)
	}
	if ms, ok := logInt(d, ev, "duration_ms"); ok && ms >= 0 {
		c.DurationMS = &ms
	}
	if ok, present := logBool(d, ev, "success"); present && !ok {
		c.IsError = true
	}
	switch ev.agent {
	case "claude-code":
		claudeLogArgs(d, ev, c)
		if e := ev.str("error"); e != "" {
			c.Result = e
			// A failed Bash call's error is its result, which starts
			// with "Exit code N" as in Claude Code's session logs.
			if rest, ok := strings.CutPrefix(e, "Exit code "); ok {
				digits, _, _ := strings.Cut(rest, "\n")
				if n, err := strconv.Atoi(strings.TrimSpace(digits)); err == nil {
					c.ExitCode = &n
				}
			}
		}
	case "gemini-cli":
		if a, ok := ev.attrs["function_args"].(string); ok {
			v, ok := logJSON(d, ev, "function_args", a)
			if m, isObj := v.(map[string]any); ok && isObj {
				c.Args = m
			} else {
				d.Errorf(ev.attrPath("function_args"), "function_args is not a JSON object")
			}
		}
		if e := ev.str("error"); e != "" {
			c.Result = e
		}
	case "codex":
		if a, ok := ev.attrs["arguments"].(string); ok {
			if v, ok := logJSON(d, ev, "arguments", a); ok {
				if m, ok := v.(map[string]any); ok {
					c.Args = m
				}
			}
			if c.Args == nil {
				// A custom tool (apply_patch) takes its input as written.
				c.Args = map[string]any{"input": a}
			}
		}
		if out, ok := ev.attrs["output"].(string); ok {
			c.Result = out
			if code, ok := codexExitHeader(out); ok {
				c.ExitCode = &code
			}
		}
	}
	if c.Args == nil {
		c.Args = map[string]any{}
	}
	return c
}

// claudeLogArgs sets the arguments of a Claude Code tool call: its input
// when logged (tool_input), else the parameters Claude Code picks out of
// it (tool_parameters), whose full_command is a Bash call's command. An
// MCP tool, logged as tool_name mcp_tool, gets the name Claude Code's own
// logs give it: mcp__<server>__<tool>.
func claudeLogArgs(d *trace.Fields, ev *logEvent, c *normalize.Call) {
	object := func(key string) map[string]any {
		text, ok := ev.attrs[key].(string)
		if !ok || text == "" {
			return nil
		}
		v, ok := logJSON(d, ev, key, text)
		m, isObj := v.(map[string]any)
		if !ok || !isObj {
			d.Errorf(ev.attrPath(key), "%s is not a JSON object", key)
			return nil
		}
		return m
	}
	params := object("tool_parameters")
	if server, _ := params["mcp_server_name"].(string); server != "" {
		if tool, _ := params["mcp_tool_name"].(string); tool != "" {
			c.Tool = "mcp__" + server + "__" + tool
		}
	}
	if input := object("tool_input"); input != nil {
		c.Args = input
		return
	}
	if params == nil {
		return
	}
	args := make(map[string]any, len(params))
	for k, v := range params {
		switch k {
		case "bash_command", "full_command", "mcp_server_name", "mcp_tool_name":
		default:
			args[k] = v
		}
	}
	if cmd, ok := params["full_command"].(string); ok {
		args["command"] = cmd
	} else if cmd, ok := params["bash_command"].(string); ok {
		args["command"] = cmd
	}
	c.Args = args
}
