package tracetest

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// This file writes a session as a Codex CLI rollout: one {timestamp, type,
// payload} record per line. session_meta opens it, turn_context gives the
// model, response_item holds messages, function calls (shell with an argv
// list and a workdir, update_plan) and their outputs, and custom tool
// calls (apply_patch) and theirs; an event_msg token_count follows each
// model turn. Reads, searches and listings are shell commands here (sed -n,
// rg, ls), as Codex has no separate tools for them.

const (
	codexVersion = "0.46.0"
	codexModel   = "gpt-5-codex"
)

type codexLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   any    `json:"payload"`
}

type codexText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type codexMessage struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content []codexText `json:"content"`
}

type codexFunctionCall struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
}

type codexCustomCall struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	Input  string `json:"input"`
}

type codexOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type codexUsage struct {
	InputTokens           int `json:"input_tokens"`
	CachedInputTokens     int `json:"cached_input_tokens"`
	OutputTokens          int `json:"output_tokens"`
	ReasoningOutputTokens int `json:"reasoning_output_tokens"`
	TotalTokens           int `json:"total_tokens"`
}

func writeCodex(buf *bytes.Buffer, s *agentSession) {
	line := func(at int64, typ string, payload any) {
		jsonLine(buf, codexLine{Timestamp: stamp(s.at(at)), Type: typ, Payload: payload})
	}
	line(0, "session_meta", map[string]any{
		"id": s.id, "timestamp": stamp(s.start), "cwd": s.cwd, "originator": "codex_cli_rs",
		"cli_version": codexVersion, "instructions": nil, "source": "cli", "model_provider": "openai",
		"git": map[string]any{"commit_hash": strings.ReplaceAll(derivedUUID(s.id, 1<<20)+derivedUUID(s.id, 1<<21), "-", "")[:40], "branch": s.branch, "repository_url": "git@github.com:acme/" + lastElem(s.cwd) + ".git"},
	})
	env := fmt.Sprintf("<environment_context>\n  <cwd>%s</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>", s.cwd)
	line(0, "response_item", codexMessage{Type: "message", Role: "user", Content: []codexText{{"input_text", env}}})
	line(0, "response_item", codexMessage{Type: "message", Role: "user", Content: []codexText{{"input_text", s.goal}}})
	line(0, "event_msg", map[string]any{"type": "user_message", "message": s.goal, "kind": "plain"})
	line(0, "turn_context", map[string]any{
		"cwd": s.cwd, "approval_policy": "on-request", "sandbox_policy": map[string]any{"mode": "workspace-write"},
		"model": codexModel, "effort": "medium", "summary": "auto",
	})

	var total codexUsage
	for ti := range s.turns {
		t := &s.turns[ti]
		at := t.startMS + t.latMS
		if t.prompt != "" {
			line(t.startMS, "response_item", codexMessage{Type: "message", Role: "user", Content: []codexText{{"input_text", t.prompt}}})
			line(t.startMS, "event_msg", map[string]any{"type": "user_message", "message": t.prompt, "kind": "plain"})
		}
		if t.text != "" {
			line(at, "response_item", codexMessage{Type: "message", Role: "assistant", Content: []codexText{{"output_text", t.text}}})
		}
		for ci := range t.calls {
			c := &t.calls[ci]
			id := "call_" + c.key
			switch c.kind {
			case callEdit:
				line(c.startMS, "response_item", codexCustomCall{Type: "custom_tool_call", Status: "completed", CallID: id, Name: "apply_patch", Input: codexPatch(c)})
			case callPlan:
				plan := make([]any, len(c.plan))
				for i, p := range c.plan {
					plan[i] = map[string]any{"step": p.step, "status": p.status}
				}
				line(c.startMS, "response_item", codexFunctionCall{Type: "function_call", Name: "update_plan", Arguments: jsonString(map[string]any{"plan": plan}), CallID: id})
			default:
				args := map[string]any{"command": codexArgv(c), "workdir": s.cwd}
				if c.kind == callShell {
					args["timeout_ms"] = 120000
				}
				line(c.startMS, "response_item", codexFunctionCall{Type: "function_call", Name: "shell", Arguments: jsonString(args), CallID: id})
			}
		}
		for ci := range t.calls {
			c := &t.calls[ci]
			id := "call_" + c.key
			end := c.startMS + c.durMS
			switch c.kind {
			case callEdit:
				out := fmt.Sprintf("Success. Updated the following files:\nM %s\n", c.path)
				line(end, "response_item", codexOutput{Type: "custom_tool_call_output", CallID: id, Output: codexResult(out, 0, c.durMS)})
			case callPlan:
				line(end, "response_item", codexOutput{Type: "function_call_output", CallID: id, Output: "Plan updated"})
			default:
				line(end, "response_item", codexOutput{Type: "function_call_output", CallID: id, Output: codexResult(codexShellOutput(c), c.exit, c.durMS)})
			}
		}
		last := codexUsage{InputTokens: t.input, CachedInputTokens: t.cacheRead, OutputTokens: t.output, ReasoningOutputTokens: t.output / 3}
		last.TotalTokens = last.InputTokens + last.OutputTokens
		total.InputTokens += last.InputTokens
		total.CachedInputTokens += last.CachedInputTokens
		total.OutputTokens += last.OutputTokens
		total.ReasoningOutputTokens += last.ReasoningOutputTokens
		total.TotalTokens += last.TotalTokens
		end := at
		if n := len(t.calls); n > 0 {
			end = t.calls[n-1].startMS + t.calls[n-1].durMS
		}
		line(end, "event_msg", map[string]any{"type": "token_count", "info": map[string]any{
			"total_token_usage": total, "last_token_usage": last, "model_context_window": 272000,
		}, "rate_limits": nil})
	}
}

