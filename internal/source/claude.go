package source

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Claude is the SessionAdapter for Claude Code session logs
// (~/.claude/projects/<project>/<session>.jsonl): one JSON record per line,
// each with a "type".
//
// "user" and "assistant" records carry a "message" in the Anthropic
// Messages shape, plus "sessionId", "uuid", "parentUuid", "timestamp",
// "cwd", "gitBranch", "version" and "isSidechain". An assistant message's
// content blocks include "tool_use" blocks (id, name, input); the result
// comes back in a later user record as a "tool_result" block (tool_use_id,
// content, is_error), often with the tool's structured result beside it in
// "toolUseResult". One API response may be written as several assistant
// records that share message.id, one block each; its usage is repeated on
// each and counted once.
//
// Every session (sessionId) of a file becomes one trace with the session
// id as its id, and every tool_use one normalize.Call. Subagent turns
// ("isSidechain": true) are kept and marked with metadata sidechain=true. A
// file whose records are all sidechain records is a subagent's own log
// (agent-*.jsonl), which repeats its parent's sessionId: its trace id is
// "<sessionId>.agent-<agentId>" (or "<sessionId>.sidechain" without an
// agentId), so that it does not collide with the parent's trace.
//
// "summary" records (summary, leafUuid) name a conversation; the summary
// whose leaf is in a session becomes its metadata.summary. "system"
// records, meta records ("isMeta": true, such as the caveat before a local
// command), "file-history-snapshot" and the other bookkeeping records
// hold no tool call and are passed over. A record of an unknown type is
// passed over too, unless its message holds tool_use blocks, which would
// be actions lost without a word: that is an error.
type Claude struct{}

// Name returns "claude-code".
func (Claude) Name() string { return "claude-code" }

// DetectRecord reports whether doc is a Claude Code log record: a "user",
// "assistant" or bookkeeping record ("system", "permission-mode",
// "progress", "attachment"… see claudeBookkeeping) with a "sessionId"
// member, a "summary" with a "leafUuid", or a "file-history-snapshot".
// The loader asks it about each of a file's first records (a log may
// start with a record of a type added since). It does not look at the
// member's types, so that a malformed first record is reported by the
// decoder at its path instead of as a document of no known format.
func (Claude) DetectRecord(doc map[string]any) bool {
	if _, ok := doc["payload"]; ok {
		return false
	}
	if _, ok := doc["actions"]; ok {
		return false
	}
	typ, _ := doc["type"].(string)
	switch {
	case typ == "user", typ == "assistant", claudeBookkeeping[typ] && typ != "summary" && typ != "file-history-snapshot":
		_, ok := doc["sessionId"]
		return ok
	}
	switch typ {
	case "summary":
		_, ok := doc["leafUuid"]
		return ok
	case "file-history-snapshot":
		_, ok := doc["snapshot"]
		return ok
	}
	return false
}

// claudeShape is what decodeClaude reads of a record; ParseShaped leaves
// out the rest. The members a log carries most of, and that it never
// reads, are the tool's structured output in toolUseResult (a Read's
// file, an Edit's original file and patch, a command's stdout again), the
// model's thinking blocks, and request and parent ids. The tool_result
// content is kept whole: it is the action's output. A member read only for
// its type (stdout, which tells a finished command) or presence
// (backgroundTaskId) is kept as an empty value of its type. What is kept
// must cover every member decodeClaudeSession, claudeToolResult and
// holdsToolUse read, or a log would decode differently. Record uuids and
// timestamps are unique: the parser does not look for them among the
// strings it shares. (Tool use ids are not: each comes again with its
// result, and small token counts repeat.)
var claudeShape = &trace.Shape{Only: true, Members: map[string]*trace.Shape{
	"type": nil, "sessionId": nil, "leafUuid": unique, "summary": nil,
	"timestamp": unique, "isSidechain": nil, "uuid": unique, "agentId": nil,
	"cwd": nil, "gitBranch": nil, "version": nil, "costUSD": nil, "isMeta": nil,
	"message": {Only: true, Members: map[string]*trace.Shape{
		"id": nil, "model": nil,
		"usage": {Only: true, Members: map[string]*trace.Shape{
			"input_tokens": nil, "cache_creation_input_tokens": nil,
			"cache_read_input_tokens": nil, "output_tokens": nil,
		}},
		"content": {Elems: &trace.Shape{Only: true, Members: map[string]*trace.Shape{
			"type": nil, "id": nil, "name": nil, "input": nil, "text": nil,
			"tool_use_id": nil, "is_error": nil, "content": nil,
		}}},
	}},
	"toolUseResult": {Only: true, Members: map[string]*trace.Shape{
		"exitCode": nil, "exit_code": nil, "interrupted": nil,
		"durationMs": nil, "totalDurationMs": nil,
		"stdout": {Stub: true}, "backgroundTaskId": {Stub: true},
	}},
}}

