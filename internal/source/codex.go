package source

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/normalize"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Codex is the SessionAdapter for Codex CLI rollouts
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl). Each line is an envelope
// {"timestamp", "type", "payload"}:
//
//   - session_meta starts a session: payload id (the trace id), cwd,
//     cli_version, git {commit_hash, branch, repository_url}, instructions;
//   - turn_context gives the model, cwd and policies of the turns after it;
//   - response_item holds what went to and came from the model: a message
//     (role user or assistant, content of input_text/output_text blocks), a
//     reasoning item, and the tool calls with their outputs, paired by
//     call_id: function_call (name, arguments as a JSON string) and
//     function_call_output, custom_tool_call (name, such as apply_patch,
//     and raw input) and custom_tool_call_output, local_shell_call (action
//     {command: argv}) answered by a function_call_output, and
//     web_search_call;
//   - event_msg holds the UI's events; token_count (info.last_token_usage,
//     info.total_token_usage) closes a model response, whose tokens are
//     divided over the tool calls made since the previous one, and
//     user_message gives the prompt as typed. The others (agent_message,
//     exec_command_end, agent_reasoning…) repeat what response items hold.
//
// An output is either plain text or a JSON string {"output", "metadata":
// {"exit_code", "duration_seconds"}}; the exit code and duration are taken
// from it when present. The first user message that is not one of the
// preambles Codex sends before the prompt (environment context, user
// instructions, AGENTS.md) is the goal.
//
// Rollouts written before the envelope existed start with a bare header
// {"id", "timestamp", "instructions", "git"?} followed by bare response
// items and {"record_type": "state"} markers; they are read the same way.
// A file may hold several sessions, each from its session_meta on.
type Codex struct{}

// Name returns "codex".
func (Codex) Name() string { return "codex" }

// codexEnvelopes are the record types of the enveloped layout.
var codexEnvelopes = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true,
	"turn_context": true, "compacted": true,
}

// codexItems are the response items decodeCodex reads, and those it
// knows hold nothing to read (a ghost snapshot is the git state Codex
// saves to undo a turn). Another type is noted (NoteUnknownRecord), and
// refused when its name says it is a call (see decodeCodexSession).
var codexItems = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
	"web_search_call": true, "ghost_snapshot": true,
}

// notes returns a note for each record of the enveloped layout whose type,
// or whose response item's type, Codex does not read. The events of the
// UI (event_msg) are many and change often, and repeat what response
// items hold: they are not noted.
func (Codex) notes(records []Record, file string) []Note {
	var out []Note
	legacy := len(records) > 0 && records[0].Doc["type"] == nil
	for i, r := range records {
		typ, _ := r.Doc["type"].(string)
		what := typ
		switch {
		case legacy:
			// Bare response items after the header, between state
			// markers.
			if _, state := r.Doc["record_type"]; i == 0 || state || codexItems[typ] {
				continue
			}
			what = "response_item " + typ
		case typ == "response_item":
			payload, _ := r.Doc["payload"].(map[string]any)
			ptype, _ := payload["type"].(string)
			if ptype == "" || codexItems[ptype] {
				continue
			}
			what = "response_item " + ptype
		case codexEnvelopes[typ]:
			continue
		}
		out = append(out, Note{Line: r.Line, Code: NoteUnknownRecord, Detail: what,
			Message: fmt.Sprintf("record of unknown type %q", what)})
	}
	return out
}

// DetectRecord reports whether doc is a Codex rollout record: an envelope
// of a known type with a "payload", or the header of the older layout
// (an "id", a "timestamp" and an "instructions" member, and no "type").
func (Codex) DetectRecord(doc map[string]any) bool {
	if typ, ok := doc["type"].(string); ok {
		_, payload := doc["payload"]
		return payload && codexEnvelopes[typ]
	}
	_, id := doc["id"]
	_, ts := doc["timestamp"]
	_, instr := doc["instructions"]
	_, actions := doc["actions"]
	return id && ts && instr && !actions
}

