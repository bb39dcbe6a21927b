package capture

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/crystallize-dev/crystallize/internal/atomicfile"
	"github.com/crystallize-dev/crystallize/internal/redact"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Agent is the metadata.agent of every trace the proxy writes.
const Agent = "mcp-capture"

// DefaultOut is where sessions are written when Options.Out is empty.
const DefaultOut = ".crystallize/captures"

// SideEffectKind is the kind of the side effect recorded for a call of a
// tool that is not read-only.
const SideEffectKind = "mcp_tool"

// Options configure a Recorder. The zero value writes to DefaultOut with
// the real clock.
type Options struct {
	// Out is the directory session traces are written to.
	Out string
	// Server names the upstream when its initialize response does not
	// (serverInfo.name is preferred); the cli passes the command's base
	// name or the URL's host.
	Server string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ID names the session; "" means a new id from the time and 48
	// random bits.
	ID string
}

// Recorder is the Observer that turns one client session into a trace.
// It is safe for the concurrent calls the relay makes.
type Recorder struct {
	opts    Options
	file    string
	started time.Time

	mu       sync.Mutex
	server   string
	version  string
	client   string
	protocol string
	// tools holds the annotations of each tool the server listed; a tool
	// listed without any has the protocol's defaults.
	tools map[string]*annotations
	// pending are the client's requests awaiting a response, by id.
	pending map[string]*pendingCall
	actions []trace.Action
	n       int
	// problems are what the recorder could not read (a malformed
	// tools/call or result); they go into the trace's metadata, since
	// the relay forwards the message anyway.
	problems []string
	dirty    bool
	// cancelledCalls counts tools/call requests the client cancelled.
	cancelledCalls int
	// changed is signalled (without blocking) when a call completes, so
	// Run's writer rewrites the trace.
	changed chan struct{}
}

// annotations are the hints of a tool, with the protocol's defaults for
// hints the server leaves unset.
type annotations struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	Title                                        string
}

type pendingCall struct {
	method string
	tool   string
	args   any
	start  time.Time
}

// NewRecorder returns a recorder for one session, written to
// <Out>/<id>.json.
func NewRecorder(opts Options) *Recorder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Out == "" {
		opts.Out = DefaultOut
	}
	start := opts.Now()
	if opts.ID == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		opts.ID = "mcp-" + start.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
	}
	return &Recorder{
		opts:    opts,
		file:    filepath.Join(opts.Out, opts.ID+".json"),
		started: start,
		server:  opts.Server,
		tools:   map[string]*annotations{},
		pending: map[string]*pendingCall{},
		changed: make(chan struct{}, 1),
	}
}

// File is the path the session's trace is written to.
func (r *Recorder) File() string { return r.file }

// idKey is a map key for a request id: numbers and strings are distinct
// ids even when they print the same.
func idKey(id jsonrpc.ID) string {
	return fmt.Sprintf("%T:%v", id.Raw(), id.Raw())
}

// Observe implements Observer.
func (r *Recorder) Observe(d Direction, msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if d == FromClient && m.Method == "notifications/cancelled" {
			r.cancelled(m)
			return
		}
		if d != FromClient || !m.ID.IsValid() {
			return // notifications and server-to-client requests are relayed, not recorded
		}
		switch m.Method {
		case "initialize", "server/discover", "tools/list", "tools/call":
		default:
			return
		}
		p := &pendingCall{method: m.Method, start: r.opts.Now()}
		if m.Method == "initialize" || m.Method == "server/discover" {
			r.clientInfo(m.Params)
		}
		if m.Method == "tools/call" {
			var params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			if err := json.Unmarshal(m.Params, &params); err != nil || params.Name == "" {
				r.problem("tools/call %v: params without a tool name", m.ID.Raw())
				return
			}
			p.tool = params.Name
			if len(params.Arguments) > 0 {
				v, err := decode(params.Arguments)
				if err != nil {
					r.problem("tools/call %v (%s): arguments: %v", m.ID.Raw(), params.Name, err)
				}
				p.args, _ = redact.Value(v)
			}
		}
		r.mu.Lock()
		r.pending[idKey(m.ID)] = p
		r.mu.Unlock()
	case *jsonrpc.Response:
		if d != FromServer {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		k := idKey(m.ID)
		p, ok := r.pending[k]
		if !ok {
			return
		}
		delete(r.pending, k)
		if p.method != "tools/call" {
			r.upstreamFailed(p, m)
		}
		r.serverInfo(m)
		switch p.method {
		case "initialize":
			r.initialized(m)
		case "tools/list":
			r.listed(m)
		case "tools/call":
			r.called(p, m)
		}
	}
}