func (Claude) recordShape() *trace.Shape { return claudeShape }

// claudeBookkeeping are the record types that never hold a tool call:
// the session's settings, titles and links, queued prompts, hook
// progress, attachments the harness adds to the context. They are passed
// over without a note; a record of a type not listed here is passed over
// with one (NoteUnknownRecord), so that a summary shows what a new
// version of Claude Code writes that is not read.
var claudeBookkeeping = map[string]bool{
	"system": true, "summary": true, "file-history-snapshot": true,
	"queue-operation": true, "progress": true, "permission-mode": true,
	"custom-title": true, "ai-title": true, "teleported-from": true,
	"last-prompt": true, "attachment": true, "pr-link": true,
	"agent-name": true,
}

// notes returns a note for each record of a type Claude does not read,
// and one for a file without a session: Claude Code leaves files of
// summaries and file-history snapshots alone, which name no session.
func (Claude) notes(records []Record, file string) []Note {
	var out []Note
	session := false
	for _, r := range records {
		if sid, _ := r.Doc["sessionId"].(string); sid != "" {
			session = true
		}
	}
	if !session && len(records) > 0 {
		out = append(out, Note{Line: records[0].Line, Code: NoteEmpty,
			Message: fmt.Sprintf("no session: its %d records name none (summaries, file-history snapshots)", len(records))})
	}
	for _, r := range records {
		typ, ok := r.Doc["type"].(string)
		if !ok || typ == "user" || typ == "assistant" || claudeBookkeeping[typ] {
			continue
		}
		out = append(out, Note{
			Line: r.Line, Code: NoteUnknownRecord, Detail: typ,
			Message: fmt.Sprintf("record of unknown type %q", typ),
		})
	}
	return out
}

// claudeCall is a tool_use on its way to becoming a normalize.Call.
type claudeCall struct {
	call     normalize.Call
	turn     *claudeTurn
	hasRes   bool
	resultTS string
}

// claudeUse is where a tool_use id was first met, and its call.
type claudeUse struct {
	line int
	call *claudeCall
}

// claudeTurn is one model response: the records that share a message.id.
type claudeTurn struct {
	usage turnUsage
	cost  float64
	calls []*claudeCall
}

// claudeSession gathers the records of one sessionId.
type claudeSession struct {
	id   string
	recs []Record
}

// DecodeSessions converts the records of one Claude Code log file. See
// Claude for the mapping.
func (Claude) DecodeSessions(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	return decodeClaude(records, file, rules.Actions)
}

// decodeClaude is DecodeSessions with the normalization as a function, so
// that tests can see the calls it is given.
func decodeClaude(records []Record, file string, actions func(normalize.Call) []trace.Action) ([]*trace.Trace, []SkippedSession, error) {
	var errs trace.ErrorList
	var order []*claudeSession
	byID := make(map[string]*claudeSession)
	summaries := make(map[string]string) // leafUuid → summary
	// Claude Code may write a record twice (the same uuid and message,
	// when a session is resumed or a write retried); it is one event,
	// read once.
	byUUID := make(map[string]map[string]any, len(records)) // uuid → message
	for _, r := range records {
		d := &trace.Fields{File: file, Line: r.Line}
		typ := d.ReqString(r.Doc, "$", "type")
		if uuid, ok := r.Doc["uuid"].(string); ok && uuid != "" {
			msg, _ := r.Doc["message"].(map[string]any)
			if prev, seen := byUUID[uuid]; seen && reflect.DeepEqual(prev, msg) {
				continue
			}
			byUUID[uuid] = msg
		}
		var sid string
		switch typ {
		case "user", "assistant":
			sid = d.ReqString(r.Doc, "$", "sessionId")
		case "summary":
			leaf := d.OptString(r.Doc, "$", "leafUuid")
			if text := d.OptString(r.Doc, "$", "summary"); leaf != "" && text != "" {
				summaries[leaf] = text
			}
		default:
			sid = d.OptString(r.Doc, "$", "sessionId")
			if !claudeBookkeeping[typ] && holdsToolUse(r.Doc) {
				// Passed over, its calls would be lost without a
				// word, whatever session it belongs to.
				d.Errorf("$.type", "unknown record type %q holds tool_use blocks", typ)
			}
		}
		errs = append(errs, d.Errs...)
		if sid == "" {
			continue
		}
		s := byID[sid]
		if s == nil {
			s = &claudeSession{id: sid}
			byID[sid] = s
			order = append(order, s)
		}
		s.recs = append(s.recs, r)
	}

	var traces []*trace.Trace
	var skipped []SkippedSession
	for _, s := range order {
		t, sessErrs := decodeClaudeSession(s, file, summaries, actions)
		switch {
		case len(sessErrs) > 0:
			errs = append(errs, sessErrs...)
		case t == nil:
			skipped = append(skipped, SkippedSession{
				ID: s.id, Line: s.recs[0].Line, Reason: ReasonNoToolCalls,
				Message: fmt.Sprintf("claude code session %s has no tool call in its %d records", s.id, len(s.recs)),
			})
		default:
			traces = append(traces, t)
		}
	}
	return traces, skipped, errs.Err()
}

