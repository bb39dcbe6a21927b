package tracetest

import (
	"bytes"
	"fmt"
	"path"
	"strings"
)

// This file writes a session as a Claude Code session log: one JSON record
// per line, user and assistant records chained by uuid/parentUuid. A tool
// call is a tool_use block {id, name, input} in an assistant message; its
// result is a tool_result block {tool_use_id, content, is_error} in the
// next user record, which also carries the tool's structured result as
// toolUseResult. Assistant messages carry the model and the turn's usage;
// a message of several content blocks (some text, parallel tool calls) is
// written one block per record, the records sharing message.id and
// repeating its usage, as Claude Code writes a streamed response.
// A session the agent titled starts with a summary line.

const (
	claudeVersion = "2.0.14"
	claudeModel   = "claude-sonnet-4-5-20250929"
)

// claudeProjectDir is the directory Claude Code keeps a project's
// sessions in: the project path with every "/" replaced by "-".
func claudeProjectDir(cwd string) string { return strings.ReplaceAll(cwd, "/", "-") }

// claudeRecord is one user or assistant line.
type claudeRecord struct {
	ParentUUID    *string `json:"parentUuid"`
	IsSidechain   bool    `json:"isSidechain"`
	UserType      string  `json:"userType"`
	Cwd           string  `json:"cwd"`
	SessionID     string  `json:"sessionId"`
	Version       string  `json:"version"`
	GitBranch     string  `json:"gitBranch"`
	Type          string  `json:"type"`
	Message       any     `json:"message"`
	RequestID     string  `json:"requestId,omitempty"`
	ToolUseResult any     `json:"toolUseResult,omitempty"`
	UUID          string  `json:"uuid"`
	Timestamp     string  `json:"timestamp"`
}

type claudeSummary struct {
	Type     string `json:"type"`
	Summary  string `json:"summary"`
	LeafUUID string `json:"leafUuid"`
}

type claudeUserMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type claudeAssistantMessage struct {
	ID           string      `json:"id"`
	Type         string      `json:"type"`
	Role         string      `json:"role"`
	Model        string      `json:"model"`
	Content      []any       `json:"content"`
	StopReason   string      `json:"stop_reason"`
	StopSequence *string     `json:"stop_sequence"`
	Usage        claudeUsage `json:"usage"`
}

type claudeUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type claudeText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type claudeToolUse struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

type claudeToolResult struct {
	ToolUseID string `json:"tool_use_id"`
	Type      string `json:"type"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error"`
}

// claudeToolID is the tool_use id of a call.
func claudeToolID(c *agentCall) string { return "toolu_01" + c.key[:22] }

func writeClaude(buf *bytes.Buffer, s *agentSession) {
	// Record k has uuid derivedUUID(id, k); the summary names the last.
	records := 1
	for _, t := range s.turns {
		records += 2 * len(t.calls)
		if t.text != "" {
			records++
		}
		if t.prompt != "" {
			records++
		}
	}
	if s.summary != "" {
		jsonLine(buf, claudeSummary{Type: "summary", Summary: s.summary, LeafUUID: derivedUUID(s.id, records-1)})
	}
	k := 0
	var parent *string
	emit := func(typ string, at int64, msg, result any, requestID string) {
		id := derivedUUID(s.id, k)
		k++
		jsonLine(buf, claudeRecord{
			ParentUUID: parent, UserType: "external", Cwd: s.cwd, SessionID: s.id, Version: claudeVersion,
			GitBranch: s.branch, Type: typ, Message: msg, RequestID: requestID, ToolUseResult: result,
			UUID: id, Timestamp: stamp(s.at(at)),
		})
		parent = &id
	}
	emit("user", 0, claudeUserMessage{Role: "user", Content: s.goal}, nil, "")
	for ti := range s.turns {
		t := &s.turns[ti]
		if t.prompt != "" {
			emit("user", t.startMS, claudeUserMessage{Role: "user", Content: t.prompt}, nil, "")
		}
		var content []any
		if t.text != "" {
			content = append(content, claudeText{Type: "text", Text: t.text})
		}
		for ci := range t.calls {
			c := &t.calls[ci]
			name, input := claudeTool(s, c)
			content = append(content, claudeToolUse{Type: "tool_use", ID: claudeToolID(c), Name: name, Input: input})
		}
		stop := "tool_use"
		if len(t.calls) == 0 {
			stop = "end_turn"
		}
		key := derivedUUID(s.id, -1-ti)
		// One record per content block, all with the message's id and
		// usage, as Claude Code writes a streamed response.
		for _, block := range content {
			msg := claudeAssistantMessage{
				ID: "msg_01" + strings.ReplaceAll(key, "-", "")[:22], Type: "message", Role: "assistant", Model: claudeModel,
				Content: []any{block}, StopReason: stop,
				Usage: claudeUsage{InputTokens: t.input - t.cacheRead, CacheReadInputTokens: t.cacheRead, CacheCreationInputTokens: (t.input - t.cacheRead) / 3, OutputTokens: t.output},
			}
			emit("assistant", t.startMS+t.latMS, msg, nil, "req_011"+strings.ReplaceAll(key, "-", "")[8:30])
		}
		for ci := range t.calls {
			c := &t.calls[ci]
			text, result := claudeResult(s, c)
			block := claudeToolResult{ToolUseID: claudeToolID(c), Type: "tool_result", Content: text, IsError: c.failed()}
			emit("user", c.startMS+c.durMS, claudeUserMessage{Role: "user", Content: []any{block}}, result, "")
		}
	}
}

