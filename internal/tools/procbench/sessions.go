package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The detector reads the agents' own logs, not crystallize's import of
// them: the count of what a person would name must not depend on the
// code it judges. A directory the importer refuses, or a session it
// drops, still counts here, and shows up as a procedure the miner missed.

// Problem is a record the reader could not use, with where it is.
type Problem struct {
	Where string `json:"where"`
	What  string `json:"what"`
}

// Corpus is what readDir found under a directory.
type Corpus struct {
	Sessions []Session
	// Files counts the files read by format ("claude-code", "codex",
	// "gemini", "trace"); Ignored lists files of no known format.
	Files    map[string]int
	Ignored  []string
	Problems []Problem
}

// maxLine bounds one JSONL record; real Claude Code records holding a
// whole file's contents reach several megabytes.
const maxLine = 64 << 20

// readDir reads every *.jsonl and *.json file under dir. Sessions with
// the same key (a resumed Claude Code session spread over files) are
// merged in file order, and a tool call recorded twice under the same
// id (a resumed session re-appends earlier turns) counts once.
func readDir(dir string) (*Corpus, error) {
	c := &Corpus{Files: map[string]int{}}
	byKey := map[string]*sessionBuilder{}
	var order []string
	get := func(key, agent, src string) *sessionBuilder {
		b, ok := byKey[key]
		if !ok {
			b = &sessionBuilder{Session: Session{Key: key, Agent: agent, Source: src}, seen: map[string]bool{}}
			byKey[key] = b
			order = append(order, key)
		}
		return b
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, p := range files {
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		format := readFile(rel, data, get, &c.Problems)
		if format == "" {
			c.Ignored = append(c.Ignored, rel)
			continue
		}
		c.Files[format]++
	}
	for _, k := range order {
		if b := byKey[k]; len(b.Events) > 0 {
			c.Sessions = append(c.Sessions, b.Session)
		}
	}
	return c, nil
}

type sessionBuilder struct {
	Session
	seen map[string]bool
}

// add appends the events of one tool call; id, when not empty, makes a
// second record of the same call a no-op.
func (b *sessionBuilder) add(id string, evs ...Event) {
	if id != "" {
		if b.seen[id] {
			return
		}
		b.seen[id] = true
	}
	b.Events = append(b.Events, evs...)
}

type getFunc func(key, agent, src string) *sessionBuilder

// readFile reads one file and returns its format, or "" when it is none
// the detector knows.
func readFile(rel string, data []byte, get getFunc, problems *[]Problem) string {
	if strings.HasSuffix(rel, ".json") {
		return readJSON(rel, data, get, problems)
	}
	r := &jsonlReader{rel: rel, get: get, problems: problems}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(b, &rec); err != nil {
			*problems = append(*problems, Problem{fmt.Sprintf("%s:%d", rel, line), "not a JSON object"})
			continue
		}
		r.record(line, rec)
	}
	if err := sc.Err(); err != nil {
		*problems = append(*problems, Problem{fmt.Sprintf("%s:%d", rel, line+1), err.Error()})
	}
	return r.format
}

// jsonlReader reads the records of one JSONL file: Claude Code, Codex
// (the envelope format and the older one without it) or neither.
type jsonlReader struct {
	rel      string
	get      getFunc
	problems *[]Problem
	format   string
	codexKey string // the session a Codex file's records belong to
}

func str(rec map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := rec[key]; ok {
		_ = json.Unmarshal(raw, &s) // not a string: ""
	}
	return s
}

func (r *jsonlReader) record(line int, rec map[string]json.RawMessage) {
	typ := str(rec, "type")
	switch {
	case typ == "session_meta" || typ == "response_item" || typ == "turn_context" || typ == "event_msg":
		r.format = "codex"
		var payload map[string]json.RawMessage
		_ = json.Unmarshal(rec["payload"], &payload)
		if typ == "session_meta" {
			if id := str(payload, "id"); id != "" && r.codexKey == "" {
				r.codexKey = id
			}
			return
		}
		if typ == "response_item" {
			r.codexItem(payload)
		}
	case rec["sessionId"] != nil && (rec["message"] != nil || rec["parentUuid"] != nil):
		r.format = "claude-code"
		r.claude(rec)
	case r.format == "" && line == 1 && rec["id"] != nil && rec["timestamp"] != nil && typ == "":
		// The older Codex rollout: its first line is the bare session meta.
		r.format = "codex"
		r.codexKey = str(rec, "id")
	case r.format == "codex" && (typ == "function_call" || typ == "custom_tool_call" || typ == "local_shell_call"):
		r.codexItem(rec)
	}
}

