package source

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Gemini is the SessionAdapter for the transcripts Gemini CLI prints with
// --output-format stream-json: one JSON event per line, each with a
// "type" and a "timestamp".
//
//   - init (session_id, model) starts a run: the session id is the trace
//     id. A file may hold several runs appended one after the other.
//   - message (role user or assistant, content, delta): the first user
//     message is the goal; assistant messages arrive in delta chunks.
//   - tool_use (tool_name, tool_id, parameters) is one tool call, and
//     tool_result (tool_id, status "success" or "error", output, error
//     {type, message}) its outcome.
//   - result (status, error, stats {input_tokens, output_tokens, …,
//     models {name: {…}}}) closes the run with its token totals.
//   - error (severity, message) is a warning the CLI printed; it holds no
//     tool call and is passed over.
//
// The stream reports tokens only for the whole run, so they are divided
// evenly over its tool calls (see splitCost); each model turn (the tool
// uses between two results) is one model call, carried by its first tool
// call with the time the model took to answer. A shell command's exit code
// is read from the "Exit Code: N" line of its output.
type Gemini struct{}

// Name returns "gemini-cli".
func (Gemini) Name() string { return "gemini-cli" }

// DetectRecord reports whether doc is a stream-json event: an init with
// a session_id and a model, or a tool_use or tool_result with its
// tool_id. Claude Code's stream-json, which also has a type member,
// writes its init as {"type": "system", "subtype": "init"} and its tool
// calls inside messages, so neither shape is mistaken for the other.
func (Gemini) DetectRecord(doc map[string]any) bool {
	has := func(k string) bool { _, ok := doc[k]; return ok }
	switch doc["type"] {
	case "init":
		return has("session_id") && has("model") && !has("subtype")
	case "tool_use":
		return has("tool_id") && has("tool_name")
	case "tool_result":
		return has("tool_id") && has("status")
	}
	return false
}

// geminiCall is a tool call on its way to becoming a normalize.Call.
type geminiCall struct {
	call     normalize.Call
	turn     int // index of the model turn that made the call
	hasRes   bool
	resultTS string
}

// DecodeSessions converts the events of one stream-json file. See Gemini
// for the mapping.
func (Gemini) DecodeSessions(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	return decodeGeminiStream(records, file, rules.Actions)
}

// decodeGeminiStream is DecodeSessions with the normalization as a
// function, so that tests can see the calls it is given.
func decodeGeminiStream(records []Record, file string, actions func(normalize.Call) []trace.Action) ([]*trace.Trace, []SkippedSession, error) {
	var errs trace.ErrorList
	var runs [][]Record
	for _, r := range records {
		if r.Doc["type"] == "init" {
			runs = append(runs, nil)
		} else if len(runs) == 0 {
			typ, _ := r.Doc["type"].(string)
			errs = append(errs, &trace.Error{File: file, Line: r.Line, Path: "$.type",
				Msg: fmt.Sprintf("%s event before the init event that starts a stream-json run", strconv.Quote(typ))})
			continue
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], r)
	}
	var traces []*trace.Trace
	var skipped []SkippedSession
	for _, run := range runs {
		t, id, runErrs := decodeGeminiRun(run, file, actions)
		switch {
		case len(runErrs) > 0:
			errs = append(errs, runErrs...)
		case t == nil:
			skipped = append(skipped, SkippedSession{
				ID: id, Line: run[0].Line, Reason: ReasonNoToolCalls,
				Message: fmt.Sprintf("gemini cli run %s has no tool call in its %d events", id, len(run)),
			})
		default:
			traces = append(traces, t)
		}
	}
	return traces, skipped, errs.Err()
}

