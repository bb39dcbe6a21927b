package runtime

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
// The SDK's sessions are safe for concurrent use, but the host calls tools
// one at a time from the workflow's thread, so the session table needs no
// lock.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/stepvalue"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrMCP is wrapped by the errors of MCP bindings: a server that cannot be
// started or reached, a tool it does not declare, a call that fails or
// that the tool reports as an error. The message names the server and the
// tool.
var ErrMCP = errors.New("mcp call failed")

// mcpToolName returns the MCP tool a call of name through the binding t,
// found under the config key pattern, calls: t.Tool when it is set; for
// a glob pattern, name without the pattern's literal prefix (the text
// before its first metacharacter), so "docs.search" through "docs.*" calls
// "search"; otherwise, and when stripping would leave nothing, name
// itself.
func mcpToolName(pattern string, t *runconfig.ToolBinding, name string) string {
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
func (h *executor) mcpCallTool(name string, b *binding, args map[string]any) (any, error) {
	server, tool := b.tool.MCP, mcpToolName(b.pattern, b.tool, name)
	s := h.mcpSession(server)
	if s.err != nil {
		return nil, s.err
	}
	if _, ok := s.tools[tool]; !ok {
		return nil, &mcpError{server: server, tool: tool, msg: fmt.Sprintf("the server declares no such tool (it declares: %s)", orNone(sortedKeys(s.tools)))}
	}
	timeout := b.tool.ParsedTimeout()
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
func (h *executor) mcpSession(server string) *mcpServer {
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
func (h *executor) openMCP(server string) *mcpServer {
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
		argv, dir, env, err := h.expandCommand(&runconfig.ToolBinding{Command: cfg.Command, Cwd: cfg.Cwd, Env: cfg.Env}, nil)
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

// closeMCP closes the run's sessions, which stops the servers it started.
// A server that fails to stop cleanly does not fail the run: its work,
// recorded call by call, is done.
func (h *executor) closeMCP() {
	for _, name := range sortedKeys(h.servers) {
		if s := h.servers[name]; s.session != nil {
			_ = s.session.Close()
		}
	}
	h.servers = nil
}

// recordMCP adds, to the action and session phase of the call just
// recorded, the MCP server and tool it called and the tool's annotations
// (when the server was reached). It does nothing for other bindings.
func (h *host) recordMCP(b *binding, name string) {
	if b.tool == nil || b.tool.MCP == "" || len(h.actions) == 0 {
		return
	}
	server, tool := b.tool.MCP, mcpToolName(b.pattern, b.tool, name)
	m := map[string]any{"server": server, "tool": tool}
	line := "MCP server " + codeSpan(server) + ", tool " + codeSpan(tool)
	if s := h.tools.servers[server]; s != nil && s.tools[tool] != nil {
		ann := annotations(s.tools[tool])
		m["annotations"] = ann
		var hints []string
		for _, k := range sortedKeys(ann) {
			if v, ok := ann[k].(bool); ok {
				hints = append(hints, fmt.Sprintf("%s=%t", k, v))
			}
		}
		line += ": " + strings.Join(hints, ", ")
	}
	h.actions[len(h.actions)-1].Metadata["mcp"] = m
	h.phases[len(h.phases)-1].noteAfterCalls(line)
}

// annotations returns a tool's hints as recorded: every hint, with the
// protocol's default where the server leaves it unset (destructive and
// open-world default true, read-only and idempotent false), and the
// title when there is one. The hints are the server's claims, recorded
// for review and mining; the host does not trust them for capabilities.
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

// CheckMCP is Check, and it also asks the servers of MCP bindings: a name
// bound to an MCP server counts as bound only when the server declares
// the tool the name calls. It starts each server those names need once
// (with opts.Environ and opts.HTTPClient, as a run would), lists its
// tools and closes it. The result joins an *UnboundError listing every
// unbound name and an error for each server that could not be started or
// listed (wrapping ErrMCP); the names bound to such a server are not
// listed as unbound, since whether they are is unknown.
func CheckMCP(ctx context.Context, w *Workflow, cfg *runconfig.Config, opts Options) error {
	if cfg == nil {
		cfg = &runconfig.Config{Dir: "."}
	}
	e := newExecutor(ctx, cfg, opts, &scrubber{})
	defer e.closeMCP()
	var unbound []string
	var errs []error
	for _, name := range w.Tools {
		b, ok := resolve(cfg, opts.Tools, name)
		if !ok {
			unbound = append(unbound, name)
			continue
		}
		if b.tool == nil || b.tool.MCP == "" {
			continue
		}
		s, seen := e.servers[b.tool.MCP]
		if !seen {
			s = e.mcpSession(b.tool.MCP)
			if s.err != nil {
				errs = append(errs, s.err)
			}
		}
		if s.err == nil && s.tools[mcpToolName(b.pattern, b.tool, name)] == nil {
			unbound = append(unbound, name)
		}
	}
	if len(unbound) > 0 {
		errs = append([]error{&UnboundError{Names: unbound}}, errs...)
	}
	return errors.Join(errs...)
}

// tailBuffer keeps the last max bytes written to it. A command's stderr
// is copied into it by os/exec's goroutine while the host reads it, hence
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
