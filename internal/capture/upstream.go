package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Header names of the streamable HTTP transport.
const (
	sessionIDHeader       = "Mcp-Session-Id"
	protocolVersionHeader = "Mcp-Protocol-Version"
	lastEventIDHeader     = "Last-Event-ID"
)

// standaloneUntil is the first protocol version without the standalone
// stream: from it on, server messages outside a request travel on
// subscriptions/listen, a request the client makes and the relay forwards
// like any other.
const standaloneUntil = "2026-07-28"

// Reconnection of the standalone stream. The server may name its own
// delay with a retry field; without one the first attempt waits
// reconnectDelay, and each attempt that brings no new event waits
// reconnectGrowth times longer, up to reconnectMaxDelay, giving up after
// reconnectAttempts such attempts in a row.
const (
	reconnectDelay    = 500 * time.Millisecond
	reconnectGrowth   = 1.5
	reconnectMaxDelay = 30 * time.Second
	reconnectAttempts = 5
	// healthyStream is how long a stream that brought no event must have
	// been open to count as working: an idle session's stream closed by
	// a proxy's timeout is reopened without end, one the server closes
	// at once is not.
	healthyStream = 10 * time.Second
)

// HTTPUpstream is the transport to a streamable HTTP server. Its
// connection is the SDK's (mcp.StreamableClientTransport) used below the
// SDK's session layer, plus what that layer would otherwise add and a
// message relay needs: the negotiated protocol version on every request
// after initialize, and, for servers speaking a protocol version before
// 2026-07-28, the standalone GET stream on which the server sends what is
// not part of a request's response (notifications/tools/list_changed,
// logging, progress and requests of its own). Its messages are read from
// the connection like any other server message, so the relay forwards
// them to the client in the order the server sent them.
type HTTPUpstream struct {
	// Endpoint is the server's MCP URL.
	Endpoint string
	// HTTPClient is used for every request; nil means
	// http.DefaultClient. A Timeout on it would cut the standalone
	// stream, which is long-lived.
	HTTPClient *http.Client
	// Warn, when set, is told why the standalone stream could not be
	// kept (a server that refuses it with a status other than 405 Method
	// Not Allowed, which is its documented way of offering none), and
	// which notification or response a gateway refused.
	Warn func(msg string)
	// MaxMessage bounds a JSON body the server answers a request with;
	// 0 means DefaultMaxMessage. A larger one, or one that is not a
	// JSON-RPC message, reaches the client as an error for its request.
	MaxMessage int

	// afterDeliver, when set, runs each time the SDK connection's reader
	// has handed a message over: tests make it pause, to show that what
	// follows a message (the version it negotiates) does not depend on
	// the reader being quick.
	afterDeliver func()
}

// Connect implements mcp.Transport.
func (t *HTTPUpstream) Connect(ctx context.Context) (mcp.Connection, error) {
	base := t.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := &upstreamConn{
		endpoint:     t.Endpoint,
		max:          t.MaxMessage,
		warn:         t.Warn,
		afterDeliver: t.afterDeliver,
		in:           make(chan readResult),
		closed:       make(chan struct{}),
	}
	// One client for the SDK's requests and the stream's, so both carry
	// the version.
	withVersion := *base
	withVersion.Transport = &versionTransport{base: rt, conn: c}
	inner, err := (&mcp.StreamableClientTransport{
		Endpoint:   t.Endpoint,
		HTTPClient: &withVersion,
		// The SDK opens it only for its own client sessions; this
		// connection opens its own (see upstreamConn.standalone).
		DisableStandaloneSSE: true,
	}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	c.inner = inner
	c.get = &withVersion
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1)
	go c.pumpInner()
	return c, nil
}

// versionTransport adds the negotiated protocol version to requests that
// carry none: the SDK's connection learns it from its session layer, which
// a relay does not use, and a server that sees no version assumes
// 2025-03-26.
type versionTransport struct {
	base http.RoundTripper
	conn *upstreamConn
}

func (v *versionTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if version := v.conn.protocol(); version != "" && req.Header.Get(protocolVersionHeader) == "" {
		req = req.Clone(req.Context())
		req.Header.Set(protocolVersionHeader, version)
	}
	resp, err := v.base.RoundTrip(req)
	// The POST of a message written by upstreamConn.Write: what the
	// endpoint answered is noted for Write, which the SDK's error would
	// not tell.
	if ex, ok := req.Context().Value(exchangeKey{}).(*exchange); ok && req.Method == http.MethodPost {
		ex.observe(resp, err)
		if err == nil && ex.call.IsValid() {
			boundJSON(resp, ex.call, v.conn.maxMessage())
			boundEvents(resp, ex.call, min(v.conn.maxMessage(), maxEventSize))
		}
	}
	return resp, err
}