// decodeClaudeSession converts one session, or returns its problems. A
// session without tool calls gives neither.
func decodeClaudeSession(s *claudeSession, file string, summaries map[string]string, actions func(normalize.Call) []trace.Action) (*trace.Trace, trace.ErrorList) {
	var errs trace.ErrorList
	var calls []*claudeCall
	uses := make(map[string]claudeUse) // tool_use id → its first use, to catch duplicates
	pending := make(map[string]*claudeCall)
	turns := make(map[string]*claudeTurn)
	var turnOrder []*claudeTurn
	meta := map[string]any{"agent": "claude-code", "session_id": s.id}
	var goal, sideGoal, first, last, prevTS, agentID string
	var prompts, sidePrompts promptLog
	allSide := true
	unpaired := 0
	var summary string

	for _, r := range s.recs {
		d := &trace.Fields{File: file, Line: r.Line}
		doc := r.Doc
		typ, _ := doc["type"].(string)
		ts := checkTime(d, doc, "$", "timestamp")
		side := d.OptBool(doc, "$", "isSidechain")
		sidechain := side != nil && *side
		if uuid := d.OptString(doc, "$", "uuid"); uuid != "" && summaries[uuid] != "" {
			summary = summaries[uuid]
		}
		if typ == "user" || typ == "assistant" {
			if !sidechain {
				allSide = false
			}
			if a := d.OptString(doc, "$", "agentId"); a != "" && agentID == "" {
				agentID = a
			}
			for _, k := range [...]struct{ json, meta string }{{"cwd", "cwd"}, {"gitBranch", "git_branch"}, {"version", "agent_version"}} {
				if v := d.OptString(doc, "$", k.json); v != "" {
					if _, seen := meta[k.meta]; !seen {
						meta[k.meta] = v
					}
				}
			}
		}
		switch typ {
		case "assistant":
			msg := reqObject(d, doc, "$", "message")
			if msg == nil {
				break
			}
			mid := d.OptString(msg, "$.message", "id")
			model := d.OptString(msg, "$.message", "model")
			if model != "" && model != "<synthetic>" {
				if _, seen := meta["model"]; !seen {
					meta["model"] = model
				}
			}
			key := mid
			if key == "" {
				key = "line:" + strconv.Itoa(r.Line)
			}
			turn := turns[key]
			if turn == nil {
				turn = &claudeTurn{}
				turns[key] = turn
				turnOrder = append(turnOrder, turn)
				turn.usage.model = model
				if u := d.OptObject(msg, "$.message", "usage"); u != nil {
					p := "$.message.usage"
					turn.usage.cacheWrite = d.Count(u, p, "cache_creation_input_tokens")
					turn.usage.cacheRead = d.Count(u, p, "cache_read_input_tokens")
					turn.usage.input = d.Count(u, p, "input_tokens") + turn.usage.cacheWrite + turn.usage.cacheRead
					turn.usage.output = d.Count(u, p, "output_tokens")
				}
				turn.cost = d.Amount(doc, "$", "costUSD")
				if ms, ok := millisBetween(prevTS, ts); ok {
					turn.usage.wallMS = ms
				}
			}
			blocks, ok := contentBlocks(d, msg)
			if !ok {
				break
			}
			for i, b := range blocks {
				p := trace.Element("$.message.content", i)
				blk, ok := b.(map[string]any)
				if !ok {
					d.TypeError(p, "object", b)
					continue
				}
				if btype := d.ReqString(blk, p, "type"); btype != "tool_use" {
					continue
				}
				id := d.ReqString(blk, p, "id")
				name := d.ReqString(blk, p, "name")
				input := d.OptObject(blk, p, "input")
				if id == "" || name == "" {
					continue
				}
				if input == nil {
					input = map[string]any{}
				}
				if first, dup := uses[id]; dup {
					// The same call written twice is one call;
					// two calls under one id would make one of
					// them vanish.
					if first.call.call.Tool != name || !reflect.DeepEqual(first.call.call.Args, input) {
						d.Errorf(trace.Member(p, "id"), "duplicate tool_use id %q with different content (first at line %d)", id, first.line)
					}
					continue
				}
				c := &claudeCall{turn: turn, call: normalize.Call{ID: id, Tool: name, Args: input, Timestamp: ts}}
				// Files are named relative to the directory the session
				// started in, its project: the cwd of a later record
				// follows the shell's cd.
				c.call.Cwd, _ = meta["cwd"].(string)
				if sidechain {
					c.call.Metadata = map[string]any{"sidechain": true}
				}
				uses[id] = claudeUse{line: r.Line, call: c}
				calls = append(calls, c)
				turn.calls = append(turn.calls, c)
				pending[id] = c
			}
		case "user":
			msg := reqObject(d, doc, "$", "message")
			if msg == nil {
				break
			}
			isMeta := d.OptBool(doc, "$", "isMeta")
			content, present := msg["content"]
			if !present {
				d.Errorf("$.message.content", "missing required field")
				break
			}
			if text, ok := content.(string); ok {
				if isMeta == nil || !*isMeta {
					notePrompt(text, ts, sidechain, &goal, &sideGoal, &prompts, &sidePrompts)
				}
				break
			}
			blocks, ok := contentBlocks(d, msg)
			if !ok {
				break
			}
			var prompt []string
			results := 0
			for i, b := range blocks {
				p := trace.Element("$.message.content", i)
				blk, ok := b.(map[string]any)
				if !ok {
					d.TypeError(p, "object", b)
					continue
				}
				switch d.ReqString(blk, p, "type") {
				case "text":
					prompt = append(prompt, d.OptString(blk, p, "text"))
				case "tool_result":
					results++
					id := d.ReqString(blk, p, "tool_use_id")
					isErr := d.OptBool(blk, p, "is_error")
					c := pending[id]
					if c == nil {
						// The result of a call written twice
						// comes twice too.
						if _, known := uses[id]; id != "" && !known {
							unpaired++
						}
						continue
					}
					delete(pending, id)
					c.hasRes = true
					c.resultTS = ts
					c.call.IsError = isErr != nil && *isErr
					res := blk["content"]
					if text, ok := textOf(res); ok {
						res = text
					}
					c.call.Result = res
					claudeToolResult(d, doc, c, res)
				}
			}
			if results == 0 && (isMeta == nil || !*isMeta) {
				notePrompt(strings.Join(prompt, "\n"), ts, sidechain, &goal, &sideGoal, &prompts, &sidePrompts)
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
		return nil, errs
	}

	usage := &trace.Usage{}
	for _, turn := range turnOrder {
		usage.ModelCalls++
		usage.InputTokens += turn.usage.input
		usage.OutputTokens += turn.usage.output
		usage.WallMS += turn.usage.wallMS
		usage.TotalCostUSD += turn.cost
		if len(turn.calls) == 0 {
			continue
		}
		for i, c := range splitCost(turn.usage, len(turn.calls)) {
			if i == 0 {
				c.TotalCostUSD = turn.cost
			}
			turn.calls[i].call.Cost = c
		}
	}
	var acts actionList
	t := &trace.Trace{Version: trace.SchemaVersion, ID: s.id, StartedAt: first, FinishedAt: last, Usage: usage, Metadata: meta}
	for _, c := range calls {
		if !c.hasRes {
			setMeta(&c.call, "no_result", true)
		} else if ms, ok := millisBetween(c.call.Timestamp, c.resultTS); ok && c.call.DurationMS == nil {
			c.call.DurationMS = &ms
		}
		if c.call.DurationMS != nil {
			usage.WallMS += *c.call.DurationMS
		}
		acts.add(actions(c.call))
	}
	t.Actions = acts.actions()
	if allSide {
		meta["sidechain"] = true
		meta["parent_session_id"] = s.id
		if agentID != "" {
			t.ID = s.id + ".agent-" + agentID
		} else {
			t.ID = s.id + ".sidechain"
		}
		goal = sideGoal
		prompts = sidePrompts
	}
	if goal != "" {
		meta["goal"] = goal
	}
	prompts.put(meta)
	if summary != "" {
		meta["summary"] = summary
	}
	if unpaired > 0 {
		// Results whose tool_use is not in this file (a log cut short
		// at its start) have no call to belong to; say so.
		meta["unpaired_tool_results"] = unpaired
	}
	t.Origin.Line = s.recs[0].Line
	t.SourceHash = HashRecords(s.recs)
	return t, nil
}

// claudeToolResult reads what the record carrying a tool_result adds about
// the call: the structured toolUseResult (an exit code, an interruption, a
// duration) and, for a failed shell command, the "Exit code N" that Claude
// Code writes at the start of the result.
func claudeToolResult(d *trace.Fields, doc map[string]any, c *claudeCall, res any) {
	if tur, ok := doc["toolUseResult"].(map[string]any); ok {
		for _, k := range [...]string{"exitCode", "exit_code"} {
			if n := d.OptInt(tur, "$.toolUseResult", k); n != nil {
				code := int(*n)
				c.call.ExitCode = &code
			}
		}
		interrupted, _ := tur["interrupted"].(bool)
		if interrupted {
			setMeta(&c.call, "interrupted", true)
		}
		// Claude Code records no exit status for a shell command that
		// succeeded: it reports a non-zero exit as an error result that
		// starts with "Exit code N". A finished, foreground Bash result
		// that is not an error therefore exited 0.
		_, stdout := tur["stdout"].(string)
		_, background := tur["backgroundTaskId"]
		if c.call.Tool == "Bash" && stdout && !interrupted && !background && !c.call.IsError && c.call.ExitCode == nil {
			zero := 0
			c.call.ExitCode = &zero
		}
		// Tools that time themselves (web fetches, subagents) say so;
		// their figure beats the gap between two records.
		for _, k := range [...]string{"durationMs", "totalDurationMs"} {
			if n := d.OptInt(tur, "$.toolUseResult", k); n != nil {
				ms := *n
				c.call.DurationMS = &ms
			}
		}
	}
	if text, ok := res.(string); ok && c.call.ExitCode == nil && c.call.IsError {
		if rest, ok := strings.CutPrefix(text, "Exit code "); ok {
			digits := rest
			if i := strings.IndexAny(rest, "\n "); i >= 0 {
				digits = rest[:i]
			}
			if n, err := strconv.Atoi(digits); err == nil {
				c.call.ExitCode = &n
			}
		}
	}
}

// claudeNotPrompts are the starts of user records that Claude Code writes
// for the user's slash commands and their output, and for interruptions:
// text typed at the prompt but not a task.
var claudeNotPrompts = [...]string{"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>", "<local-command-stderr>", "[Request interrupted", "Caveat:",
	// What the IDE, background tasks and the ! shell escape put in the
	// user's turn, and the summary that continues a compacted session.
	"<ide_opened_file>", "<ide_selection>", "<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
	"<system-reminder>", "<user-prompt-submit-hook>", "This session is being continued from a previous conversation",
	// Claude Code's own prompt for the summary of a conversation, run as
	// a session of its own.
	"Context: This summary will be shown in a list"}

// claudeWarmup is the whole prompt of the subagent sessions Claude Code
// starts to warm its cache: not a task anyone asked for.
const claudeWarmup = "Warmup"

// notePrompt keeps text as the session's goal, or as a subagent's goal
// when the record is a sidechain, if it is the first real prompt, and
// logs every real prompt with its time.
func notePrompt(text, ts string, sidechain bool, goal, sideGoal *string, prompts, sidePrompts *promptLog) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	for _, p := range claudeNotPrompts {
		if strings.HasPrefix(text, p) {
			return
		}
	}
	if text == claudeWarmup {
		return
	}
	target, log := goal, prompts
	if sidechain {
		target, log = sideGoal, sidePrompts
	}
	if *target == "" {
		*target = text
	}
	log.add(ts, text)
}

// contentBlocks returns message.content as an array of blocks; a string
// content holds none. Any other type is a problem.
func contentBlocks(d *trace.Fields, msg map[string]any) ([]any, bool) {
	v, present := msg["content"]
	switch c := v.(type) {
	case []any:
		return c, true
	case string:
		return nil, true
	case nil:
		if present {
			d.TypeError("$.message.content", "string or array", v)
		}
		return nil, false
	}
	d.TypeError("$.message.content", "string or array", v)
	return nil, false
}

// holdsToolUse reports whether a record's message holds a tool_use block.
func holdsToolUse(doc map[string]any) bool {
	msg, _ := doc["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	for _, b := range blocks {
		if blk, ok := b.(map[string]any); ok && blk["type"] == "tool_use" {
			return true
		}
	}
	return false
}

// setMeta sets a metadata member of a call.
func setMeta(c *normalize.Call, key string, v any) {
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	c.Metadata[key] = v
}