// decodeGeminiRun converts the events of one run, from its init on, or
// returns its problems. A run without tool calls gives neither.
func decodeGeminiRun(recs []Record, file string, actions func(normalize.Call) []trace.Action) (*trace.Trace, string, trace.ErrorList) {
	var errs trace.ErrorList
	var calls []*geminiCall
	pending := make(map[string]*geminiCall)
	seen := make(map[string]int) // tool_id → line
	meta := map[string]any{"agent": "gemini-cli"}
	usage := &trace.Usage{}
	var id, model, goal, first, last, prevTS, turnStart string
	var prompts promptLog
	var total turnUsage
	var turnWall []int64 // per turn, the time the model took to answer
	inTurn := false
	unpaired := 0

	for _, r := range recs {
		d := &trace.Fields{File: file, Line: r.Line}
		doc := r.Doc
		typ := d.ReqString(doc, "$", "type")
		ts := checkTime(d, doc, "$", "timestamp")
		// A turn starts with the model's first output after the prompt or
		// after the results it was sent; its wall time runs from there.
		startTurn := func() {
			if !inTurn {
				inTurn = true
				turnStart = prevTS
				turnWall = append(turnWall, -1)
			}
		}
		switch typ {
		case "init":
			id = d.ReqString(doc, "$", "session_id")
			model = d.OptString(doc, "$", "model")
			meta["session_id"] = id
			if model != "" {
				meta["model"] = model
			}
		case "message":
			role := d.ReqString(doc, "$", "role")
			content := d.OptString(doc, "$", "content")
			switch role {
			case "user":
				inTurn = false
				if goal == "" {
					goal = strings.TrimSpace(content)
				}
				prompts.add(ts, content)
			case "assistant":
				startTurn()
			}
		case "tool_use":
			startTurn()
			name := d.ReqString(doc, "$", "tool_name")
			tid := d.ReqString(doc, "$", "tool_id")
			params := reqObject(d, doc, "$", "parameters")
			if name == "" || tid == "" {
				break
			}
			if at, dup := seen[tid]; dup {
				d.Errorf("$.tool_id", "duplicate tool_id %q (first at line %d)", tid, at)
				break
			}
			seen[tid] = r.Line
			if params == nil {
				params = map[string]any{}
			}
			turn := len(turnWall) - 1
			if turnWall[turn] < 0 {
				turnWall[turn] = 0
				if ms, ok := millisBetween(turnStart, ts); ok {
					turnWall[turn] = ms
				}
			}
			c := &geminiCall{turn: turn, call: normalize.Call{ID: tid, Tool: name, Args: params, Timestamp: ts}}
			calls = append(calls, c)
			pending[tid] = c
		case "tool_result":
			inTurn = false
			tid := d.ReqString(doc, "$", "tool_id")
			status := d.ReqString(doc, "$", "status")
			if status != "" && status != "success" && status != "error" {
				d.Errorf("$.status", "unknown status %q: expected \"success\" or \"error\"", status)
			}
			output := d.OptString(doc, "$", "output")
			var errMsg string
			if e := d.OptObject(doc, "$", "error"); e != nil {
				errMsg = d.OptString(e, "$.error", "message")
			}
			c := pending[tid]
			if c == nil {
				if tid != "" {
					unpaired++
				}
				break
			}
			delete(pending, tid)
			c.hasRes, c.resultTS = true, ts
			c.call.IsError = status == "error"
			c.call.Result = output
			if output == "" && errMsg != "" {
				c.call.Result = errMsg
			}
			if code, ok := geminiExitCode(output); ok {
				c.call.ExitCode = &code
			}
		case "result":
			inTurn = false
			if status := d.OptString(doc, "$", "status"); status != "" && status != "success" {
				meta["result_status"] = status
			}
			if stats := d.OptObject(doc, "$", "stats"); stats != nil {
				total.input = d.Count(stats, "$.stats", "input_tokens")
				total.output = d.Count(stats, "$.stats", "output_tokens")
				if models := d.OptObject(stats, "$.stats", "models"); len(models) == 1 {
					for name := range models {
						model = name
					}
				}
			}
		case "error", "":
		default:
			if _, ok := doc["tool_id"]; ok {
				d.Errorf("$.type", "unknown event type %q holds a tool_id", typ)
			}
		}
		errs = append(errs, d.Errs...)
		if ts != "" {
			if first == "" {
				first = ts
			}
			last = ts
			prevTS = ts
		}
	}
	if len(errs) > 0 || len(calls) == 0 {
		return nil, id, errs
	}

	total.model = model
	usage.ModelCalls = int64(len(turnWall))
	usage.InputTokens, usage.OutputTokens = total.input, total.output
	for _, ms := range turnWall {
		usage.WallMS += max(ms, 0)
	}
	shares := splitCost(total, len(calls))
	prevTurn := -1
	for i, c := range calls {
		cost := shares[i]
		cost.ModelCalls, cost.WallMS = 0, 0
		if c.turn != prevTurn {
			cost.ModelCalls, cost.WallMS = 1, max(turnWall[c.turn], 0)
			prevTurn = c.turn
		}
		c.call.Cost = cost
	}
	if model != "" {
		meta["model"] = model
	}
	if goal != "" {
		meta["goal"] = goal
	}
	prompts.put(meta)
	if unpaired > 0 {
		meta["unpaired_tool_results"] = unpaired
	}
	var acts actionList
	for _, c := range calls {
		if !c.hasRes {
			setMeta(&c.call, "no_result", true)
		} else if ms, ok := millisBetween(c.call.Timestamp, c.resultTS); ok {
			c.call.DurationMS = &ms
			usage.WallMS += ms
		}
		acts.add(actions(c.call))
	}
	t := &trace.Trace{Version: trace.SchemaVersion, ID: id, StartedAt: first, FinishedAt: last, Usage: usage, Metadata: meta}
	t.Actions = acts.actions()
	t.Origin.Line = recs[0].Line
	t.SourceHash = HashRecords(recs)
	return t, id, nil
}