// boundJSON replaces the JSON body of resp, the answer to the request
// call, with a JSON-RPC error response for call when the body cannot be
// relayed: larger than max, or not one JSON-RPC message (nested deeper
// than a decoder goes, malformed). The SDK's connection reads such a body
// whole (with no bound), fails to decode it and fails for good, ending
// the relay; with the error in its place, that call fails and the session
// goes on. Event streams are left to the SDK, which bounds each event.
func boundJSON(resp *http.Response, call jsonrpc.ID, max int) {
	if resp.StatusCode < 200 || resp.StatusCode >= 300 || mediaType(resp.Header.Get("Content-Type")) != "application/json" {
		return
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	var why string
	switch {
	case err != nil:
		why = "reading it failed: " + err.Error()
	case len(body) > max:
		why = fmt.Sprintf("it is larger than %d bytes", max)
	default:
		if _, derr := jsonrpc.DecodeMessage(body); derr != nil {
			why = "it is not one JSON-RPC message (or is nested deeper than a decoder goes)"
		}
	}
	if why == "" {
		resp.Body = readCloser{bytes.NewReader(body), resp.Body}
		return
	}
	resp.Body.Close()
	id, _ := json.Marshal(call.Raw())
	answer := errorLine(id, "capture: the server's response could not be relayed: "+why)
	resp.Body = io.NopCloser(bytes.NewReader(answer))
	resp.ContentLength = int64(len(answer))
	resp.Header.Del("Content-Length")
}

// boundEvents replaces the event stream that answers the request call
// with one in which an event the SDK's connection cannot take (more than
// max bytes, or data that is not one JSON-RPC message) is an error
// response for call. The SDK ends the whole connection on such an event,
// and with it the relay; with the error in its place, that call fails and
// the session goes on. The stream is read as it comes, one event at a
// time: an oversized event is dropped as it is read, never held.
func boundEvents(resp *http.Response, call jsonrpc.ID, max int) {
	if resp.StatusCode < 200 || resp.StatusCode >= 300 || mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		return
	}
	id, _ := json.Marshal(call.Raw())
	body := resp.Body
	pr, pw := io.Pipe()
	go func() {
		err := readEvents(body, max, func(ev event) error {
			why := ""
			switch {
			case ev.tooLarge:
				why = fmt.Sprintf("an event of its stream is larger than %d bytes", max)
			case (ev.name == "" || ev.name == "message") && len(ev.data) > 0:
				if _, err := jsonrpc.DecodeMessage(ev.data); err != nil {
					why = "an event of its stream is not one JSON-RPC message (or is nested deeper than a decoder goes)"
				}
			}
			if why != "" {
				ev = event{retry: -1, data: bytes.TrimSuffix(errorLine(id, "capture: the server's response could not be relayed: "+why), []byte("\n"))}
			}
			_, err := pw.Write(appendEvent(nil, ev))
			return err
		})
		body.Close()
		pw.CloseWithError(err) // nil: the reader sees the end of the stream
	}()
	resp.Body = pr
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// upstreamConn merges two sources of server messages, the SDK
// connection's (responses and what travels with them) and the standalone
// stream's, into one Read. Each source is one goroutine that hands its
// messages over one at a time, so each source's order is kept.
type upstreamConn struct {
	endpoint string
	max      int // HTTPUpstream.MaxMessage
	inner    mcp.Connection
	get      *http.Client
	warn     func(string)
	// afterDeliver is HTTPUpstream.afterDeliver.
	afterDeliver func()

	ctx    context.Context // ends the goroutines; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	in     chan readResult
	closed chan struct{}

	mu        sync.Mutex
	initID    jsonrpc.ID // the client's initialize request
	version   string     // the negotiated protocol version
	streaming bool       // the standalone stream was started
	err       error      // the first error Read returned, returned again
	// unreachable counts the messages in a row whose POST got no HTTP
	// answer at all.
	unreachable int
	// last is the exchange of the message being written or written last:
	// when the SDK's connection fails on its answer, the error read from
	// it says which answer.
	last     *exchange
	lastWhat string

	closeOnce sync.Once
	closeErr  error
}

// maxMessage bounds one JSON body of the server's.
func (c *upstreamConn) maxMessage() int {
	if c.max > 0 {
		return c.max
	}
	return DefaultMaxMessage
}

func (c *upstreamConn) protocol() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// SessionID implements mcp.Connection.
func (c *upstreamConn) SessionID() string { return c.inner.SessionID() }

// Write implements mcp.Connection: messages go to the server unchanged,
// the client's initialize request remembered so its response can start
// the standalone stream. A message the endpoint does not take is handled
// by failedWrite.
func (c *upstreamConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "initialize" && req.ID.IsValid() {
		c.mu.Lock()
		c.initID = req.ID
		c.mu.Unlock()
	}
	wctx, ex := withExchange(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		ex.call = req.ID
	}
	c.mu.Lock()
	c.last, c.lastWhat = ex, describe(msg)
	c.mu.Unlock()
	err := c.inner.Write(wctx, msg)
	r := ex.result()
	c.mu.Lock()
	switch {
	case r.status != 0:
		c.unreachable = 0
	case r.err != nil:
		c.unreachable++
	}
	unreachable := c.unreachable
	c.mu.Unlock()
	if err == nil || ctx.Err() != nil {
		return err
	}
	return c.failedWrite(msg, r, unreachable, err)
}

// failedWrite decides what a message the endpoint did not take means for
// the session. The SDK's connection stays usable after a JSON-RPC error
// in an HTTP error, a transient status (429, 500, 502, 503, 504), an
// answer that is neither JSON nor an event stream, and a request that got
// no answer; then one message failed, not the session: a request gets an
// error response, as the SDK's session layer would hand its caller, and
// a notification or response, which nobody awaits, is reported through
// Warn. After anything else (a session the server ended, a refusal that
// is not JSON-RPC), or maxUnreachable messages in a row without an
// answer, the relay ends with an error naming the endpoint and status.
func (c *upstreamConn) failedWrite(msg jsonrpc.Message, r exchangeResult, unreachable int, err error) error {
	req, _ := msg.(*jsonrpc.Request)
	call := req != nil && req.ID.IsValid()
	what := describe(msg)
	var answer *jsonrpc.Error
	switch {
	case r.status == 0 && r.err == nil:
		// Nothing was sent: the SDK's connection had already failed.
		return err
	case r.status == 0 && unreachable >= maxUnreachable:
		return fmt.Errorf("upstream %s: %d messages in a row got no answer, the last %s: %w", c.endpoint, unreachable, what, r.err)
	case r.status == 0:
		answer = newUpstreamFailure(c.endpoint, what, r).rpcError()
	case serverError(r) != nil && (transientStatus(r.status) || sdkReadsError(r)):
		// A server may answer a request with a JSON-RPC error in the
		// body of an HTTP error (a version it does not speak, a method
		// it refuses, a load it sheds): that is the response.
		answer = serverError(r)
	case r.foreign && (transientStatus(r.status) || r.status >= 200 && r.status < 300):
		answer = newUpstreamFailure(c.endpoint, what, r).rpcError()
	default:
		return fmt.Errorf("%s: %w", newUpstreamFailure(c.endpoint, what, r), err)
	}
	if call {
		c.deliver(readResult{msg: &jsonrpc.Response{ID: req.ID, Error: answer}})
		return nil
	}
	// The server's own message is as untrusted as a gateway's page on
	// its way to a terminal.
	c.warnf("%s was not delivered: %s", what, bodyExcerpt([]byte(answer.Message), "text/plain", false))
	return nil
}

// readFailure says where err, which the SDK's connection failed with,
// came from. The SDK's errors name the request, not where it went nor
// what came back; when the connection failed on the answer to the last
// message written (a refusal that is not JSON-RPC, a session the server
// ended), the error says what the answer was, as the write's does: either
// may end the relay first.
func (c *upstreamConn) readFailure(err error) error {
	c.mu.Lock()
	last, what := c.last, c.lastWhat
	c.mu.Unlock()
	if last != nil {
		if r := last.result(); fatalAnswer(r) {
			return fmt.Errorf("%s: %w", newUpstreamFailure(c.endpoint, what, r), err)
		}
	}
	return fmt.Errorf("upstream %s: %w", c.endpoint, err)
}

// fatalAnswer is an HTTP error answer after which the SDK's connection
// cannot go on: not transient, and no JSON-RPC error the SDK reads.
func fatalAnswer(r exchangeResult) bool {
	return r.status != 0 && (r.status < 200 || r.status >= 300) && !transientStatus(r.status) && !sdkReadsError(r)
}

// sdkReadsError says whether the SDK's connection reads the body of an
// HTTP error as a JSON-RPC error, and so stays usable: a response with
// an id, a null one not being one to the SDK.
func sdkReadsError(r exchangeResult) bool {
	if r.bodyCut || len(r.body) == 0 {
		return false
	}
	msg, err := jsonrpc.DecodeMessage(r.body)
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return ok && resp.Error != nil
}

// serverError is the JSON-RPC error an HTTP error answer carries in its
// body, nil when its body is something else. The body's id is not
// checked: a server that cannot tell which request failed answers with a
// null one, and the answer is to the request either way.
func serverError(r exchangeResult) *jsonrpc.Error {
	if r.bodyCut || len(r.body) == 0 {
		return nil
	}
	var resp struct {
		Version string          `json:"jsonrpc"`
		Error   *jsonrpc.Error  `json:"error"`
		Result  json.RawMessage `json:"result"`
	}
	if json.Unmarshal(r.body, &resp) != nil || resp.Version != "2.0" || resp.Error == nil || resp.Result != nil {
		return nil
	}
	return resp.Error
}

// Read implements mcp.Connection.
func (c *upstreamConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case r := <-c.in:
		if r.err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = r.err
			}
			c.mu.Unlock()
		}
		return r.msg, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, mcp.ErrConnectionClosed
	}
}