// codexPayload is what decodeCodex reads of a record's payload, whatever
// its type: the members of session_meta, turn_context, the response
// items and the token_count event. What it leaves out is what a rollout
// holds most of and never reads: session_meta's instructions, the
// reasoning items' encrypted content and summaries, the rate limits and
// reasoning token counts of token_count, the events that repeat
// a command's output (exec_command_end's stdout, stderr and formatted
// output) and turn_context's policies.
var codexPayload = map[string]*trace.Shape{
	"id": nil, "timestamp": unique, "cwd": nil, "cli_version": nil, "originator": nil, "forked_from_id": nil,
	"git": {Only: true, Members: map[string]*trace.Shape{
		"branch": nil, "commit_hash": nil, "repository_url": nil,
	}},
	"model": nil, "approval_policy": nil,
	"type": nil, "role": nil, "content": nil, "call_id": nil, "name": nil,
	"arguments": nil, "input": nil, "action": nil, "output": nil, "message": nil,
	"info": {Only: true, Members: map[string]*trace.Shape{
		"total_token_usage": codexUsage, "last_token_usage": codexUsage,
	}},
}

var codexUsage = &trace.Shape{Only: true, Members: map[string]*trace.Shape{"input_tokens": nil, "output_tokens": nil, "cached_input_tokens": nil}}

// codexShape is what decodeCodex reads of a record: the envelope and its
// payload, or, in the older layout, the payload's members at the top.
var codexShape = func() *trace.Shape {
	top := map[string]*trace.Shape{
		"payload":     {Only: true, Members: codexPayload},
		"record_type": nil,
	}
	for k, v := range codexPayload {
		top[k] = v
	}
	return &trace.Shape{Only: true, Members: top}
}()

func (Codex) recordShape() *trace.Shape { return codexShape }

// codexRecord is a record brought to the enveloped form.
type codexRecord struct {
	Record
	typ     string
	payload map[string]any
	base    string // JSON path of the payload: "$.payload", or "$" for the older layout
	ts      string
}

// codexCall is a tool call on its way to becoming a normalize.Call.
type codexCall struct {
	call     normalize.Call
	hasRes   bool
	resultTS string
}

// DecodeSessions converts the records of one rollout file. See Codex for
// the mapping.
func (Codex) DecodeSessions(records []Record, file string, rules *normalize.Rules) ([]*trace.Trace, []SkippedSession, error) {
	return decodeCodex(records, file, rules.Actions)
}

// decodeCodex is DecodeSessions with the normalization as a function, so
// that tests can see the calls it is given.
func decodeCodex(records []Record, file string, actions func(normalize.Call) []trace.Action) ([]*trace.Trace, []SkippedSession, error) {
	var errs trace.ErrorList
	var sessions [][]codexRecord
	legacy := len(records) > 0 && records[0].Doc["type"] == nil
	for i, r := range records {
		d := &trace.Fields{File: file, Line: r.Line}
		cr := codexRecord{Record: r}
		switch {
		case legacy && i == 0:
			cr.typ, cr.payload, cr.base = "session_meta", r.Doc, "$"
			cr.ts = checkTime(d, r.Doc, "$", "timestamp")
		case legacy:
			if _, ok := r.Doc["record_type"]; ok {
				continue // a state marker of the older layout
			}
			cr.typ, cr.payload, cr.base = "response_item", r.Doc, "$"
		default:
			cr.typ = d.ReqString(r.Doc, "$", "type")
			cr.ts = checkTime(d, r.Doc, "$", "timestamp")
			cr.payload = reqObject(d, r.Doc, "$", "payload")
			cr.base = "$.payload"
		}
		errs = append(errs, d.Errs...)
		if cr.payload == nil {
			continue
		}
		if cr.typ == "session_meta" {
			id, _ := cr.payload["id"].(string)
			n := len(sessions)
			// A forked rollout (and a subagent's, which forks its
			// parent's context) starts with its own session_meta and
			// goes on with the history it inherited, the parent's
			// session_meta first: a session_meta right after another
			// is that history's, not a new session of the file.
			inherited := n > 0 && onlyMeta(sessions[n-1])
			if !inherited && (n == 0 || id == "" || id != sessionID(sessions[n-1])) {
				sessions = append(sessions, nil)
			}
		} else if len(sessions) == 0 {
			errs = append(errs, &trace.Error{File: file, Line: r.Line, Path: "$.type", Msg: fmt.Sprintf("%s record before the session_meta record that starts a rollout", cr.typ)})
			continue
		}
		sessions[len(sessions)-1] = append(sessions[len(sessions)-1], cr)
	}

	var traces []*trace.Trace
	var skipped []SkippedSession
	for _, s := range sessions {
		t, n, sessErrs := decodeCodexSession(s, file, actions)
		switch {
		case len(sessErrs) > 0:
			errs = append(errs, sessErrs...)
		case t == nil:
			skipped = append(skipped, SkippedSession{
				ID: sessionID(s), Line: s[0].Line, Reason: ReasonNoToolCalls,
				Message: fmt.Sprintf("codex session %s has no tool call in its %d records", sessionID(s), n),
			})
		default:
			traces = append(traces, t)
		}
	}
	return traces, skipped, errs.Err()
}

