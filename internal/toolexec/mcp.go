package toolexec

// MCP bindings: a tool bound with mcp = "name" is a tool of the Model
// Context Protocol server [mcp.name], reached with the official Go SDK.
//
// A run opens one session per server, lazily, at the first call that needs
// it, and closes every session when the workflow returns: starting a server
// (often "go run" or "npx") costs far more than a call, and a run that
// never reaches a server's tools should not pay for it. Opening a session
// also lists the server's tools, once, because the listing carries the
// annotations recorded with every call (readOnlyHint, destructiveHint,
// idempotentHint, openWorldHint) and lets a call of a tool the server does
// not declare fail with the names it does declare instead of a protocol
// error. A server that fails to start is not retried within the run: every
// call that needs it fails with the same error.
//
// The SDK's sessions are safe for concurrent use, but the runner calls tools
// one at a time from the workflow's thread, so the session table needs no
// lock.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
)

// ErrMCP is wrapped by the errors of MCP bindings: a server that cannot be
// started or reached, a tool it does not declare, a call that fails or
// that the tool reports as an error. The message names the server and the
// tool.
var ErrMCP = errors.New("mcp call failed")

// MCPToolName returns the MCP tool a call of name through the binding t,
// found under the config key pattern, calls: t.Tool when it is set; for
// a glob pattern, name without the pattern's literal prefix (the text
// before its first metacharacter), so "docs.search" through "docs.*" calls
// "search"; otherwise, and when stripping would leave nothing, name
// itself.
func MCPToolName(pattern string, t *runconfig.ToolBinding, name string) string {
	if t.Tool != "" {
		return t.Tool
	}
	i := strings.IndexAny(pattern, "*?[")
	if i < 0 {
		return name
	}
	if rest, ok := strings.CutPrefix(name, pattern[:i]); ok && rest != "" {
		return rest
	}
	return name
}

// mcpServer is a run's session with one server.
type mcpServer struct {
	session *mcp.ClientSession
	tools   map[string]*mcp.Tool
	stderr  *tailBuffer // nil for HTTP servers
	err     error       // why the server could not be started
}

// mcpCallTool calls the MCP tool bound to name. The result is the call's
// structured content when it has some, else its text (parsed as JSON when
// it is JSON, the texts of several items joined by newlines), else its
// content items as JSON objects.
func (h *Executor) mcpCallTool(name string, b *Binding, args map[string]any) (any, error) {
	server, tool := b.Tool.MCP, MCPToolName(b.Pattern, b.Tool, name)
	s := h.mcpSession(server)
	if s.err != nil {
		return nil, s.err
	}
	if _, ok := s.tools[tool]; !ok {
		return nil, &mcpError{server: server, tool: tool, msg: fmt.Sprintf("the server declares no such tool (it declares: %s)", namesOrNone(slices.Sorted(maps.Keys(s.tools))))}
	}
	timeout := b.Tool.ParsedTimeout()
	if timeout == 0 {
		timeout = runconfig.DefaultToolTimeout
	}
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	switch {
	case err != nil && h.ctx.Err() != nil:
		return nil, h.ctx.Err()
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return nil, &mcpError{server: server, tool: tool, msg: fmt.Sprintf("timed out after %s", timeout)}
	case err != nil:
		msg := err.Error()
		if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			msg = "the server went away: " + msg
			// Closing waits for the process, so its stderr is all
			// read before stderrNote quotes it.
			_ = s.session.Close()
		}
		return nil, &mcpError{server: server, tool: tool, msg: msg + s.stderrNote(), err: err}
	case res.IsError:
		return nil, &mcpError{server: server, tool: tool, msg: "the tool reported an error: " + cmp.Or(contentText(res.Content), "no message")}
	}
	return mcpResult(res), nil
}

// mcpSession returns the run's session with server, opening it at the
// first call.
func (h *Executor) mcpSession(server string) *mcpServer {
	if s, ok := h.servers[server]; ok {
		return s
	}
	if h.servers == nil {
		h.servers = map[string]*mcpServer{}
	}
	s := h.openMCP(server)
	h.servers[server] = s
	return s
}