// Close implements mcp.Connection: the standalone stream is closed first,
// then the SDK connection, which ends the session on the server.
func (c *upstreamConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.cancel()
		c.closeErr = c.inner.Close()
		c.wg.Wait()
	})
	return c.closeErr
}

// deliver hands r to Read; false when the connection was closed first.
func (c *upstreamConn) deliver(r readResult) bool {
	select {
	case c.in <- r:
		return true
	case <-c.closed:
		return false
	}
}

// pumpInner reads the SDK connection until it ends. The version an
// initialize response negotiates is taken before the response is handed
// over: the client writes its next requests as soon as it reads it, and
// they must carry the version. The standalone stream is opened after, so
// nothing the server sends on it reaches the client before the client
// knows the session.
func (c *upstreamConn) pumpInner() {
	defer c.wg.Done()
	for {
		msg, err := c.inner.Read(c.ctx)
		if err != nil && c.ctx.Err() != nil {
			return
		}
		if err != nil {
			err = c.readFailure(err)
		}
		var stream string
		if resp, ok := msg.(*jsonrpc.Response); ok {
			stream = c.negotiated(resp)
		}
		if !c.deliver(readResult{msg, err}) || err != nil {
			return
		}
		if c.afterDeliver != nil {
			c.afterDeliver()
		}
		if stream != "" {
			c.wg.Add(1)
			go c.standalone(c.inner.SessionID(), stream)
		}
	}
}

