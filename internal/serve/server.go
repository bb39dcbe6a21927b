package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
)

// DefaultPoll is how often Watch looks for changed bundles.
const DefaultPoll = time.Second

// DefaultSessionIdle is how long an HTTP session is kept without a
// request. A client that opens a session and goes away without ending it
// leaves the server holding it (its state, its streams); with no bound, a
// client that opens sessions in a loop grows the server without end. Half
// an hour outlasts an agent's pauses between calls.
const DefaultSessionIdle = 30 * time.Minute

// Name is the serverInfo name of the server.
const Name = "crystallize"

// Options configure a Server.
type Options struct {
	// Bundles are bundle directories, or directories whose immediate
	// subdirectories are bundles (a directory with a candidate.json is a
	// bundle).
	Bundles []string
	// Run is the template of every call's runner.Options: Config,
	// Tools, Getenv, Environ, StateDir, MaxSteps. Approve, Reject,
	// Prompter, DryRun, AllowUnapproved and RunID are reset: a call
	// runs an approved bundle for real and suspends at an approval.
	Run runner.Options
	// Log receives the server log: which bundles are served and why the
	// others are not, and each call. Nil discards it.
	Log io.Writer
	// Poll is Watch's interval; 0 means DefaultPoll.
	Poll time.Duration
	// Version is the serverInfo version.
	Version string
	// SessionIdle is how long an HTTP session (ListenHTTP) may go
	// without a request before the server closes it; the time a call
	// runs does not count. 0 means DefaultSessionIdle; a negative value
	// keeps sessions until the client ends them.
	SessionIdle time.Duration
	// Register, when set, is called with the workflow's name and the
	// name the calling MCP client gave in its handshake ("" when it gave
	// none) as each call starts, and returns the hooks that put the call in the live
	// session registry: OnStart and Inbox become the run's
	// runner.Options hooks, and End is called with its result (nil when
	// it was refused before its first step), so that a served call is
	// listed by "crystallize sessions" while it runs or waits for a
	// person, like a run started from the command line. The server does
	// not open the registry itself: the caller owns how a run is shown
	// there, and one implementation serves run, resume and serve alike.
	Register func(workflow, client string) Registration
	// Agents, when set, serves the session tools (session_register,
	// session_ask, session_check, session_end; see SessionTools) on it:
	// the calling agent registers in the live session registry and asks
	// a person for decisions through the inbox. Like Register it is the
	// caller's: the server never opens a registry itself.
	Agents *registry.Agents
}

// Registration is one call's place in the live session registry; any
// hook may be nil.
type Registration struct {
	OnStart func(runID string)
	Inbox   func(runstate.Message)
	End     func(*runstate.Outcome)
}

// Server is the MCP server of a set of bundle directories.
type Server struct {
	opts Options
	srv  *mcp.Server

	mu sync.Mutex
	// bundles is the state of every bundle directory seen, by path.
	bundles map[string]*state
	// served maps a tool name to the tool listed.
	served map[string]*Tool
	// refused maps the workflow name of a bundle that is not served to
	// why, for the error of a call naming it.
	refused map[string]string
	// bound maps an agent session to the connection whose end releases
	// it (see bind).
	bound map[string]*mcp.ServerSession
}

// state is the last evaluation of one bundle directory.
type state struct {
	print string
	tool  *Tool  // nil when not servable
	why   string // why not
	name  string // the workflow name, when known
}