// abs returns the absolute path of a project file.
func abs(s *agentSession, p string) string {
	if p == "" || p == "." {
		return s.cwd
	}
	return path.Join(s.cwd, p)
}

// claudeTool returns the Claude Code tool and input of c.
func claudeTool(s *agentSession, c *agentCall) (string, map[string]any) {
	switch c.kind {
	case callShell:
		return "Bash", map[string]any{"command": c.command, "description": describe(c.command)}
	case callRead:
		return "Read", map[string]any{"file_path": abs(s, c.path)}
	case callSearch:
		return "Grep", map[string]any{"pattern": c.pattern, "path": abs(s, c.path), "output_mode": "files_with_matches"}
	case callGlob:
		return "Glob", map[string]any{"pattern": c.pattern}
	case callList:
		return "LS", map[string]any{"path": abs(s, c.path)}
	case callPlan:
		todos := make([]any, len(c.plan))
		for i, p := range c.plan {
			todos[i] = map[string]any{"content": p.step, "status": p.status, "activeForm": p.step}
		}
		return "TodoWrite", map[string]any{"todos": todos}
	default: // callEdit
		return "Edit", map[string]any{"file_path": abs(s, c.path), "old_string": c.oldText, "new_string": c.newText}
	}
}

// describe is the short description Claude gives a Bash command.
func describe(command string) string {
	head, _, _ := strings.Cut(command, " ")
	return "Run " + head
}

// claudeResult returns the tool_result text and the toolUseResult of c.
func claudeResult(s *agentSession, c *agentCall) (string, any) {
	switch c.kind {
	case callShell:
		if c.failed() {
			text := fmt.Sprintf("Exit code %d\n%s", c.exit, c.output)
			return text, "Error: " + text
		}
		return c.output, map[string]any{"stdout": c.output, "stderr": "", "interrupted": false, "isImage": false}
	case callRead:
		lines := strings.Split(strings.TrimSuffix(c.output, "\n"), "\n")
		var numbered strings.Builder
		for i, l := range lines {
			fmt.Fprintf(&numbered, "%6d\t%s\n", i+1, l)
		}
		return numbered.String(), map[string]any{"type": "text", "file": map[string]any{
			"filePath": abs(s, c.path), "content": c.output, "numLines": len(lines), "startLine": 1, "totalLines": len(lines),
		}}
	case callSearch, callGlob:
		files := make([]any, len(c.files))
		var text strings.Builder
		if c.kind == callSearch {
			fmt.Fprintf(&text, "Found %d files\n", len(c.files))
		}
		for i, f := range c.files {
			files[i] = abs(s, f)
			text.WriteString(abs(s, f) + "\n")
		}
		if c.kind == callSearch {
			return text.String(), map[string]any{"mode": "files_with_matches", "filenames": files, "numFiles": len(files)}
		}
		return text.String(), map[string]any{"filenames": files, "durationMs": c.durMS, "numFiles": len(files), "truncated": false}
	case callList:
		var text strings.Builder
		fmt.Fprintf(&text, "- %s/\n", abs(s, c.path))
		for _, f := range c.files {
			fmt.Fprintf(&text, "  - %s\n", path.Base(f))
		}
		return text.String(), text.String()
	case callPlan:
		todos := make([]any, len(c.plan))
		for i, p := range c.plan {
			todos[i] = map[string]any{"content": p.step, "status": p.status, "activeForm": p.step}
		}
		return "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.",
			map[string]any{"oldTodos": []any{}, "newTodos": todos}
	default: // callEdit
		return fmt.Sprintf("The file %s has been updated.", abs(s, c.path)), map[string]any{
			"filePath": abs(s, c.path), "oldString": c.oldText, "newString": c.newText,
			"structuredPatch": []any{}, "userModified": false, "replaceAll": false,
		}
	}
}