// geminiExitCode reads the exit code Gemini CLI's shell tool reports in
// its output, on a line "Exit Code: N" ("(none)" when the command was
// killed by a signal).
func geminiExitCode(text string) (int, bool) {
	for line := range strings.Lines(text) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "Exit Code: "); ok {
			if n, err := strconv.Atoi(rest); err == nil {
				return n, true
			}
		}
	}
	return 0, false
}

// GeminiChat is the SessionAdapter for the chat files Gemini CLI keeps of
// every session under ~/.gemini/tmp/<project hash>/chats/. A chat is one
// session, the session id its trace id, written in one of two layouts:
//
//   - session-*.json, one document {sessionId, projectHash, startTime,
//     lastUpdated, messages, summary?, kind?};
//   - session-*.jsonl (and, for a subagent, <parent id>/<id>.jsonl), an
//     append-only log: a first record {sessionId, projectHash, startTime,
//     lastUpdated, kind?, directories?}, then one record per message
//     written (a message written again after an update replaces the
//     earlier copy, in its place), {"$set": {…}} updating the session's
//     members (messages among them, which replace the whole list), and
//     {"$rewindTo": id} dropping the message id and every later one, as
//     the user rewound the conversation.
//
// A message is {id, timestamp, type, content} with type user, gemini,
// info, error or warning. A gemini message carries the model, its tokens
// {input, output, cached, thoughts, tool, total}, and the toolCalls it
// made, each {id, name, args, result, status, timestamp}: result is the
// list of parts sent back to the model, whose functionResponse.response
// holds the tool's output (or error). A message's tokens are divided over
// its tool calls; thoughts are billed as output. The first user message is
// the goal. Tool calls dropped by a rewind are counted in the trace's
// metadata rewound_tool_calls, not kept: the chat no longer holds them.
type GeminiChat struct{}

// Name returns "gemini-cli-chat".
func (GeminiChat) Name() string { return "gemini-cli-chat" }

// DetectRecord reports whether doc starts a Gemini CLI chat file: an
// object with a sessionId and a projectHash.
func (GeminiChat) DetectRecord(doc map[string]any) bool {
	_, sid := doc["sessionId"]
	_, ph := doc["projectHash"]
	return sid && ph
}