// negotiated takes the protocol version from resp when it answers the
// client's initialize request, and returns it when the standalone stream
// is to be opened for it ("" otherwise: another message, or a version
// from 2026-07-28 on).
func (c *upstreamConn) negotiated(resp *jsonrpc.Response) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.initID.IsValid() || resp.ID != c.initID || resp.Error != nil || c.streaming {
		return ""
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(resp.Result, &res) != nil || res.ProtocolVersion == "" {
		return ""
	}
	c.version = res.ProtocolVersion
	if res.ProtocolVersion >= standaloneUntil {
		return ""
	}
	c.streaming = true
	return res.ProtocolVersion
}

// errNoStream says the server offers no standalone stream, or no longer
// has the session: nothing to relay, and nothing wrong with the relay.
var errNoStream = errors.New("no standalone stream")

// standalone keeps the standalone stream open for the session's life:
// it relays each event's message, and when the stream ends it reconnects
// with the id of the last event it saw, so a server that stores events
// replays what was sent in between. A server that answers 405 offers no
// stream; one that answers 404 has ended the session (the next request
// tells the client). A stream that cannot be reopened ends the
// connection with an error, as a lost server message would otherwise go
// unnoticed.
func (c *upstreamConn) standalone(session, version string) {
	defer c.wg.Done()
	var lastID string
	delay := reconnectDelay
	failures := 0
	for first := true; ; first = false {
		progressed, retry, err := c.listen(session, version, &lastID, first)
		if c.ctx.Err() != nil {
			return
		}
		if errors.Is(err, errNoStream) {
			return
		}
		if progressed {
			failures = 0
			delay = reconnectDelay
		} else {
			failures++
			if failures > reconnectAttempts {
				c.deliver(readResult{err: fmt.Errorf("standalone stream of session %q: %d attempts without an event: %w", session, failures, err)})
				return
			}
		}
		wait := delay
		if retry > 0 {
			// A server's retry is honoured up to the longest wait of our
			// own: a larger one would stop relaying while the session
			// looks alive.
			wait = min(retry, reconnectMaxDelay)
		} else if !progressed {
			delay = min(time.Duration(float64(delay)*reconnectGrowth), reconnectMaxDelay)
		}
		select {
		case <-time.After(wait):
		case <-c.ctx.Done():
			return
		}
	}
}