// codexArgv is the argv Codex runs for a shell-backed call: a bash -lc
// wrapper around the command, except listings, which Codex often runs
// as a bare argv.
func codexArgv(c *agentCall) []string {
	switch c.kind {
	case callRead:
		return []string{"bash", "-lc", "sed -n '1,200p' " + c.path}
	case callSearch:
		return []string{"bash", "-lc", "rg -n " + dq(c.pattern) + " " + c.path}
	case callGlob:
		return []string{"bash", "-lc", "rg --files -g " + "'" + c.pattern + "'"}
	case callList:
		return []string{"ls", "-la", c.path}
	default:
		return []string{"bash", "-lc", c.command}
	}
}

// codexShellOutput is what a shell-backed call printed.
func codexShellOutput(c *agentCall) string {
	switch c.kind {
	case callSearch:
		var b strings.Builder
		for i, f := range c.files {
			fmt.Fprintf(&b, "%s:%d:\t// %s\n", f, 10+7*i, c.pattern)
		}
		return b.String()
	case callGlob:
		return strings.Join(c.files, "\n") + "\n"
	case callList:
		var b strings.Builder
		fmt.Fprintf(&b, "total %d\n", 4*len(c.files))
		for _, f := range c.files {
			fmt.Fprintf(&b, "-rw-r--r-- 1 dev dev 1204 Mar  2 09:00 %s\n", lastElem(f))
		}
		return b.String()
	default:
		return c.output
	}
}

// codexResult is the output string of a shell or apply_patch call: JSON
// holding the output and its exit code and duration.
func codexResult(output string, exit int, durMS int64) string {
	return jsonString(map[string]any{"output": output, "metadata": map[string]any{
		"exit_code": exit, "duration_seconds": math.Round(float64(durMS)/100) / 10,
	}})
}

// codexPatch is the apply_patch input of an edit.
func codexPatch(c *agentCall) string {
	return fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-\t%s\n+\t%s\n*** End Patch\n", c.path, c.oldText, c.newText)
}

func lastElem(p string) string { return p[strings.LastIndex(p, "/")+1:] }
