package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCheckLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		allow  bool
		remote bool
		bad    bool
	}{
		{"127.0.0.1:8931", false, false, false},
		{"[::1]:8931", false, false, false},
		{"localhost:0", false, false, false},
		{":8931", false, true, false},
		{"0.0.0.0:8931", false, true, false},
		{"0.0.0.0:8931", true, false, false},
		{"8931", false, false, true},
	} {
		err := CheckLoopback(tt.addr, tt.allow)
		switch {
		case tt.remote != errors.Is(err, ErrRemote):
			t.Errorf("CheckLoopback(%q, %v) = %v; remote refusal %v", tt.addr, tt.allow, err, tt.remote)
		case tt.bad != (err != nil && !errors.Is(err, ErrRemote)):
			t.Errorf("CheckLoopback(%q, %v) = %v; malformed %v", tt.addr, tt.allow, err, tt.bad)
		}
	}
}

// TestListenHTTP serves a server over a real listener and talks to it
// with the SDK's own streamable HTTP client: the address reported is the
// one listened on, the client is initialized with the server's name and
// capabilities, a tool that is not served is refused, and cancelling the
// context closes the listener and returns nil.
func TestListenHTTP(t *testing.T) {
	s := New(Options{Bundles: []string{t.TempDir()}, Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- s.ListenHTTP(ctx, "127.0.0.1:0", func(a net.Addr) { addrs <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("ListenHTTP returned before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("ListenHTTP did not report its address")
	}
	if tcp, ok := addr.(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() || tcp.Port == 0 {
		t.Fatalf("listening on %v, want a loopback address with the chosen port", addr)
	}

	callCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(callCtx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr.String() + "/mcp"}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	init := cs.InitializeResult()
	if init.ServerInfo.Name != Name || init.ServerInfo.Version != "test" {
		t.Errorf("server info = %+v, want %s test", init.ServerInfo, Name)
	}
	if init.Capabilities.Tools == nil || !init.Capabilities.Tools.ListChanged {
		t.Errorf("capabilities = %+v, want tools with listChanged", init.Capabilities)
	}
	tools, err := cs.ListTools(callCtx, nil)
	if err != nil || len(tools.Tools) != 0 {
		t.Errorf("ListTools = %+v, %v; want no tools from an empty directory", tools, err)
	}
	res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "not_served", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Errorf("CallTool of a tool not served = %+v, want a refusal", res)
	}
	cs.Close()

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ListenHTTP after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenHTTP did not return after its context was cancelled")
	}
	if c, err := net.DialTimeout("tcp", addr.String(), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after ListenHTTP returned", addr)
	}
}

// TestListenHTTPBusy: an address that cannot be listened on is an error,
// returned before anything is reported as listening.
func TestListenHTTPBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := New(Options{Bundles: []string{t.TempDir()}})
	called := false
	err = s.ListenHTTP(context.Background(), ln.Addr().String(), func(net.Addr) { called = true })
	if err == nil || called {
		t.Errorf("ListenHTTP on a busy address = %v (listening reported: %v), want an error", err, called)
	}
}

// TestListenHTTPSessionIdle: an HTTP session that gets no request for
// Options.SessionIdle is closed (a request naming it is then refused as
// an unknown session, 404), while one kept busy stays. Without the bound
// every session a client opened and left would be kept for as long as
// the server runs.
func TestListenHTTPSessionIdle(t *testing.T) {
	const idle = 300 * time.Millisecond
	s := New(Options{Bundles: []string{t.TempDir()}, SessionIdle: idle})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addrs := make(chan net.Addr, 1)
	go s.ListenHTTP(ctx, "127.0.0.1:0", func(a net.Addr) { addrs <- a })
	url := "http://" + (<-addrs).String() + "/mcp"
	post := func(session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	open := func() string {
		t.Helper()
		code, id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize = %d, session %q", code, id)
		}
		if code, _ := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized = %d", code)
		}
		return id
	}
	busy, left := open(), open()
	for i := 0; i < 6; i++ {
		time.Sleep(idle / 3)
		if code, _ := post(busy, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusOK {
			t.Fatalf("ping of a busy session = %d, want 200", code)
		}
	}
	if code, _ := post(left, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("ping of a session idle for %v = %d, want 404", 2*idle, code)
	}
}