func (r *jsonlReader) claude(rec map[string]json.RawMessage) {
	if str(rec, "type") != "assistant" {
		return
	}
	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(rec["message"], &msg) != nil {
		return
	}
	var blocks []struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(msg.Content, &blocks) != nil {
		return // a plain string: no tool call
	}
	key := str(rec, "sessionId")
	if base := filepath.Base(r.rel); strings.HasPrefix(base, "agent-") {
		key += "." + strings.TrimSuffix(base, ".jsonl")
	}
	b := r.get(key, "claude-code", r.rel)
	for _, bl := range blocks {
		if bl.Type != "tool_use" {
			continue
		}
		b.add(bl.ID, claudeEvents(bl.Name, bl.Input)...)
	}
}

// claudeEvents are the events of one Claude Code tool call.
func claudeEvents(name string, input json.RawMessage) []Event {
	switch name {
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return []Event{{Edit: true}}
	case "Bash", "PowerShell":
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(input, &in)
		return scriptEvents(in.Command)
	}
	return nil
}

func (r *jsonlReader) codexItem(item map[string]json.RawMessage) {
	key := r.codexKey
	if key == "" {
		key = r.rel
	}
	b := r.get(key, "codex", r.rel)
	id := str(item, "call_id")
	if id == "" {
		id = str(item, "id")
	}
	switch str(item, "type") {
	case "function_call":
		name := str(item, "name")
		if name == "apply_patch" {
			b.add(id, Event{Edit: true})
			return
		}
		var args struct {
			Command json.RawMessage `json:"command"`
			Cmd     string          `json:"cmd"`
		}
		// Arguments are a JSON document inside a string.
		if s := str(item, "arguments"); s != "" {
			_ = json.Unmarshal([]byte(s), &args)
		}
		b.add(id, codexCommand(args.Command, args.Cmd)...)
	case "custom_tool_call":
		if str(item, "name") == "apply_patch" {
			b.add(id, Event{Edit: true})
		}
	case "local_shell_call":
		var action struct {
			Command []string `json:"command"`
		}
		_ = json.Unmarshal(item["action"], &action)
		b.add(id, argvEvents(action.Command)...)
	}
}

// codexCommand reads a shell call's command: an argv array (the shell
// tool), a string (shell_command) or exec_command's cmd. An argv whose
// program is apply_patch is an edit.
func codexCommand(command json.RawMessage, cmd string) []Event {
	var argv []string
	if json.Unmarshal(command, &argv) == nil && len(argv) > 0 {
		if programName(argv[0]) == "apply_patch" {
			return []Event{{Edit: true}}
		}
		return argvEvents(argv)
	}
	var s string
	if json.Unmarshal(command, &s) == nil && s != "" {
		cmd = s
	}
	if strings.HasPrefix(strings.TrimSpace(cmd), "apply_patch") {
		return []Event{{Edit: true}}
	}
	return scriptEvents(cmd)
}

// readJSON reads a Gemini CLI chat (chats/session-*.json) or a
// crystallization trace; anything else is not a session.
func readJSON(rel string, data []byte, get getFunc, problems *[]Problem) string {
	var doc struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionId"`
		Messages  []struct {
			ToolCalls []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
				Args struct {
					Command string `json:"command"`
				} `json:"args"`
			} `json:"toolCalls"`
		} `json:"messages"`
		Actions []struct {
			ID       string `json:"id"`
			Kind     string `json:"kind"`
			Name     string `json:"name"`
			Metadata struct {
				Argv []string `json:"argv"`
			} `json:"metadata"`
		} `json:"actions"`
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		// A JSON array (Gemini's logs.json) or some other document.
		return ""
	}
	switch {
	case doc.SessionID != "" && doc.Messages != nil:
		b := get(doc.SessionID, "gemini", rel)
		for _, m := range doc.Messages {
			for _, tc := range m.ToolCalls {
				switch tc.Name {
				case "run_shell_command":
					b.add(tc.ID, scriptEvents(tc.Args.Command)...)
				case "replace", "write_file", "edit":
					b.add(tc.ID, Event{Edit: true})
				}
			}
		}
		return "gemini"
	case doc.ID != "" && doc.Actions != nil:
		b := get(doc.ID, "trace", rel)
		for _, a := range doc.Actions {
			b.add(a.ID, traceEvents(a.Kind, a.Name, a.Metadata.Argv)...)
		}
		return "trace"
	}
	return ""
}

// traceEvents reads one action of a crystallization trace: a file
// mutation is an edit, a command is named from its argv (the importer
// splits a compound command into one action per simple command) or, for
// hand-written traces, from its name.
func traceEvents(kind, name string, argv []string) []Event {
	if kind == "file_mutation" {
		return []Event{{Edit: true}}
	}
	if len(argv) > 0 {
		// The importer replaces parameter values by {placeholders}; an
		// operand is still an operand.
		return argvEvents(argv)
	}
	if h, op := commandHead(strings.Fields(name)); h != "" {
		return []Event{{Head: h, Operand: op}}
	}
	return nil
}