// openMCP starts or connects to server and lists its tools. The session
// outlives the start timeout: a command server runs until the run's
// context ends or closeMCP closes it.
func (h *Executor) openMCP(server string) *mcpServer {
	cfg := h.cfg.MCP[server]
	s := &mcpServer{}
	fail := func(msg string, err error) *mcpServer {
		s.err = &mcpError{server: server, msg: msg + s.stderrNote(), err: err}
		if s.session != nil {
			_ = s.session.Close()
			s.session = nil
		}
		return s
	}
	var transport mcp.Transport
	if cfg.URL != "" {
		transport = &mcp.StreamableClientTransport{
			Endpoint:   cfg.URL,
			HTTPClient: h.httpClient,
			// Calls are request and response; the standalone
			// stream would only carry notifications nobody reads.
			DisableStandaloneSSE: true,
		}
	} else {
		argv, dir, env, err := h.ExpandCommand(&runconfig.ToolBinding{Command: cfg.Command, Cwd: cfg.Cwd, Env: cfg.Env}, nil)
		if err != nil {
			return fail("starting: "+err.Error(), err)
		}
		cmd := exec.CommandContext(h.ctx, argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = env
		s.stderr = &tailBuffer{max: maxStderr}
		cmd.Stderr = s.stderr
		cmd.WaitDelay = time.Second
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	}
	timeout := cmp.Or(cfg.ParsedTimeout(), runconfig.DefaultMCPStartTimeout)
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "crystallize", Version: "v0"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && h.ctx.Err() == nil {
			return fail(fmt.Sprintf("starting: no answer within %s", timeout), err)
		}
		return fail("starting: "+err.Error(), err)
	}
	s.session = session
	s.tools = map[string]*mcp.Tool{}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return fail("listing tools: "+err.Error(), err)
		}
		s.tools[t.Name] = t
	}
	return s
}

// CloseMCP closes the run's sessions, which stops the servers it started.
// A server that fails to stop cleanly does not fail the run: its work,
// recorded call by call, is done.
func (h *Executor) CloseMCP() {
	for _, name := range slices.Sorted(maps.Keys(h.servers)) {
		if s := h.servers[name]; s.session != nil {
			_ = s.session.Close()
		}
	}
	h.servers = nil
}

// annotations returns a tool's hints as recorded: every hint, with the
// protocol's default where the server leaves it unset (destructive and
// open-world default true, read-only and idempotent false), and the
// title when there is one. The hints are the server's claims, recorded
// for review and mining; the runner does not trust them for capabilities.
func annotations(t *mcp.Tool) map[string]any {
	m := map[string]any{
		"readOnlyHint": false, "destructiveHint": true,
		"idempotentHint": false, "openWorldHint": true,
	}
	a := t.Annotations
	if a == nil {
		return m
	}
	m["readOnlyHint"] = a.ReadOnlyHint
	m["idempotentHint"] = a.IdempotentHint
	if a.DestructiveHint != nil {
		m["destructiveHint"] = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		m["openWorldHint"] = *a.OpenWorldHint
	}
	if a.Title != "" {
		m["title"] = a.Title
	}
	return m
}

// mcpResult converts a tool's result to the step's value, decoding JSON
// as parseOutput does (numbers stay exact).
func mcpResult(res *mcp.CallToolResult) any {
	if res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			return stepvalue.ParseOutput(data)
		}
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	if len(texts) > 0 && len(texts) == len(res.Content) {
		return stepvalue.ParseOutput([]byte(strings.Join(texts, "\n")))
	}
	if len(res.Content) == 0 {
		return nil
	}
	data, err := json.Marshal(res.Content)
	if err != nil {
		return nil
	}
	return stepvalue.ParseOutput(data)
}

// contentText joins the text items of content.
func contentText(content []mcp.Content) string {
	var texts []string
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, strings.TrimSpace(t.Text))
		}
	}
	return strings.Join(texts, "\n")
}

// stderrNote quotes the tail of a command server's stderr, which says
// why a server that exited did.
func (s *mcpServer) stderrNote() string {
	if s.stderr == nil {
		return ""
	}
	if msg := strings.TrimSpace(s.stderr.String()); msg != "" {
		return "; server stderr: " + msg
	}
	return ""
}

// mcpError is the error of an MCP binding.
type mcpError struct {
	server, tool, msg string
	err               error
}

func (e *mcpError) Error() string {
	if e.tool == "" {
		return fmt.Sprintf("mcp server %s: %s", e.server, e.msg)
	}
	return fmt.Sprintf("mcp server %s: tool %s: %s", e.server, e.tool, e.msg)
}

func (e *mcpError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrMCP}
	}
	return []error{ErrMCP, e.err}
}

// tailBuffer keeps the last max bytes written to it. A command's stderr
// is copied into it by os/exec's goroutine while the runner reads it, hence
// the lock.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// namesOrNone lists names for a message, "none" when there are none.
func namesOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// MCPTool opens the session of server unless a call already tried to,
// and reports whether the server declares tool; err is why the server
// cannot be used, and opened whether this call was the one that tried to
// start it.
func (h *Executor) MCPTool(server, tool string) (declared, opened bool, err error) {
	s, seen := h.servers[server]
	if !seen {
		s = h.mcpSession(server)
	}
	if s.err != nil {
		return false, !seen, s.err
	}
	return s.tools[tool] != nil, !seen, nil
}

// MCPAnnotations returns the annotations of tool as the open session of
// server lists them, and false when no open session declares the tool.
func (h *Executor) MCPAnnotations(server, tool string) (map[string]any, bool) {
	if s := h.servers[server]; s != nil && s.tools[tool] != nil {
		return annotations(s.tools[tool]), true
	}
	return nil, false
}