// onlyMeta reports whether the records of s are all session_meta records.
func onlyMeta(s []codexRecord) bool {
	for _, r := range s {
		if r.typ != "session_meta" {
			return false
		}
	}
	return true
}

// sessionID returns the id of the session whose first record is s[0].
func sessionID(s []codexRecord) string {
	id, _ := s[0].payload["id"].(string)
	return id
}

// codexPreambles start the user messages Codex sends before the prompt.
var codexPreambles = [...]string{"<environment_context", "<user_instructions", "<permissions", "<INSTRUCTIONS>", "# AGENTS.md", "<user_shell_command"}

// decodeCodexSession converts one session, or returns its problems. A
// session without tool calls gives neither; n is its number of records.
func decodeCodexSession(recs []codexRecord, file string, actions func(normalize.Call) []trace.Action) (_ *trace.Trace, n int, _ trace.ErrorList) {
	var errs trace.ErrorList
	var calls, turnCalls []*codexCall
	pending := make(map[string]*codexCall)
	seen := make(map[string]int) // call_id → line
	meta := map[string]any{"agent": "codex"}
	usage := &trace.Usage{}
	var id, model, goal, typedGoal, first, last, lastInput string
	var prompts promptLog
	var prevTotal *[3]int64
	unpaired := 0

	for _, r := range recs {
		d := &trace.Fields{File: file, Line: r.Line}
		p, ts := r.base, r.ts
		switch r.typ {
		case "session_meta":
			if id != "" {
				// The session_meta of the session this one was
				// forked from, at the start of the history it
				// inherited; the copy of that history is
				// recognized by its call ids (see dropCopies).
				if parent := d.OptString(r.payload, p, "id"); parent != "" && parent != id {
					if _, ok := meta["forked_from"]; !ok {
						meta["forked_from"] = parent
					}
				}
			}
			if id == "" {
				id = d.ReqString(r.payload, p, "id")
				meta["session_id"] = id
				checkTime(d, r.payload, p, "timestamp")
				putMeta(d, meta, r.payload, p, "cwd", "cwd")
				putMeta(d, meta, r.payload, p, "cli_version", "agent_version")
				putMeta(d, meta, r.payload, p, "originator", "originator")
				putMeta(d, meta, r.payload, p, "forked_from_id", "forked_from")
				if git := d.OptObject(r.payload, p, "git"); git != nil {
					gp := trace.Member(p, "git")
					putMeta(d, meta, git, gp, "branch", "git_branch")
					putMeta(d, meta, git, gp, "commit_hash", "git_commit")
					putMeta(d, meta, git, gp, "repository_url", "git_repository")
				}
			}
		case "turn_context":
			if m := d.OptString(r.payload, p, "model"); m != "" {
				model = m
				if _, ok := meta["model"]; !ok {
					meta["model"] = m
				}
			}
			putMeta(d, meta, r.payload, p, "cwd", "cwd")
			putMeta(d, meta, r.payload, p, "approval_policy", "approval_policy")
		case "response_item":
			ptype := d.ReqString(r.payload, p, "type")
			var c *codexCall
			switch ptype {
			case "message":
				role := d.ReqString(r.payload, p, "role")
				content, _ := d.OptArray(r.payload, p, "content")
				if role == "user" {
					lastInput = ts
					if text, ok := textOf(content); ok && goal == "" && !isPreamble(text) {
						goal = strings.TrimSpace(text)
					}
				}
			case "function_call":
				c = codexNewCall(d, r.payload, p, ts)
				if c != nil {
					c.call.Tool = d.ReqString(r.payload, p, "name")
					c.call.Args = codexArguments(d, r.payload, p)
				}
			case "custom_tool_call":
				c = codexNewCall(d, r.payload, p, ts)
				if c != nil {
					c.call.Tool = d.ReqString(r.payload, p, "name")
					c.call.Args = map[string]any{"input": d.OptString(r.payload, p, "input")}
				}
			case "local_shell_call":
				// Its call_id is optional: a call made through the
				// chat completions API has none, and no output names
				// it. It is still a call, known by its line.
				if id, _ := r.payload["call_id"].(string); id == "" {
					if _, ok := r.payload["id"].(string); !ok {
						r.payload["call_id"] = fmt.Sprintf("local_shell_call@%d", r.Line)
					}
				}
				c = codexNewCall(d, r.payload, p, ts)
				if c != nil {
					c.call.Tool = "local_shell_call"
					c.call.Args = codexShellAction(d, r.payload, p)
				}
			case "web_search_call":
				// Most versions write no call_id and no id: nothing
				// answers a search, its action is its record. It is
				// still an observation, known by its session and
				// line.
				if cid, _ := r.payload["call_id"].(string); cid == "" {
					if _, ok := r.payload["id"].(string); !ok {
						r.payload["call_id"] = fmt.Sprintf("web_search_call@%s:%d", id, r.Line)
					}
				}
				c = codexNewCall(d, r.payload, p, ts)
				if c != nil {
					c.call.Tool = "web_search"
					c.call.Args = d.OptObject(r.payload, p, "action")
					c.hasRes = true // the call is its own result
				}
			case "function_call_output", "custom_tool_call_output":
				lastInput = ts
				cid := d.ReqString(r.payload, p, "call_id")
				pc := pending[cid]
				if pc == nil {
					if cid != "" {
						unpaired++
					}
					break
				}
				delete(pending, cid)
				pc.hasRes, pc.resultTS = true, ts
				codexOutput(d, r.payload, p, &pc.call)
			case "reasoning", "":
			default:
				if strings.HasSuffix(ptype, "_call") {
					d.Errorf(trace.Member(p, "type"), "unknown response item type %q: a tool call this version cannot read", ptype)
				}
			}
			if c != nil && c.call.ID != "" {
				c.call.Cwd, _ = meta["cwd"].(string)
				if at, dup := seen[c.call.ID]; dup {
					d.Errorf(trace.Member(p, "call_id"), "duplicate call_id %q (first at line %d)", c.call.ID, at)
				} else {
					seen[c.call.ID] = r.Line
					calls = append(calls, c)
					turnCalls = append(turnCalls, c)
					if !c.hasRes {
						pending[c.call.ID] = c
					}
				}
			}
		case "event_msg":
			switch d.ReqString(r.payload, p, "type") {
			case "token_count":
				u, ok := codexTokens(d, r.payload, p, &prevTotal)
				if !ok {
					break
				}
				u.model = model
				if ms, ok := millisBetween(lastInput, ts); ok {
					u.wallMS = ms
				}
				usage.ModelCalls++
				usage.InputTokens += u.input
				usage.OutputTokens += u.output
				usage.WallMS += u.wallMS
				if len(turnCalls) > 0 {
					for i, cost := range splitCost(u, len(turnCalls)) {
						turnCalls[i].call.Cost = cost
					}
					turnCalls = nil
				}
			case "user_message":
				if msg := d.OptString(r.payload, p, "message"); !isPreamble(msg) && strings.TrimSpace(msg) != "" {
					if typedGoal == "" {
						typedGoal = strings.TrimSpace(msg)
					}
					prompts.add(ts, msg)
				}
			}
		default:
			if ptype, _ := r.payload["type"].(string); strings.HasSuffix(ptype, "_call") {
				d.Errorf("$.type", "unknown record type %q holds a %s", r.typ, ptype)
			}
		}
		errs = append(errs, d.Errs...)
		if ts != "" {
			if first == "" {
				first = ts
			}
			last = ts
		}
	}
	if len(errs) > 0 || len(calls) == 0 {
		return nil, len(recs), errs
	}
	if goal == "" {
		goal = typedGoal
	}
	if goal != "" {
		meta["goal"] = goal
	}
	prompts.put(meta)
	if unpaired > 0 {
		meta["unpaired_tool_results"] = unpaired
	}
	var acts actionList
	t := &trace.Trace{Version: trace.SchemaVersion, ID: id, StartedAt: first, FinishedAt: last, Usage: usage, Metadata: meta}
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
	raw := make([]Record, len(recs))
	for i, r := range recs {
		raw[i] = r.Record
	}
	t.Origin.Line = recs[0].Line
	t.SourceHash = HashRecords(raw)
	return t, len(recs), nil
}