// New returns a server with the bundles of opts loaded (Refresh has run).
func New(opts Options) *Server {
	if opts.Poll == 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	s := &Server{
		opts:    opts,
		bundles: map[string]*state{},
		served:  map[string]*Tool{},
		refused: map[string]string{},
		bound:   map[string]*mcp.ServerSession{},
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: Name, Version: opts.Version}, &mcp.ServerOptions{
		Instructions: "Each tool is a crystallized workflow a person reviewed and approved; calling it runs the recorded procedure deterministically instead of repeating its steps.",
		// Advertise tools (and their list changes) even while no bundle
		// is ready, so a client learns of the first one approved.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	s.srv.AddReceivingMiddleware(s.refuse)
	if opts.Agents != nil {
		s.addSessionTools()
	}
	s.Refresh()
	return s
}

// MCP returns the SDK server, to run on a transport or behind
// mcp.NewStreamableHTTPHandler.
func (s *Server) MCP() *mcp.Server { return s.srv }

// Listed returns the names of the tools served, sorted.
func (s *Server) Listed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.served))
	for n := range s.served {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Listing is what `crystallize serve --list --json` prints: every bundle
// found, served or not, as Status reports it.
type Listing struct {
	Bundles []Entry `json:"bundles"`
}

// Entry is one bundle as Status reports it.
type Entry struct {
	Dir    string `json:"dir"`
	Tool   string `json:"tool,omitempty"`
	Served bool   `json:"served"`
	Reason string `json:"reason,omitempty"`
	// Schema, Description and Annotations are the tool as listed.
	Schema      json.RawMessage      `json:"input_schema,omitempty"`
	Description string               `json:"description,omitempty"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
}

// Status lists every bundle directory found, served or not, by path.
func (s *Server) Status() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	dirs := make([]string, 0, len(s.bundles))
	for d := range s.bundles {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	out := make([]Entry, 0, len(dirs))
	for _, d := range dirs {
		st := s.bundles[d]
		e := Entry{Dir: d, Tool: st.name, Reason: st.why}
		if st.tool != nil && s.served[st.tool.MCP.Name] == st.tool {
			e.Served = true
			e.Schema, _ = st.tool.MCP.InputSchema.(json.RawMessage)
			e.Description = st.tool.MCP.Description
			e.Annotations = st.tool.MCP.Annotations
		}
		out = append(out, e)
	}
	return out
}

// dirs lists the bundle directories of opts.Bundles, sorted.
func (s *Server) dirs() []string {
	var out []string
	for _, root := range s.opts.Bundles {
		if isBundle(root) {
			out = append(out, filepath.Clean(root))
			continue
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			continue // reported by Check; a directory may come and go
		}
		for _, e := range entries {
			if p := filepath.Join(root, e.Name()); e.IsDir() && isBundle(p) {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

func isBundle(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, bundle.ManifestFile))
	return err == nil && st.Mode().IsRegular()
}

// Check reports directories of opts.Bundles that cannot be read.
func Check(dirs []string) error {
	var errs []error
	for _, d := range dirs {
		st, err := os.Stat(d)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("bundles: %w", err))
		case !st.IsDir():
			errs = append(errs, fmt.Errorf("bundles: %s is not a directory", d))
		}
	}
	return errors.Join(errs...)
}

// Refresh re-evaluates the bundles whose files changed, and adds and
// removes tools to match; the SDK notifies clients of the change.
func (s *Server) Refresh() {
	dirs := s.dirs()
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, d := range dirs {
		seen[d] = true
		fp := fingerprint(d)
		if st, ok := s.bundles[d]; ok && st.print == fp {
			continue
		}
		st := &state{print: fp}
		if ok, why := ready(d); !ok {
			st.why = why
		} else if t, err := LoadTool(d); err != nil {
			st.why = err.Error()
		} else {
			t.print = fp
			st.tool = t
		}
		st.name = workflowName(d, st.tool)
		s.bundles[d] = st
		if st.tool != nil {
			fmt.Fprintf(s.opts.Log, "serve: %s: ready, served as tool %s\n", d, st.tool.MCP.Name)
		} else {
			fmt.Fprintf(s.opts.Log, "serve: %s: not served: %s\n", d, st.why)
		}
	}
	for d := range s.bundles {
		if !seen[d] {
			fmt.Fprintf(s.opts.Log, "serve: %s: removed\n", d)
			delete(s.bundles, d)
		}
	}

	// The tools wanted now: the first ready bundle of each name.
	want := map[string]*Tool{}
	refused := map[string]string{}
	for _, d := range dirs {
		st := s.bundles[d]
		if st.tool == nil {
			if st.name != "" {
				refused[st.name] = fmt.Sprintf("bundle %s is not served: %s", d, st.why)
			}
			continue
		}
		name := st.tool.MCP.Name
		st.why = ""
		if s.reserved(name) {
			st.why = "tool name " + name + " is one of the session tools"
			fmt.Fprintf(s.opts.Log, "serve: %s: not served: %s\n", d, st.why)
			continue
		}
		if other, dup := want[name]; dup {
			st.why = "tool name " + name + " is already served from " + other.Dir
			fmt.Fprintf(s.opts.Log, "serve: %s: not served: %s\n", d, st.why)
			continue
		}
		want[name] = st.tool
	}
	for name, t := range s.served {
		if want[name] != t {
			s.srv.RemoveTools(name)
			delete(s.served, name)
		}
	}
	for name, t := range want {
		if _, ok := s.served[name]; ok {
			continue
		}
		s.srv.AddTool(t.MCP, s.handler(t))
		s.served[name] = t
	}
	for name := range refused {
		if _, ok := s.served[name]; ok {
			delete(refused, name)
		}
	}
	s.refused = refused
}

// workflowName is the tool name a bundle would have: the loaded
// workflow's, else the manifest's workflow name.
func workflowName(dir string, t *Tool) string {
	if t != nil {
		return t.MCP.Name
	}
	if b, err := bundle.Read(dir); err == nil {
		return b.Manifest.Workflow.Name
	}
	return ""
}

// Watch calls Refresh every opts.Poll until ctx is done.
func (s *Server) Watch(ctx context.Context) {
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.Refresh()
		}
	}
}

// refuse is receiving middleware: a tools/call naming a bundle that is
// not served is an error saying why, where the SDK would only say the
// tool is unknown.
func (s *Server) refuse(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				s.mu.Lock()
				why, refused := s.refused[r.Params.Name]
				_, served := s.served[r.Params.Name]
				s.mu.Unlock()
				if refused && !served {
					fmt.Fprintf(s.opts.Log, "serve: call of %s refused: %s\n", r.Params.Name, why)
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q is not available: %s", r.Params.Name, why)}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// handler runs t's workflow for one call.
func (s *Server) handler(t *Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The listing may be a second old: the bundle must still be
		// ready now. The verdict of the listing holds while the bundle's
		// bytes are the ones it was given for; otherwise it is decided
		// again and the workflow reloaded.
		w := t.Workflow
		if fingerprint(t.Dir) != t.print {
			if ok, why := ready(t.Dir); !ok {
				fmt.Fprintf(s.opts.Log, "serve: call of %s refused: %s\n", t.MCP.Name, why)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q is not available: bundle %s is not served: %s", t.MCP.Name, t.Dir, why)}
			}
			var err error
			if w, err = runner.Load(t.Dir); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q is not available: %v", t.MCP.Name, err)}
			}
		}
		params, err := arguments(req.Params.Arguments)
		if err != nil {
			return toolError(err.Error()), nil
		}
		var res *runner.Result
		if msg := checkTypes(t, params); msg != "" {
			return toolError(msg), nil
		}
		opts := s.opts.Run
		opts.Approve, opts.Reject, opts.Prompter = nil, nil, nil
		opts.DryRun, opts.AllowUnapproved, opts.RunID = false, false, ""
		if opts.Log == nil {
			opts.Log = s.opts.Log
		}
		if s.opts.Register != nil {
			client := ""
			if ci := req.ClientInfo(); ci != nil {
				client = ci.Name
			}
			reg := s.opts.Register(w.Name, client)
			opts.OnStart = chain(opts.OnStart, reg.OnStart)
			opts.Inbox = chain(opts.Inbox, reg.Inbox)
			if reg.End != nil {
				defer func() { reg.End(res.Outcome()) }()
			}
		}
		res, err = runner.Run(ctx, w, params, opts)
		if res == nil {
			// Refused before the first step: parameters, bindings,
			// grants. Nothing ran and nothing was recorded.
			fmt.Fprintf(s.opts.Log, "serve: call of %s refused: %v\n", t.MCP.Name, err)
			return toolError(err.Error()), nil
		}
		fmt.Fprintf(s.opts.Log, "serve: call of %s: run %s %s\n", t.MCP.Name, res.RunID, res.Status)
		return result(res, s.stateDir()), nil
	}
}

// chain calls a, then b, either of which may be nil: the template's hook
// and the registry's both see the run.
func chain[T any](a, b func(T)) func(T) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(v T) { a(v); b(v) }
}

func (s *Server) stateDir() string {
	if s.opts.Run.StateDir != "" {
		return s.opts.Run.StateDir
	}
	return runner.DefaultStateDir
}

// arguments decodes a call's arguments, keeping numbers exact.
func arguments(raw json.RawMessage) (runner.Params, error) {
	params := runner.Params{}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return params, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("arguments: not a JSON object")
	}
	for k, v := range obj {
		params[k] = v
	}
	return params, nil
}

// checkTypes checks each argument against its property's type, so a
// wrong type is refused before the workflow starts, with every problem.
func checkTypes(t *Tool, params runner.Params) string {
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	raw, _ := t.MCP.InputSchema.(json.RawMessage)
	if json.Unmarshal(raw, &schema) != nil {
		return ""
	}
	var bad []string
	for _, k := range sortedKeys(params) {
		p, ok := schema.Properties[k]
		if !ok || p.Type == "" {
			continue
		}
		if got := typeOf(params[k]); got != p.Type && !(p.Type == "number" && got == "integer") {
			bad = append(bad, fmt.Sprintf("$.%s: %s, want %s", k, got, p.Type))
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return "arguments: " + strings.Join(bad, "; ")
}

func typeOf(v any) string {
	switch v := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError:           true,
		Content:           []mcp.Content{&mcp.TextContent{Text: msg}},
		StructuredContent: map[string]any{"status": "refused", "error": msg},
	}
}

// ToolResult is a run as the structured content of an MCP tool result:
// the run's runner.Summary, the very object `crystallize run --json`
// prints, and for a run that waits for an approval, the approval and the
// command a person runs to continue it.
type ToolResult struct {
	runner.Summary
	// Approval is the approval the run waits for; absent otherwise.
	Approval *Approval `json:"approval,omitempty"`
	// Resume is the crystallize resume command, with --approve, that
	// continues a suspended run; absent otherwise.
	Resume string `json:"resume,omitempty"`
}

// Approval names the approval a suspended run waits for.
type Approval struct {
	Step     int    `json:"step"`
	Boundary string `json:"boundary"`
	Prompt   string `json:"prompt"`
}

// result is a run as a tool result: structured content and a one-line
// summary. A pending approval is not an error: the run is waiting, and
// the result says how to continue it.
func result(r *runner.Result, stateDir string) *mcp.CallToolResult {
	sc := &ToolResult{Summary: r.Summary()}
	summary := fmt.Sprintf("%s: run %s %s after %d steps (%d tool calls, %d model calls, %d approvals)", r.Workflow, r.RunID, r.Status, r.Steps, r.ToolCalls, r.ModelCalls, r.Approvals)
	isError := false
	switch {
	case r.Pending != nil:
		resume := runner.ResumeCommand(stateDir, r.RunID)
		sc.Approval = &Approval{Step: r.Pending.Step, Boundary: r.Pending.Boundary, Prompt: r.Pending.Prompt}
		sc.Resume = resume + " --approve " + r.Pending.Boundary
		summary = fmt.Sprintf("%s: run %s is waiting for approval %s at step %d; a person continues it with: %s --approve %s (or --reject %s)", r.Workflow, r.RunID, r.Pending.Boundary, r.Pending.Step, resume, r.Pending.Boundary, r.Pending.Boundary)
	case r.Status != runstate.StatusCompleted:
		isError = true
		summary += ": " + r.Error
	default:
		if out, err := json.Marshal(r.Output); err == nil && r.Output != nil {
			summary += "; output " + string(out)
		}
	}
	return &mcp.CallToolResult{
		IsError:           isError,
		Content:           []mcp.Content{&mcp.TextContent{Text: summary}},
		StructuredContent: sc,
	}
}