// chatMessage is one message of a chat and where it was read.
type chatMessage struct {
	doc  any
	line int
	path string
}

// DecodeSessions converts one chat file. See GeminiChat for the mapping.
func (GeminiChat) DecodeSessions(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	return decodeGeminiChat(records, file, rules.Actions)
}

func decodeGeminiChat(records []Record, file string, actions func(normalize.Call) []trace.Action) ([]*trace.Trace, []SkippedSession, error) {
	var errs trace.ErrorList
	session := map[string]any{}
	var msgs []chatMessage
	byID := map[string]int{} // message id → index in msgs
	rewound := 0
	setMessages := func(d *trace.Fields, v any, p string, line int) {
		arr, ok := v.([]any)
		if !ok {
			d.TypeError(p, "array", v)
			return
		}
		msgs, byID = msgs[:0], map[string]int{}
		for i, m := range arr {
			msgs = append(msgs, chatMessage{doc: m, line: line, path: trace.Element(p, i)})
			if mm, ok := m.(map[string]any); ok {
				if mid, ok := mm["id"].(string); ok {
					byID[mid] = len(msgs) - 1
				}
			}
		}
	}
	for _, r := range records {
		d := &trace.Fields{File: file, Line: r.Line}
		doc := r.Doc
		switch {
		case doc["$rewindTo"] != nil:
			to := d.ReqString(doc, "$", "$rewindTo")
			i, ok := byID[to]
			if !ok {
				i = 0 // Gemini CLI clears the chat when the id is not in it
			}
			for _, m := range msgs[i:] {
				rewound += len(chatToolCalls(m.doc))
				if mm, ok := m.doc.(map[string]any); ok {
					if mid, ok := mm["id"].(string); ok {
						delete(byID, mid)
					}
				}
			}
			msgs = msgs[:i]
		case doc["$set"] != nil:
			set := reqObject(d, doc, "$", "$set")
			for k, v := range set {
				if k == "messages" {
					setMessages(d, v, trace.Member(trace.Member("$", "$set"), "messages"), r.Line)
					continue
				}
				session[k] = v
			}
		case doc["sessionId"] != nil && doc["projectHash"] != nil:
			for k, v := range doc {
				if k == "messages" {
					setMessages(d, v, "$.messages", r.Line)
					continue
				}
				session[k] = v
			}
		case doc["id"] != nil:
			mid, ok := doc["id"].(string)
			if !ok {
				d.TypeError("$.id", "string", doc["id"])
				break
			}
			m := chatMessage{doc: doc, line: r.Line, path: "$"}
			if i, ok := byID[mid]; ok {
				msgs[i] = m
			} else {
				byID[mid] = len(msgs)
				msgs = append(msgs, m)
			}
		default:
			d.Errorf("$", "record is neither a message (id), a session header (sessionId, projectHash), $set nor $rewindTo")
		}
		errs = append(errs, d.Errs...)
	}
	if len(records) == 0 {
		return nil, nil, nil
	}
	hd := &trace.Fields{File: file, Line: records[0].Line}
	id := hd.ReqString(session, "$", "sessionId")
	errs = append(errs, hd.Errs...)
	t, n, msgErrs := decodeChatMessages(msgs, id, session, file, actions)
	errs = append(errs, msgErrs...)
	if len(errs) > 0 {
		return nil, nil, errs.Err()
	}
	if t == nil {
		return nil, []SkippedSession{{
			ID: id, Line: records[0].Line, Reason: ReasonNoToolCalls,
			Message: fmt.Sprintf("gemini cli chat %s has no tool call in its %d messages", id, n),
		}}, nil
	}
	if rewound > 0 {
		t.Metadata["rewound_tool_calls"] = rewound
	}
	t.Origin.Line = records[0].Line
	return []*trace.Trace{t}, nil, nil
}

// chatToolCalls returns the toolCalls of a message, when it has any.
func chatToolCalls(msg any) []any {
	m, _ := msg.(map[string]any)
	calls, _ := m["toolCalls"].([]any)
	return calls
}