// isPreamble reports whether a user message is one Codex sends itself.
func isPreamble(text string) bool {
	text = strings.TrimSpace(text)
	for _, p := range codexPreambles {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// putMeta copies the string member key of obj into meta[as], unless meta
// already has it: the first value of a session describes it.
func putMeta(d *trace.Fields, meta, obj map[string]any, p, key, as string) {
	if v := d.OptString(obj, p, key); v != "" {
		if _, ok := meta[as]; !ok {
			meta[as] = v
		}
	}
}

// codexNewCall starts a call from the call_id of payload.
func codexNewCall(d *trace.Fields, payload map[string]any, p, ts string) *codexCall {
	cid := d.OptString(payload, p, "call_id")
	if cid == "" {
		// local_shell_call and web_search_call carry "id" in some
		// versions; function calls always carry call_id.
		cid = d.OptString(payload, p, "id")
	}
	if cid == "" {
		d.Errorf(trace.Member(p, "call_id"), "missing required field")
		return nil
	}
	return &codexCall{call: normalize.Call{ID: cid, Timestamp: ts}}
}

// codexArguments parses a function call's arguments, a JSON object
// serialized as a string (an object is taken as is).
func codexArguments(d *trace.Fields, payload map[string]any, p string) map[string]any {
	ap := trace.Member(p, "arguments")
	switch v := payload["arguments"].(type) {
	case map[string]any:
		return v
	case string:
		if args, ok := parseJSONText(v); ok {
			if m, ok := args.(map[string]any); ok {
				return m
			}
		}
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		var args any
		if err := dec.Decode(&args); err != nil {
			d.Errorf(ap, "invalid JSON in arguments: %v", err)
			return nil
		}
		if dec.More() {
			d.Errorf(ap, "invalid JSON in arguments: data after the object")
			return nil
		}
		m, ok := args.(map[string]any)
		if !ok {
			d.Errorf(ap, "expected a JSON object in arguments, got %s", trace.TypeName(args))
		}
		// parseJSONText refuses what has a duplicate key; encoding/json
		// keeps the last one.
		if dups := textDuplicates(v, d.File, d.Line, ap); len(dups) > 0 {
			d.Errs = append(d.Errs, dups...)
			return nil
		}
		return m
	case nil:
		if _, present := payload["arguments"]; !present {
			d.Errorf(ap, "missing required field")
		}
		return nil
	default:
		d.TypeError(ap, "string", v)
		return nil
	}
}

// codexShellAction reads a local_shell_call's action into the arguments a
// shell function call has: command (argv), workdir and timeout_ms.
func codexShellAction(d *trace.Fields, payload map[string]any, p string) map[string]any {
	action := reqObject(d, payload, p, "action")
	if action == nil {
		return nil
	}
	ap := trace.Member(p, "action")
	args := map[string]any{}
	argv := d.OptStrings(action, ap, "command")
	if argv == nil {
		if _, ok := action["command"]; !ok {
			d.Errorf(trace.Member(ap, "command"), "missing required field")
		}
	}
	cmd := make([]any, len(argv))
	for i, a := range argv {
		cmd[i] = a
	}
	args["command"] = cmd
	if wd := d.OptString(action, ap, "working_directory"); wd != "" {
		args["workdir"] = wd
	}
	if n := d.OptInt(action, ap, "timeout_ms"); n != nil {
		args["timeout_ms"] = json.Number(strconv.FormatInt(*n, 10))
	}
	return args
}

// codexOutput reads a call's output into c: the text, and the exit code,
// failure and duration when the output records them.
func codexOutput(d *trace.Fields, payload map[string]any, p string, c *normalize.Call) {
	op := trace.Member(p, "output")
	var text string
	var md map[string]any
	switch v := payload["output"].(type) {
	case string:
		text = v
		// The output of a shell or patch call is a JSON object
		// serialized as a string; other tools return plain text, which
		// may happen to start with a brace.
		if t := strings.TrimSpace(v); strings.HasPrefix(t, "{") {
			var obj map[string]any
			if parsed, ok := parseJSONText(t); ok {
				obj, _ = parsed.(map[string]any)
			} else {
				dec := json.NewDecoder(strings.NewReader(t))
				dec.UseNumber()
				if dec.Decode(&obj) != nil || dec.More() {
					obj = nil
				}
				// A shell call's output object is read for its
				// output and metadata, and encoding/json keeps the
				// last of two members with one name; plain text that
				// is not such an object is kept as written.
				if _, wrapped := obj["output"].(string); wrapped {
					if dups := textDuplicates(t, d.File, d.Line, op); len(dups) > 0 {
						d.Errs = append(d.Errs, dups...)
						return
					}
				}
			}
			if obj != nil {
				if out, ok := obj["output"].(string); ok {
					text = out
					md, _ = obj["metadata"].(map[string]any)
					op = trace.Member(op, "metadata")
				}
			}
		}
	case []any:
		// Content items ({"type": "input_text", "text"}, input_image),
		// as an MCP tool's output is written: the text when it is all
		// text, else the items as they are.
		if t, ok := textOf(v); ok {
			text = t
		} else {
			c.Result = v
			return
		}
	case map[string]any:
		// {"content": "...", "success": bool}, as some versions write it.
		text = d.OptString(v, op, "content")
		if ok := d.OptBool(v, op, "success"); ok != nil && !*ok {
			c.IsError = true
		}
	case nil:
		if _, present := payload["output"]; !present {
			d.Errorf(op, "missing required field")
		}
	default:
		d.TypeError(op, "string, array or object", v)
	}
	c.Result = text
	if md != nil {
		// The metadata came from inside a string: its problems are
		// reported at the output member that holds it.
		var inner trace.Fields
		if n := inner.OptInt(md, op, "exit_code"); n != nil {
			code := int(*n)
			c.ExitCode = &code
		}
		if v, ok := md["duration_seconds"]; ok && v != nil {
			if f, ok := inner.Float(v, trace.Member(op, "duration_seconds")); ok && f >= 0 && f < math.MaxInt64/1000 {
				ms := int64(math.Round(f * 1000))
				c.DurationMS = &ms
			}
		}
		for _, e := range inner.Errs {
			d.Errorf(trace.Member(p, "output"), "in its JSON: %s: %s", e.Path, e.Msg)
		}
	} else if code, ok := codexExitHeader(text); ok {
		c.ExitCode = &code
	}
	if c.ExitCode != nil && *c.ExitCode != 0 {
		c.IsError = true
	}
}

// codexExitHeader reads the exit code from the header Codex puts before a
// shell command's output in its plain-text form: "Exit code: N" (shell
// and shell_command) or "Process exited with code N" (exec_command), in
// the lines before "Output:".
func codexExitHeader(text string) (int, bool) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "Output:" {
			break
		}
		for _, prefix := range [...]string{"Exit code: ", "Process exited with code "} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				if n, err := strconv.Atoi(rest); err == nil {
					return n, true
				}
			}
		}
	}
	return 0, false
}

