package capture

// Logging is deprecated from protocol 2026-07-28 on; the servers here speak
// earlier versions, where a log message outside a request is exactly what
// travels on the standalone stream.
//
//lint:file-ignore SA1019 logging is what versions before 2026-07-28 send outside a request

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstreamServer is a real SDK streamable HTTP server behind a handler
// that notes what the proxy sends: the headers of each GET (the
// standalone stream) and of each POST after the first, and when a GET's
// stream is open (the server has written its first bytes).
type upstreamServer struct {
	server *mcp.Server
	http   *httptest.Server

	mu       sync.Mutex
	gets     []http.Header
	posts    []http.Header
	openGETs atomic.Int32
	opened   chan struct{} // receives when a GET stream is open
	refuse   int           // when non-zero, GETs are answered with this status
}

type flushSignal struct {
	http.ResponseWriter
	once   sync.Once
	opened chan struct{}
}

func (f *flushSignal) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
	f.once.Do(func() { f.opened <- struct{}{} })
}

func newUpstreamServer(t testing.TB, opts *mcp.ServerOptions, httpOpts *mcp.StreamableHTTPOptions, refuse int) *upstreamServer {
	t.Helper()
	u := &upstreamServer{opened: make(chan struct{}, 16), refuse: refuse}
	u.server = mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, opts)
	mcp.AddTool(u.server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return u.server }, httpOpts)
	u.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		switch r.Method {
		case http.MethodGet:
			u.gets = append(u.gets, r.Header.Clone())
		case http.MethodPost:
			u.posts = append(u.posts, r.Header.Clone())
		}
		u.mu.Unlock()
		if r.Method == http.MethodGet {
			if u.refuse != 0 {
				http.Error(w, "no stream here", u.refuse)
				return
			}
			u.openGETs.Add(1)
			defer u.openGETs.Add(-1)
			w = &flushSignal{ResponseWriter: w, opened: u.opened}
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(u.http.Close)
	return u
}

// waitOpen waits until the server has opened a GET stream.
func (u *upstreamServer) waitOpen(t *testing.T) {
	t.Helper()
	select {
	case <-u.opened:
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not open the standalone stream")
	}
}

// broadcast sends what a server sends outside any request: a changed
// tool list (the SDK sends it 10 ms after the change, so the client waits
// for it), then three log messages to every session, which must arrive in
// the order they were sent.
func (u *upstreamServer) broadcast(t *testing.T, c *upstreamClient, tool, msg string) {
	t.Helper()
	u.server.AddTool(&mcp.Tool{Name: tool, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	c.expect(t, "tools/list_changed")
	var want []string
	for i := 1; i <= 3; i++ {
		text := fmt.Sprintf("%s %d", msg, i)
		for ss := range u.server.Sessions() {
			if err := ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "info", Data: text}); err != nil {
				t.Fatalf("logging outside a request: %v", err)
			}
		}
		want = append(want, "log info "+text)
	}
	c.expect(t, want...)
}

type upstreamClient struct {
	cs     *mcp.ClientSession
	events chan string
	done   chan error
	warns  *strings.Builder
	wmu    sync.Mutex // guards warns, written by the proxy's goroutines
}

// warnings returns what the proxy has warned about so far.
func (c *upstreamClient) warnings() string {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.warns.String()
}

