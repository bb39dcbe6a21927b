package serve

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/registry"
)

// The session tools let the agent on the other side of the connection
// (Claude Code, any MCP client) appear in the live session registry and
// ask a person for decisions through the inbox. They are served next to
// the workflows when Options.Agents is set; a bundle whose workflow has
// one of their names is not served.
const (
	ToolRegister = "session_register"
	ToolAsk      = "session_ask"
	ToolCheck    = "session_check"
	ToolEnd      = "session_end"
)

// SessionTools are the names of the session tools, sorted.
var SessionTools = []string{ToolAsk, ToolCheck, ToolEnd, ToolRegister}

// RegisterArgs are session_register's arguments.
type RegisterArgs struct {
	Agent  string `json:"agent,omitempty" jsonschema:"the agent registering (claude-code, codex…); default the name the MCP client gave in its handshake"`
	Model  string `json:"model,omitempty" jsonschema:"the model behind the agent"`
	Branch string `json:"branch,omitempty" jsonschema:"the git branch the agent works on; default the branch of cwd"`
	Cwd    string `json:"cwd,omitempty" jsonschema:"the agent's working directory, an absolute path"`
}

// RegisterResult is session_register's structured result.
type RegisterResult struct {
	SessionID string `json:"session_id"`
}

// AskArgs are session_ask's arguments.
type AskArgs struct {
	SessionID      string   `json:"session_id" jsonschema:"the id session_register returned"`
	Question       string   `json:"question" jsonschema:"what to ask the person, at most 4096 bytes"`
	Options        []string `json:"options" jsonschema:"the choices, 2 to 16, each one line of at most 200 bytes"`
	Default        string   `json:"default,omitempty" jsonschema:"the option that holds when nobody answers within timeout_seconds"`
	TimeoutSeconds int64    `json:"timeout_seconds,omitempty" jsonschema:"how long the person has before default holds; 0 waits for an answer"`
}

// AskResult is session_ask's structured result.
type AskResult struct {
	Item  int64  `json:"item"`
	State string `json:"state"`
}

// CheckArgs are session_check's arguments.
type CheckArgs struct {
	SessionID string `json:"session_id" jsonschema:"the id session_register returned"`
	Item      int64  `json:"item" jsonschema:"the item session_ask returned"`
}

// EndArgs are session_end's arguments.
type EndArgs struct {
	SessionID string `json:"session_id" jsonschema:"the id session_register returned"`
	Status    string `json:"status" jsonschema:"how the session ended: completed, failed or cancelled"`
}

// EndResult is session_end's structured result.
type EndResult struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
}

