package serve

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/store"
)

// agentServer is a server with the session tools on the registry of a
// fresh state directory, an SDK client connected to it in memory under
// the client name "claude-code", and the registry's database as a
// person's commands read it.
type agentServer struct {
	cs   *mcp.ClientSession
	db   *store.DB
	opts registry.Options
	log  *strings.Builder
}

func newAgentServer(t *testing.T, opts registry.Options) *agentServer {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	agents := registry.NewAgents(dir, opts)
	t.Cleanup(func() { agents.Close() })
	log := &strings.Builder{}
	s := New(Options{Bundles: []string{t.TempDir()}, Agents: agents, Log: &logWriter{w: log}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	db, err := store.Open(ctx, filepath.Join(dir, registry.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &agentServer{cs: cs, db: db, opts: opts, log: log}
}

type logWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// call calls tool with args and returns its structured content, failing
// the test on a tool error.
func (a *agentServer) call(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %s", tool, res.Content[0].(*mcp.TextContent).Text)
	}
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// refused calls tool and returns the text of the tool error it must be.
func (a *agentServer) refused(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v, want a tool error", tool, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v) = %v, want a tool error", tool, args, res.StructuredContent)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func (a *agentServer) line(t *testing.T) string {
	t.Helper()
	l, err := registry.Status(context.Background(), a.db, a.opts)
	if err != nil {
		t.Fatal(err)
	}
	return l.String()
}

// TestSessionTools: an MCP client registers, is on the status line,
// asks, the question is in the inbox, a person answers it, the client
// reads the answer and who gave it, ends, and is no longer on the line.
func TestSessionTools(t *testing.T) {
	ctx := context.Background()
	a := newAgentServer(t, registry.Options{})
	tools, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff(SessionTools, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	// The agent's name defaults to the client's.
	reg := a.call(t, ToolRegister, map[string]any{"model": "opus-4", "branch": "feat/auth"})
	id, _ := reg["session_id"].(string)
	if !registry.IsAgentSession(id) {
		t.Fatalf("session_register = %v, want an agent session id", reg)
	}
	if got, want := a.line(t), "[1] feat/auth/claude-code  |  0  /sessions"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}

	ask := a.call(t, ToolAsk, map[string]any{"session_id": id, "question": "Which auth strategy?", "options": []string{"JWT", "Session", "OAuth"}})
	item := int64(ask["item"].(float64))
	if ask["state"] != registry.ReplyPending {
		t.Errorf("session_ask = %v, want state pending", ask)
	}
	open, err := a.db.Items(ctx, "", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 || open[0].ID != item || open[0].SessionID != id || open[0].Text != "Which auth strategy?" {
		t.Fatalf("inbox = %+v, want the question as item %d", open, item)
	}
	if got, want := a.line(t), "[1] feat/auth/claude-code  |  1  /sessions"; got != want {
		t.Errorf("status line = %q, want %q", got, want)
	}
	if got := a.call(t, ToolCheck, map[string]any{"session_id": id, "item": item}); got["state"] != registry.ReplyPending {
		t.Errorf("session_check before the answer = %v, want pending", got)
	}

	answer := registry.Answer{Decide: "OAuth", Reason: "SSO is required", By: "ana"}
	if err := registry.Check(open[0], answer); err != nil {
		t.Fatal(err)
	}
	if err := registry.AnswerQuestion(ctx, a.db, open[0], answer, a.opts); err != nil {
		t.Fatal(err)
	}
	got := a.call(t, ToolCheck, map[string]any{"session_id": id, "item": item})
	delete(got, "answered_at")
	want := map[string]any{"item": float64(item), "state": "answered", "option": "OAuth", "by": "ana", "reason": "SSO is required"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("session_check after the answer (-want +got):\n%s", diff)
	}

	end := a.call(t, ToolEnd, map[string]any{"session_id": id, "status": "completed"})
	if end["status"] != "completed" {
		t.Errorf("session_end = %v", end)
	}
	if got, want := a.line(t), "no active sessions  |  0  /sessions"; got != want {
		t.Errorf("status line after session_end = %q, want %q", got, want)
	}
	s, _ := a.db.LiveSession(ctx, id)
	if s.Status != registry.StatusCompleted {
		t.Errorf("status = %q, want completed", s.Status)
	}
	if msg := a.refused(t, ToolAsk, map[string]any{"session_id": id, "question": "More?", "options": []string{"a", "b"}}); !strings.Contains(msg, "has ended (completed)") {
		t.Errorf("session_ask after session_end: %s", msg)
	}
}

// TestSessionToolsHostile: what a client sends is refused as a tool error
// the model can read, and nothing of it reaches the inbox; names with
// control characters reach the registry as one printable word.
func TestSessionToolsHostile(t *testing.T) {
	ctx := context.Background()
	a := newAgentServer(t, registry.Options{})
	reg := a.call(t, ToolRegister, map[string]any{"agent": "\x1b]0;pwned\x07claude\ncode", "model": "<script>alert(1)</script>"})
	id := reg["session_id"].(string)
	s, _ := a.db.LiveSession(ctx, id)
	if s.Agent != "]0;pwnedclaude-code" {
		t.Errorf("agent = %q, want one printable word", s.Agent)
	}
	if line := a.line(t); strings.ContainsAny(line, "\x1b\x07\n") {
		t.Errorf("status line %q holds a control character", line)
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolAsk, map[string]any{"session_id": id, "question": strings.Repeat("x", registry.MaxQuestion+1), "options": []string{"a", "b"}}, "question: 4097 bytes, at most 4096"},
		{ToolAsk, map[string]any{"session_id": id, "question": "ok?\x1b[2J", "options": []string{"a", "b"}}, "question: control character U+001B"},
		{ToolAsk, map[string]any{"session_id": registry.AgentPrefix + "ffffffffffffffff", "question": "ok?", "options": []string{"a", "b"}}, "no such session"},
		{ToolAsk, map[string]any{"session_id": id, "question": "ok?", "options": []string{"a", "b"}, "default": "a", "timeout_seconds": -1}, "timeout_seconds -1"},
		{ToolAsk, map[string]any{"session_id": id, "question": "ok?", "options": []string{"a", "b"}, "extra": 1}, "validating"},
		{ToolCheck, map[string]any{"session_id": "20260101T090000Z-0123456789ab", "item": 1}, "not an agent session id"},
		{ToolEnd, map[string]any{"session_id": id, "status": "pending"}, `status "pending"`},
		{ToolRegister, map[string]any{"agent": strings.Repeat("a", registry.MaxField+1)}, "name: 257 bytes"},
	} {
		if msg := a.refused(t, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
			t.Errorf("%s(%.80v): %q, want %q", tc.tool, tc.args, msg, tc.want)
		}
	}
	if items, _ := a.db.Items(ctx, "", true); len(items) != 0 {
		t.Errorf("inbox = %+v, want nothing from refused calls", items)
	}
	if !strings.Contains(a.log.String(), "serve: call of session_ask refused: refused: question: 4097 bytes") {
		t.Errorf("the server log does not name the refusal:\n%s", a.log)
	}
}

// TestSessionToolsConnection: the session stays running while its
// connection is open, however long between calls, and turns stale when
// the connection closes without session_end.
func TestSessionToolsConnection(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return t0 }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); t0 = t0.Add(d) }
	opts := registry.Options{Now: now, Interval: 5 * time.Millisecond, StaleAfter: time.Minute}
	a := newAgentServer(t, opts)
	id := a.call(t, ToolRegister, map[string]any{"agent": "codex"})["session_id"].(string)
	state := func() string {
		t.Helper()
		e, err := registry.Find(ctx, a.db, id, true, opts)
		if err != nil {
			t.Fatal(err)
		}
		return e.State
	}
	advance(2 * time.Minute)
	for range 400 {
		if state() == registry.StatusRunning {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := state(); got != registry.StatusRunning {
		t.Fatalf("state with the connection open = %s, want running", got)
	}
	a.cs.Close()
	time.Sleep(50 * time.Millisecond) // the release after the close
	advance(2 * time.Minute)
	time.Sleep(20 * time.Millisecond)
	if got := state(); got != registry.StatusStale {
		t.Errorf("state after the connection closed = %s, want stale", got)
	}
}