// waitWarning waits until the proxy has warned with a message containing
// want: the standalone stream is opened in the background, so its refusal
// can come after the client's first requests have been answered.
func (c *upstreamClient) waitWarning(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(c.warnings(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("warnings = %q, want one containing %q", c.warnings(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// connectThrough runs the proxy between an SDK client and u, the client
// asking for protocol version (empty: the SDK's latest).
func connectThrough(t *testing.T, u *upstreamServer, version string) *upstreamClient {
	t.Helper()
	ctx := context.Background()
	c := &upstreamClient{events: make(chan string, 64), done: make(chan error, 1), warns: &strings.Builder{}}
	proxySide, clientSide := mcp.NewInMemoryTransports()
	up := &HTTPUpstream{Endpoint: u.http.URL, Warn: func(m string) {
		c.wmu.Lock()
		c.warns.WriteString(m + "\n")
		c.wmu.Unlock()
	}}
	go func() {
		_, err := Run(ctx, proxySide, up, Options{Out: t.TempDir(), ID: "standalone"})
		c.done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.events <- "tools/list_changed"
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.events <- fmt.Sprintf("log %s %v", req.Params.Level, req.Params.Data)
		},
	})
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, clientSide, sopts)
	if err != nil {
		t.Fatalf("connecting through the proxy: %v", err)
	}
	c.cs = cs
	// Runs before the server's cleanup, which waits for open streams.
	t.Cleanup(func() { cs.Close() })
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *upstreamClient) expect(t *testing.T, want ...string) {
	t.Helper()
	var got []string
	for len(got) < len(want) {
		select {
		case e := <-c.events:
			got = append(got, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("the client received %q, want %q", got, want)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("messages outside a request (-want +got):\n%s", diff)
	}
}

// close ends the client's session and waits for the proxy.
func (c *upstreamClient) close(t *testing.T) {
	t.Helper()
	c.cs.Close()
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the proxy did not end with the session")
	}
}

// A server of a protocol version before 2026-07-28 sends what is not part
// of a response on the standalone GET stream; the proxy opens it with the
// session's id and version and relays its messages to the client in the
// order they were sent. The version is pinned on either side.
func TestUpstreamStandaloneStream(t *testing.T) {
	for _, tc := range []struct {
		name, client, want string
		server             []string
	}{
		{name: "client pins 2025-06-18", client: "2025-06-18", want: "2025-06-18"},
		{name: "server pins 2025-11-25", server: []string{"2025-11-25"}, want: "2025-11-25"},
		{name: "server pins 2025-03-26", server: []string{"2025-03-26"}, want: "2025-03-26"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpstreamServer(t, &mcp.ServerOptions{SupportedProtocolVersions: tc.server}, nil, 0)
			c := connectThrough(t, u, tc.client)
			if got := c.cs.InitializeResult().ProtocolVersion; got != tc.want {
				t.Fatalf("negotiated %q, want %q", got, tc.want)
			}
			u.waitOpen(t)
			u.broadcast(t, c, "second", "outside a request")
			// A call still works, and what happened after it in the
			// session arrives too.
			res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.Content[0].(*mcp.TextContent).Text != "hi" {
				t.Fatalf("a call through the proxy: %v, %v", res, err)
			}
			u.broadcast(t, c, "third", "again")
			c.close(t)

			u.mu.Lock()
			defer u.mu.Unlock()
			if len(u.gets) != 1 {
				t.Fatalf("%d GET requests, want 1", len(u.gets))
			}
			g := u.gets[0]
			if g.Get("Mcp-Session-Id") == "" || g.Get("Mcp-Protocol-Version") != tc.want || !strings.Contains(g.Get("Accept"), "text/event-stream") {
				t.Errorf("GET headers: %v", g)
			}
			// Every request after initialize names the version, as
			// an SDK client does.
			for i, h := range u.posts {
				if i > 0 && h.Get("Mcp-Session-Id") != "" && h.Get("Mcp-Protocol-Version") != tc.want {
					t.Errorf("POST %d: Mcp-Protocol-Version %q, want %q", i, h.Get("Mcp-Protocol-Version"), tc.want)
				}
			}
			waitClosed(t, u)
			if w := c.warnings(); w != "" {
				t.Errorf("warnings: %s", w)
			}
		})
	}
}

// waitClosed waits until the server has no GET stream open: the proxy
// closed the standalone stream with the session.
func waitClosed(t *testing.T, u *upstreamServer) {
	t.Helper()
	for i := 0; u.openGETs.Load() != 0; i++ {
		if i == 200 {
			t.Fatal("the standalone stream outlived the session")
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// A server that offers no standalone stream answers 405; the session
// works as before and nothing is reported.
func TestUpstreamNoStandaloneStream(t *testing.T) {
	u := newUpstreamServer(t, nil, nil, http.StatusMethodNotAllowed)
	c := connectThrough(t, u, "2025-06-18")
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "still" {
		t.Fatalf("a call through the proxy: %v, %v", res, err)
	}
	// The stream is opened in the background: wait for its request, and
	// give a retry, which must not come, the time to come.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		u.mu.Lock()
		n := len(u.gets)
		u.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy did not ask for the standalone stream")
		}
	}
	time.Sleep(200 * time.Millisecond)
	c.close(t)
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.gets) != 1 {
		t.Errorf("%d GET requests after a 405, want 1 (no retry)", len(u.gets))
	}
	if w := c.warnings(); w != "" {
		t.Errorf("a 405 was reported: %s", w)
	}
}

// A server that refuses the stream with another status is relayed
// without it, and the proxy says why.
func TestUpstreamStandaloneRefused(t *testing.T) {
	u := newUpstreamServer(t, nil, nil, http.StatusForbidden)
	c := connectThrough(t, u, "2025-06-18")
	if _, err := c.cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	c.waitWarning(t, "403")
	c.close(t)
}

// When the standalone stream breaks, the proxy reconnects with the id of
// the last event it relayed; a server that stores events replays what it
// sent in between, so nothing is lost and nothing arrives twice.
func TestUpstreamStandaloneResumes(t *testing.T) {
	u := newUpstreamServer(t, nil, &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}, 0)
	c := connectThrough(t, u, "2025-11-25")
	u.waitOpen(t)
	u.broadcast(t, c, "second", "before the break")
	// Break every connection, the standalone stream's included, and
	// send while it is down.
	u.http.CloseClientConnections()
	u.broadcast(t, c, "third", "during the break")
	u.broadcast(t, c, "fourth", "after the break")
	select {
	case e := <-c.events:
		t.Fatalf("a message arrived twice or unasked: %s", e)
	case <-time.After(200 * time.Millisecond):
	}
	c.close(t)
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.gets) < 2 {
		t.Fatalf("%d GET requests, want a reconnection", len(u.gets))
	}
	if id := u.gets[len(u.gets)-1].Get("Last-Event-ID"); id == "" {
		t.Errorf("the reconnection carries no Last-Event-ID: %v", u.gets[len(u.gets)-1])
	}
	waitClosed(t, u)
}