// addSessionTools adds the session tools to the SDK server.
func (s *Server) addSessionTools() {
	a := s.opts.Agents
	closed := false
	mcp.AddTool(s.srv, &mcp.Tool{
		Name: ToolRegister,
		Description: "Register this agent session with crystallize, so a person sees it in `crystallize status` and `crystallize sessions` " +
			"and can answer its questions (session_ask). Returns a session_id for the other session tools. " +
			"The session stays live while this connection is open; call session_end when done.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &closed},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in RegisterArgs) (*mcp.CallToolResult, RegisterResult, error) {
		if ci := req.ClientInfo(); in.Agent == "" && ci != nil {
			in.Agent = ci.Name
		}
		id, err := a.Register(ctx, registry.Agent{Name: in.Agent, Model: in.Model, Branch: in.Branch, Workspace: in.Cwd})
		if err != nil {
			return nil, RegisterResult{}, s.sessionError(ToolRegister, err)
		}
		s.bind(req.Session, id)
		fmt.Fprintf(s.opts.Log, "serve: agent session %s registered\n", id)
		return text("registered as session %s", id), RegisterResult{SessionID: id}, nil
	})
	mcp.AddTool(s.srv, &mcp.Tool{
		Name: ToolAsk,
		Description: "Ask a person to choose among options. Returns at once with the inbox item id; the person answers in " +
			"`crystallize review` or `crystallize session inbox answer`, and session_check reads the answer. " +
			"With default and timeout_seconds, default holds when nobody answers in time.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &closed},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in AskArgs) (*mcp.CallToolResult, AskResult, error) {
		if in.TimeoutSeconds < 0 || in.TimeoutSeconds > int64(registry.MaxTimeout/time.Second) {
			return nil, AskResult{}, s.sessionError(ToolAsk, fmt.Errorf("%w: timeout_seconds %d: want 0 (none) up to %d", registry.ErrRefused, in.TimeoutSeconds, int64(registry.MaxTimeout/time.Second)))
		}
		q := registry.Question{Text: in.Question, Options: in.Options, Default: in.Default, Timeout: time.Duration(in.TimeoutSeconds) * time.Second}
		item, err := a.Ask(ctx, in.SessionID, q)
		if err != nil {
			return nil, AskResult{}, s.sessionError(ToolAsk, err)
		}
		s.bind(req.Session, in.SessionID)
		return text("asked as inbox item %d; read the answer with %s", item, ToolCheck), AskResult{Item: item, State: registry.ReplyPending}, nil
	})
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        ToolCheck,
		Description: "Read the answer to a question of session_ask: state pending, answered (with the option, who answered and why) or dismissed.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in CheckArgs) (*mcp.CallToolResult, registry.Reply, error) {
		r, err := a.Poll(ctx, in.SessionID, in.Item)
		if err != nil {
			return nil, registry.Reply{}, s.sessionError(ToolCheck, err)
		}
		s.bind(req.Session, in.SessionID)
		switch r.State {
		case registry.ReplyAnswered:
			return text("item %d answered: %s (by %s)", r.Item, r.Option, r.By), r, nil
		case registry.ReplyDismissed:
			return text("item %d dismissed: %s", r.Item, r.Reason), r, nil
		}
		return text("item %d is pending", r.Item), r, nil
	})
	mcp.AddTool(s.srv, &mcp.Tool{
		Name:        ToolEnd,
		Description: "End the agent session with its final status (completed, failed or cancelled); its unanswered questions are dismissed.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &closed},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in EndArgs) (*mcp.CallToolResult, EndResult, error) {
		if err := a.End(ctx, in.SessionID, in.Status); err != nil {
			return nil, EndResult{}, s.sessionError(ToolEnd, err)
		}
		s.unbind(in.SessionID)
		fmt.Fprintf(s.opts.Log, "serve: agent session %s ended %s\n", in.SessionID, in.Status)
		return text("session %s ended %s", in.SessionID, in.Status), EndResult(in), nil
	})
}

// sessionError is err as the tool error a model reads (the SDK turns a
// returned error into a result with isError), logged.
func (s *Server) sessionError(tool string, err error) error {
	fmt.Fprintf(s.opts.Log, "serve: call of %s refused: %v\n", tool, err)
	return err
}

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// bind ties session id's heartbeat to the connection ss that last called
// for it: when ss closes, the server stops renewing it (Agents.Release),
// and the session turns stale unless a call comes again.
func (s *Server) bind(ss *mcp.ServerSession, id string) {
	if ss == nil {
		return
	}
	s.mu.Lock()
	if s.bound[id] == ss {
		s.mu.Unlock()
		return
	}
	s.bound[id] = ss
	s.mu.Unlock()
	go func() {
		ss.Wait()
		s.mu.Lock()
		mine := s.bound[id] == ss
		if mine {
			delete(s.bound, id)
		}
		s.mu.Unlock()
		if mine {
			s.opts.Agents.Release(id)
		}
	}()
}

// unbind forgets the connection of an ended session.
func (s *Server) unbind(id string) {
	s.mu.Lock()
	delete(s.bound, id)
	s.mu.Unlock()
}

// reserved reports whether a workflow name is a session tool's.
func (s *Server) reserved(name string) bool {
	return s.opts.Agents != nil && slices.Contains(SessionTools, name)
}