// decodeChatMessages converts the messages of a chat into a trace, or
// returns their problems; n is the number of messages.
func decodeChatMessages(msgs []chatMessage, id string, session map[string]any, file string, actions func(normalize.Call) []trace.Action) (_ *trace.Trace, n int, _ trace.ErrorList) {
	var errs trace.ErrorList
	var calls []normalize.Call
	seen := map[string]string{} // tool call id → where it was first read
	meta := map[string]any{"agent": "gemini-cli", "session_id": id}
	if ph, ok := session["projectHash"].(string); ok && ph != "" {
		meta["project_hash"] = ph
	}
	if kind, _ := session["kind"].(string); kind == "subagent" {
		// A subagent's chat is chats/<parent session id>/<id>.jsonl.
		meta["sidechain"] = true
		if dir := path.Dir(file); path.Base(dir) != "chats" && dir != "." {
			meta["parent_session_id"] = path.Base(dir)
		}
	}
	if s, ok := session["summary"].(string); ok && s != "" {
		meta["summary"] = s
	}
	usage := &trace.Usage{}
	var goal, first, last, prevTS string
	var prompts promptLog
	for _, m := range msgs {
		d := &trace.Fields{File: file, Line: m.line}
		p := m.path
		msg, ok := m.doc.(map[string]any)
		if !ok {
			d.TypeError(p, "object", m.doc)
			errs = append(errs, d.Errs...)
			continue
		}
		typ := d.ReqString(msg, p, "type")
		ts := checkTime(d, msg, p, "timestamp")
		switch typ {
		case "user":
			if text, ok := partsText(msg["content"]); ok {
				if goal == "" {
					goal = strings.TrimSpace(text)
				}
				prompts.add(ts, text)
			}
		case "gemini":
			chatModelMessage(d, msg, m, meta, usage, prevTS, ts, seen, &calls)
		case "info", "error", "warning", "":
		default:
			// Forks of Gemini CLI write the same chats with their own
			// name for the model's messages ("bob-shell"); such a
			// message is the model's when it holds what only the model's
			// messages hold.
			if isModelMessage(msg) {
				chatModelMessage(d, msg, m, meta, usage, prevTS, ts, seen, &calls)
			}
		}
		errs = append(errs, d.Errs...)
		if ts != "" {
			if first == "" {
				first = ts
			}
			last = ts
			prevTS = ts
		}
	}
	if len(errs) > 0 || len(calls) == 0 {
		return nil, len(msgs), errs
	}
	if goal != "" {
		meta["goal"] = goal
	}
	prompts.put(meta)
	if first == "" {
		first, _ = session["startTime"].(string)
	}
	if s, ok := session["lastUpdated"].(string); ok && s > last {
		last = s
	}
	var acts actionList
	for _, c := range calls {
		acts.add(actions(c))
	}
	t := &trace.Trace{Version: trace.SchemaVersion, ID: id, StartedAt: first, FinishedAt: last, Usage: usage, Metadata: meta}
	t.Actions = acts.actions()
	return t, len(msgs), nil
}

// isModelMessage reports whether a chat message of a type this version
// does not know is one of the model's: it made tool calls, or carries the
// model's name or its tokens.
func isModelMessage(msg map[string]any) bool {
	_, calls := msg["toolCalls"]
	_, model := msg["model"]
	_, tokens := msg["tokens"]
	return calls || model || tokens
}