// codexTokens reads a token_count event: the usage of the model response
// it closes. Codex may repeat a token_count without a new response (the
// rate limits changed); a total equal to the previous one is such a
// repeat and reads as no usage. Without last_token_usage the usage is the
// growth of total_token_usage.
func codexTokens(d *trace.Fields, payload map[string]any, p string, prev **[3]int64) (turnUsage, bool) {
	info := d.OptObject(payload, p, "info")
	if info == nil {
		return turnUsage{}, false
	}
	ip := trace.Member(p, "info")
	// cached_input_tokens is the part of input_tokens read from the
	// prompt cache.
	read := func(key string) (in, out, cached int64, ok bool) {
		u := d.OptObject(info, ip, key)
		if u == nil {
			return 0, 0, 0, false
		}
		up := trace.Member(ip, key)
		return d.Count(u, up, "input_tokens"), d.Count(u, up, "output_tokens"), d.Count(u, up, "cached_input_tokens"), true
	}
	tin, tout, tcached, hasTotal := read("total_token_usage")
	lin, lout, lcached, hasLast := read("last_token_usage")
	var u turnUsage
	switch {
	case hasTotal && *prev != nil && (*prev)[0] == tin && (*prev)[1] == tout:
		return turnUsage{}, false
	case hasLast:
		u.input, u.output, u.cacheRead = lin, lout, lcached
	case hasTotal && *prev != nil:
		u.input, u.output, u.cacheRead = max(tin-(*prev)[0], 0), max(tout-(*prev)[1], 0), max(tcached-(*prev)[2], 0)
	case hasTotal:
		u.input, u.output, u.cacheRead = tin, tout, tcached
	default:
		return turnUsage{}, false
	}
	u.cacheRead = min(u.cacheRead, u.input)
	if hasTotal {
		*prev = &[3]int64{tin, tout, tcached}
	}
	return u, true
}

// jsonText is a trace.Parser for the JSON that Codex writes inside
// strings (a function call's arguments, a shell call's output), with a
// buffer for the string's bytes. encoding/json's Decoder, which reads
// them otherwise, allocated as much as parsing the rollout's records did.
type jsonText struct {
	p   trace.Parser
	buf []byte
}

var jsonTexts = sync.Pool{New: func() any { return new(jsonText) }}

// parseJSONText parses s when it is exactly one JSON document, with no
// two members of an object sharing a name, and reports whether it is; its
// value is then what encoding/json's Decoder gives with UseNumber (see
// trace.Parser). Anything else, the callers hand to encoding/json, whose
// verdict and messages they keep.
func parseJSONText(s string) (any, bool) {
	jt := jsonTexts.Get().(*jsonText)
	defer jsonTexts.Put(jt)
	jt.buf = append(jt.buf[:0], s...)
	v, err := jt.p.Parse(jt.buf, "", 0)
	if cap(jt.buf) > 1<<20 {
		jt.buf = nil // a large output is not kept for the next
	}
	return v, err == nil
}