// listen opens the stream once and relays its events until it ends. It
// reports whether an event arrived, the reconnection delay the server
// asked for (0 if none), and why the stream ended.
func (c *upstreamConn) listen(session, version string, lastID *string, first bool) (progressed bool, retry time.Duration, err error) {
	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.endpoint, nil)
	if err != nil {
		return false, 0, fmt.Errorf("%w: %v", errNoStream, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(protocolVersionHeader, version)
	if session != "" {
		req.Header.Set(sessionIDHeader, session)
	}
	if *lastID != "" {
		req.Header.Set(lastEventIDHeader, *lastID)
	}
	resp, err := c.get.Do(req)
	if err != nil {
		return false, 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusMethodNotAllowed:
		return false, 0, errNoStream
	case resp.StatusCode == http.StatusNotFound && !first:
		return false, 0, errNoStream // the session ended
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return false, 0, fmt.Errorf("GET %s: %s", c.endpoint, resp.Status)
	case resp.StatusCode != http.StatusOK:
		c.warnf("the server refused the standalone stream (GET %s: %s); messages it sends outside a request are not relayed", c.endpoint, resp.Status)
		return false, 0, errNoStream
	}
	if ct := resp.Header.Get("Content-Type"); mediaType(ct) != "text/event-stream" {
		c.warnf("the server answered the standalone stream with Content-Type %q, not text/event-stream; messages it sends outside a request are not relayed", ct)
		return false, 0, errNoStream
	}
	opened := time.Now()
	defer func() {
		if time.Since(opened) >= healthyStream {
			progressed = true
		}
	}()
	var broken error
	err = readEvents(resp.Body, maxEventSize, func(ev event) error {
		if ev.hasID {
			*lastID = ev.id
			progressed = true
		}
		if ev.retry >= 0 {
			retry = time.Duration(ev.retry) * time.Millisecond
		}
		if ev.tooLarge {
			// Not the answer to a request: nothing to answer with
			// an error. Dropped, said, and the stream goes on.
			if c.warn != nil {
				c.warn(fmt.Sprintf("standalone stream of session %q: an event larger than %d bytes was dropped", session, maxEventSize))
			}
			return nil
		}
		if (ev.name != "" && ev.name != "message") || len(ev.data) == 0 {
			// A close event (its retry field says when to
			// reconnect) or a priming event: no message.
			return nil
		}
		msg, err := jsonrpc.DecodeMessage(ev.data)
		if err != nil {
			broken = fmt.Errorf("standalone stream of session %q: event %q: %w", session, ev.id, err)
			return broken
		}
		progressed = true
		if !c.deliver(readResult{msg: msg}) {
			return mcp.ErrConnectionClosed
		}
		return nil
	})
	if errors.Is(err, errEventTooLarge) {
		broken = fmt.Errorf("standalone stream of session %q: %w", session, err)
	}
	if broken != nil {
		// A message that cannot be read is not dropped in silence:
		// the relay stops with the reason.
		c.deliver(readResult{err: broken})
		return progressed, retry, errNoStream
	}
	if err == nil {
		err = io.EOF
	}
	return progressed, retry, err
}

func (c *upstreamConn) warnf(format string, args ...any) {
	if c.warn != nil {
		c.warn(fmt.Sprintf(format, args...))
	}
}

// mediaType is the media type of a Content-Type value, without parameters.
func mediaType(ct string) string {
	for i := 0; i < len(ct); i++ {
		if ct[i] == ';' {
			ct = ct[:i]
			break
		}
	}
	for len(ct) > 0 && ct[len(ct)-1] == ' ' {
		ct = ct[:len(ct)-1]
	}
	return ct
}

// retryMillis parses an SSE retry field: ASCII digits only, else -1.
func retryMillis(v string) int64 {
	if v == "" {
		return -1
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return -1
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return -1
	}
	// As milliseconds it must fit a time.Duration.
	return min(n, int64(math.MaxInt64/time.Millisecond))
}