// chatModelMessage reads one of the model's messages: its usage, and its
// tool calls with their share of it, appended to calls.
func chatModelMessage(d *trace.Fields, msg map[string]any, m chatMessage, meta map[string]any, usage *trace.Usage, prevTS, ts string, seen map[string]string, calls *[]normalize.Call) {
	p := m.path
	var u turnUsage
	u.model = d.OptString(msg, p, "model")
	if u.model != "" {
		if _, ok := meta["model"]; !ok {
			meta["model"] = u.model
		}
	}
	if tok := d.OptObject(msg, p, "tokens"); tok != nil {
		tp := trace.Member(p, "tokens")
		u.input = d.Count(tok, tp, "input")
		u.output = d.Count(tok, tp, "output") + d.Count(tok, tp, "thoughts")
	}
	if ms, ok := millisBetween(prevTS, ts); ok {
		u.wallMS = ms
	}
	usage.ModelCalls++
	usage.InputTokens += u.input
	usage.OutputTokens += u.output
	usage.WallMS += u.wallMS
	tcs, _ := d.OptArray(msg, p, "toolCalls")
	var turn []normalize.Call
	for i, v := range tcs {
		cp := trace.Element(trace.Member(p, "toolCalls"), i)
		c, ok := chatToolCall(d, v, cp)
		if !ok {
			continue
		}
		where := fmt.Sprintf("line %d, %s", m.line, cp)
		if at, dup := seen[c.ID]; dup {
			d.Errorf(trace.Member(cp, "id"), "duplicate tool call id %q (first at %s)", c.ID, at)
			continue
		}
		seen[c.ID] = where
		turn = append(turn, c)
	}
	for i, cost := range splitCost(u, max(len(turn), 1))[:len(turn)] {
		turn[i].Cost = cost
	}
	*calls = append(*calls, turn...)
}

// chatToolCall reads one element of a gemini message's toolCalls.
func chatToolCall(d *trace.Fields, v any, p string) (normalize.Call, bool) {
	tc, ok := v.(map[string]any)
	if !ok {
		d.TypeError(p, "object", v)
		return normalize.Call{}, false
	}
	c := normalize.Call{
		ID:        d.ReqString(tc, p, "id"),
		Tool:      d.ReqString(tc, p, "name"),
		Args:      d.OptObject(tc, p, "args"),
		Timestamp: checkTime(d, tc, p, "timestamp"),
	}
	if c.ID == "" || c.Tool == "" {
		return c, false
	}
	if c.Args == nil {
		c.Args = map[string]any{}
	}
	switch status := d.OptString(tc, p, "status"); status {
	case "success", "":
	case "error", "cancelled":
		c.IsError = true
		setMeta(&c, "status", status)
	default:
		// A call still awaiting approval or running when the chat was
		// written has no outcome yet.
		setMeta(&c, "status", status)
		setMeta(&c, "no_result", true)
	}
	if text, ok := functionOutput(tc["result"]); ok {
		c.Result = text
	} else if res, ok := tc["result"]; ok && res != nil {
		c.Result = res
	} else if disp, ok := tc["resultDisplay"].(string); ok {
		c.Result = disp
	}
	if s, ok := c.Result.(string); ok {
		if code, ok := geminiExitCode(s); ok {
			c.ExitCode = &code
		}
	}
	return c, true
}

// functionOutput returns the text a tool sent back to the model: the
// output (or error) of each functionResponse part and the text parts,
// joined with "\n". ok is false when the result holds neither.
func functionOutput(result any) (string, bool) {
	parts, ok := result.([]any)
	if !ok {
		if m, isObj := result.(map[string]any); isObj {
			parts = []any{m}
		}
	}
	var texts []string
	for _, part := range parts {
		pm, _ := part.(map[string]any)
		if fr, ok := pm["functionResponse"].(map[string]any); ok {
			resp, _ := fr["response"].(map[string]any)
			for _, k := range [...]string{"output", "error"} {
				if s, ok := resp[k].(string); ok {
					texts = append(texts, s)
				}
			}
			continue
		}
		if s, ok := pm["text"].(string); ok {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

// partsText returns the text of a message content: a string, or the
// text of its parts ({"text": …}) joined. ok is false when it holds none.
func partsText(content any) (string, bool) {
	if s, ok := content.(string); ok {
		return s, true
	}
	var texts []string
	parts, _ := content.([]any)
	for _, part := range parts {
		if pm, ok := part.(map[string]any); ok {
			if s, ok := pm["text"].(string); ok {
				texts = append(texts, s)
			}
		}
	}
	return strings.Join(texts, ""), len(texts) > 0
}