// upstreamFailed notes, among the capture's problems, a request other
// than a call that failed because the endpoint answered with an HTTP
// error that was not the server's, or did not answer; r.mu is held.
func (r *Recorder) upstreamFailed(p *pendingCall, m *jsonrpc.Response) {
	we, ok := m.Error.(*jsonrpc.Error)
	if !ok || proxyFailure(we) == nil {
		return
	}
	msg, _ := redact.Value(we.Message)
	r.problems = append(r.problems, fmt.Sprintf("%s %v: %v", p.method, m.ID.Raw(), msg))
	r.dirty = true
}

// Outstanding is the number of requests from the client (of the methods
// the recorder follows) the server has not answered yet.
func (r *Recorder) Outstanding() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// clientInfo reads the client's name from an initialize request's
// params, or from the _meta of a discovery request (protocol 2026-07-28).
func (r *Recorder) clientInfo(params json.RawMessage) {
	type info struct {
		Name string `json:"name"`
	}
	var p struct {
		ClientInfo *info `json:"clientInfo"`
		Meta       struct {
			ClientInfo *info `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case p.ClientInfo != nil && p.ClientInfo.Name != "":
		r.client = p.ClientInfo.Name
	case p.Meta.ClientInfo != nil && p.Meta.ClientInfo.Name != "":
		r.client = p.Meta.ClientInfo.Name
	}
}

// cancelled forgets a request the client cancelled: the server need not
// answer it, and a call cut short is not a step that happened.
func (r *Recorder) cancelled(m *jsonrpc.Request) {
	var params struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(m.Params, &params) != nil {
		return
	}
	id, err := jsonrpc.MakeID(params.RequestID)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := idKey(id)
	if p, ok := r.pending[k]; ok {
		delete(r.pending, k)
		if p.method == "tools/call" {
			r.cancelledCalls++
			r.dirty = true
		}
	}
}

// problem records something the recorder could not read.
func (r *Recorder) problem(format string, args ...any) {
	r.mu.Lock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
	r.dirty = true
	r.mu.Unlock()
}

func (r *Recorder) initialized(m *jsonrpc.Response) {
	if m.Error != nil {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return
	}
	if res.ServerInfo.Name != "" {
		r.server = res.ServerInfo.Name
	}
	r.version = res.ServerInfo.Version
	r.protocol = res.ProtocolVersion
}

// serverInfo reads the server's name and version from a result's _meta,
// where servers of protocol 2026-07-28 and later put it on every result
// (and discovery replaces initialize); r.mu is held.
func (r *Recorder) serverInfo(m *jsonrpc.Response) {
	if m.Error != nil {
		return
	}
	var res struct {
		Meta struct {
			ServerInfo *struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/serverInfo"`
			Protocol string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return
	}
	if si := res.Meta.ServerInfo; si != nil && si.Name != "" {
		r.server, r.version = si.Name, si.Version
	}
	if res.Meta.Protocol != "" {
		r.protocol = res.Meta.Protocol
	}
}

func (r *Recorder) listed(m *jsonrpc.Response) {
	if m.Error != nil {
		return
	}
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations *struct {
				ReadOnlyHint    bool   `json:"readOnlyHint"`
				DestructiveHint *bool  `json:"destructiveHint"`
				IdempotentHint  bool   `json:"idempotentHint"`
				OpenWorldHint   *bool  `json:"openWorldHint"`
				Title           string `json:"title"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return
	}
	for _, t := range res.Tools {
		a := &annotations{Destructive: true, OpenWorld: true}
		if h := t.Annotations; h != nil {
			a.ReadOnly, a.Idempotent, a.Title = h.ReadOnlyHint, h.IdempotentHint, h.Title
			if h.DestructiveHint != nil {
				a.Destructive = *h.DestructiveHint
			}
			if h.OpenWorldHint != nil {
				a.OpenWorld = *h.OpenWorldHint
			}
		}
		r.tools[t.Name] = a
	}
}

// called records a completed tools/call; r.mu is held.
func (r *Recorder) called(p *pendingCall, m *jsonrpc.Response) {
	end := r.opts.Now()
	r.n++
	dur := end.Sub(p.start).Milliseconds()
	meta := map[string]any{}
	mcpMeta := map[string]any{"server": r.server, "tool": p.tool}
	a := trace.Action{
		ID:         fmt.Sprintf("call-%d", r.n),
		Kind:       trace.KindToolCall,
		Name:       p.tool,
		Timestamp:  p.start.UTC().Format(time.RFC3339Nano),
		DurationMS: &dur,
		Metadata:   meta,
	}
	switch args := p.args.(type) {
	case map[string]any:
		a.Parameters = args
	case nil:
		a.Parameters = map[string]any{}
	default:
		// Not an object: the protocol wants one, but the call was
		// relayed as written, so it is recorded as written.
		a.Parameters = map[string]any{}
		a.Inputs = args
	}
	ann, known := r.tools[p.tool]
	if known && ann != nil {
		mcpMeta["annotations"] = map[string]any{
			"readOnlyHint": ann.ReadOnly, "destructiveHint": ann.Destructive,
			"idempotentHint": ann.Idempotent, "openWorldHint": ann.OpenWorld,
		}
		if ann.Title != "" {
			mcpMeta["annotations"].(map[string]any)["title"] = ann.Title
		}
		meta["idempotent"] = ann.Idempotent
	}
	meta["mcp"] = mcpMeta
	if known && ann.ReadOnly {
		a.Kind = trace.KindObservation
	} else {
		capability := Capability(r.server)
		a.Capabilities = []string{capability}
		mutation := "destructive"
		if known && !ann.Destructive {
			mutation = "additive"
		}
		a.SideEffects = []trace.SideEffect{{Kind: SideEffectKind, Target: r.server + "/" + p.tool, Capability: capability, Mutation: mutation}}
	}
	if m.Error != nil {
		meta["error"] = true
		msg := m.Error.Error()
		var we *jsonrpc.Error
		if e, ok := m.Error.(*jsonrpc.Error); ok {
			we = e
			msg = we.Message
			meta["error_code"] = we.Code
			// The endpoint answered with an HTTP error that was not the
			// server's (a gateway's), or not at all: the status says why
			// the call failed.
			if f := proxyFailure(we); f != nil && f.Status != 0 {
				meta["http_status"] = f.Status
			} else if f != nil {
				meta["upstream_unreachable"] = true
			}
		}
		s, _ := redact.Value(msg)
		meta["error_message"] = s
	} else {
		out, isError, text, err := result(m.Result)
		if err != nil {
			r.problems = append(r.problems, fmt.Sprintf("tools/call %v (%s): result: %v", m.ID.Raw(), p.tool, err))
		}
		a.Output, _ = redact.Value(out)
		if isError {
			meta["error"] = true
			meta["is_error"] = true
		}
		if text != "" {
			t, _ := redact.Value(text)
			meta["text"] = t
		}
	}
	r.actions = append(r.actions, a)
	r.dirty = true
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Capability is the capability recorded for a call of a tool of server
// that may change something: "mcp:<server>".
func Capability(server string) string {
	if server == "" {
		server = "unknown"
	}
	return "mcp:" + server
}

// result reads a CallToolResult: the step value (structured content,
// else the text content parsed as JSON when it is JSON, else the text),
// isError, and the text content when structured content was the value
// (so nothing the tool said is lost).
func result(raw json.RawMessage) (out any, isError bool, text string, err error) {
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, false, "", err
	}
	var texts []string
	for _, c := range res.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	joined := strings.Join(texts, "\n")
	if len(res.StructuredContent) > 0 && !bytes.Equal(res.StructuredContent, []byte("null")) {
		v, err := decode(res.StructuredContent)
		if err != nil {
			return nil, res.IsError, joined, err
		}
		if text := strings.TrimSpace(joined); text != "" {
			// The SDK repeats structured content as JSON text; keep
			// the text only when it says something else.
			if tv, err := decode([]byte(text)); err == nil && jsonEqual(tv, v) {
				joined = ""
			}
		}
		return v, res.IsError, joined, nil
	}
	if v, err := decode([]byte(joined)); err == nil && strings.TrimSpace(joined) != "" {
		return v, res.IsError, "", nil
	}
	return joined, res.IsError, "", nil
}

// decode reads one JSON value, keeping numbers exact.
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// Trace returns the session as a trace, redacted as Flush writes it.
// Requests still unanswered (the session ended, or the client cancelled
// them) are not calls that happened as far as the trace can tell, and are
// counted in metadata.unanswered_calls.
func (r *Recorder) Trace() (*trace.Trace, error) {
	r.mu.Lock()
	t := r.traceLocked()
	r.mu.Unlock()
	return redacted(t)
}

// redacted is t through the redactor, whole. Arguments and results are
// redacted as they are read, but names are copied verbatim from the
// wire into many places (a tool's name into the action's name, its side
// effect's target and problems; the server's into capabilities and
// targets; titles, the client's name, versions), and any of them can hold
// a token: so the trace is redacted as one value before it leaves the
// recorder, as everything else crystallize writes is. A tool's redacted
// name is the same wherever it appears, so the trace stays consistent.
func redacted(t *trace.Trace) (*trace.Trace, error) {
	red, _, err := redact.Copy(t)
	if err != nil {
		return nil, fmt.Errorf("redacting session: %w", err)
	}
	return red, nil
}

func (r *Recorder) traceLocked() *trace.Trace {
	now := r.opts.Now()
	actions := append([]trace.Action{}, r.actions...)
	meta := map[string]any{
		"agent":      Agent,
		"session_id": r.opts.ID,
		"server":     r.server,
	}
	if r.version != "" {
		meta["server_version"] = r.version
	}
	if r.client != "" {
		meta["client"] = r.client
	}
	if r.protocol != "" {
		meta["protocol_version"] = r.protocol
	}
	unanswered := 0
	for _, p := range r.pending {
		if p.method == "tools/call" {
			unanswered++
		}
	}
	if unanswered > 0 {
		meta["unanswered_calls"] = unanswered
	}
	if r.cancelledCalls > 0 {
		meta["cancelled_calls"] = r.cancelledCalls
	}
	if len(r.problems) > 0 {
		ps := make([]any, len(r.problems))
		for i, p := range r.problems {
			ps[i] = p
		}
		meta["capture_problems"] = ps
	}
	var wall int64
	for _, a := range actions {
		wall += *a.DurationMS
	}
	return &trace.Trace{
		Version:    trace.SchemaVersion,
		ID:         r.opts.ID,
		StartedAt:  r.started.UTC().Format(time.RFC3339Nano),
		FinishedAt: now.UTC().Format(time.RFC3339Nano),
		Actions:    actions,
		Usage:      &trace.Usage{WallMS: wall},
		Metadata:   meta,
	}
}

// Flush writes the session's trace when something changed since the last
// write. A session with no tool call is not written: it would be a trace
// mining can do nothing with.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	if !r.dirty || len(r.actions) == 0 {
		r.mu.Unlock()
		return nil
	}
	t := r.traceLocked()
	r.dirty = false
	r.mu.Unlock()
	t, err := redacted(t)
	if err != nil {
		return fmt.Errorf("writing session: %w", err)
	}
	// The format's own encoder, indented: json.MarshalIndent would
	// escape the trace's < and & again, as no other trace file does.
	raw, err := t.MarshalJSON()
	if err != nil {
		return fmt.Errorf("writing session: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("writing session: %w", err)
	}
	data := append(buf.Bytes(), '\n')
	if err := writeAtomic(r.file, data); err != nil {
		return fmt.Errorf("writing session: %w", err)
	}
	return nil
}

// writeAtomic writes data through atomicfile, creating name's directory,
// so a reader sees the old trace or the new one, never part of one.
func writeAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(name, data, 0o644)
}
