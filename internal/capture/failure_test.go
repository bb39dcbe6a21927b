package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// canned is an answer a proxy or load balancer in front of an MCP server
// gives instead of the server's.
type canned struct {
	status      int
	contentType string
	body        string
}

// gatewayServer is a real SDK streamable HTTP server behind a gateway
// that answers the next tools/call requests with canned answers instead
// of passing them on.
type gatewayServer struct {
	http *httptest.Server

	mu      sync.Mutex
	answers map[string][]canned // by JSON-RPC method
}

func newGatewayServer(t testing.TB) *gatewayServer {
	t.Helper()
	g := &gatewayServer{answers: map[string][]canned{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "gatewayed", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	g.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &msg)
			g.mu.Lock()
			var answer *canned
			if queue := g.answers[msg.Method]; len(queue) > 0 {
				answer = &queue[0]
				g.answers[msg.Method] = queue[1:]
			}
			g.mu.Unlock()
			if answer != nil {
				w.Header().Set("Content-Type", answer.contentType)
				w.WriteHeader(answer.status)
				io.WriteString(w, answer.body)
				return
			}
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(g.http.Close)
	return g
}

// answer has the gateway answer the next requests of method with a.
func (g *gatewayServer) answer(method string, a ...canned) {
	g.mu.Lock()
	g.answers[method] = append(g.answers[method], a...)
	g.mu.Unlock()
}

// proxiedHTTP runs the proxy between an SDK client and the server at
// endpoint; wait closes the client and returns what Run returned.
func proxiedHTTP(t *testing.T, endpoint, out string, warn func(string)) (*mcp.ClientSession, func() (string, error)) {
	t.Helper()
	ctx := context.Background()
	proxySide, clientSide := mcp.NewInMemoryTransports()
	type ran struct {
		file string
		err  error
	}
	done := make(chan ran, 1)
	go func() {
		file, err := Run(ctx, proxySide, &HTTPUpstream{Endpoint: endpoint, Warn: warn}, Options{Out: out, ID: "gateway"})
		done <- ran{file, err}
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, clientSide, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connecting through the proxy: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, func() (string, error) {
		cs.Close()
		select {
		case r := <-done:
			return r.file, r.err
		case <-time.After(30 * time.Second):
			t.Fatal("the proxy did not end with the session")
			return "", nil
		}
	}
}

func echo(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("echo %q: %+v", text, res)
	}
	return res.Content[0].(*mcp.TextContent).Text, nil
}

// nginxPage is what nginx answers when its upstream is down.
const nginxPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

// A proxy or load balancer in front of the server that answers one
// call with 429, 500, 502, 503 or 504 and a body that is not JSON-RPC (or
// with 200 and a page that is neither JSON nor an event stream) fails
// that call: the client gets a JSON-RPC error naming the endpoint
// and status, the session goes on, and the trace records the failed call
// with its status. What the body says is kept as text, bounded and with
// no markup or control characters.
func TestUpstreamTransientStatusFailsOneCall(t *testing.T) {
	huge := "<!DOCTYPE html><html><head><style>body{color:red}</style><script>alert('x')</script></head><body>" +
		"<p>\x1b[31mGateway Timeout\x1b[0m &amp; more</p>" + strings.Repeat("<div>padding padding padding</div>", 400) + "</body></html>"
	for _, tc := range []struct {
		name   string
		answer canned
		want   []string // in the error the client sees
		cut    bool
	}{
		{name: "502 nginx page", answer: canned{http.StatusBadGateway, "text/html", nginxPage},
			want: []string{"502 Bad Gateway", "502 Bad Gateway 502 Bad Gateway nginx"}},
		{name: "503 plain text", answer: canned{http.StatusServiceUnavailable, "text/plain", "upstream connect error or disconnect/reset before headers. reset reason: connection failure"},
			want: []string{"503 Service Unavailable", "reset reason: connection failure"}},
		{name: "504 huge page", answer: canned{http.StatusGatewayTimeout, "text/html; charset=utf-8", huge},
			want: []string{"504 Gateway Timeout", "Gateway Timeout & more padding"}, cut: true},
		{name: "429 empty", answer: canned{http.StatusTooManyRequests, "text/plain", ""},
			want: []string{"429 Too Many Requests", "empty body"}},
		{name: "200 login page", answer: canned{http.StatusOK, "text/html", "<html><body><form>Please log in to the network</form></body></html>"},
			want: []string{"200 OK", "(text/html): Please log in to the network"}},
		{name: "500 plain text", answer: canned{http.StatusInternalServerError, "text/plain", "internal error"},
			want: []string{"500 Internal Server Error", "internal error"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g := newGatewayServer(t)
			out := t.TempDir()
			cs, wait := proxiedHTTP(t, g.http.URL, out, nil)
			if got, err := echo(ctx, cs, "before"); err != nil || got != "before" {
				t.Fatalf("echo before = %q, %v", got, err)
			}
			g.answer("tools/call", tc.answer)
			_, err := echo(ctx, cs, "failing")
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("the failed call returned %v, want a JSON-RPC error", err)
			}
			for _, w := range append([]string{g.http.URL}, tc.want...) {
				if !strings.Contains(rpcErr.Message, w) {
					t.Errorf("error message %q does not contain %q", rpcErr.Message, w)
				}
			}
			checkExcerpt(t, rpcErr.Message, tc.cut)
			// The session goes on.
			if got, err := echo(ctx, cs, "after"); err != nil || got != "after" {
				t.Fatalf("echo after the failure = %q, %v", got, err)
			}
			file, err := wait()
			if err != nil {
				t.Fatalf("Run = %v", err)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := trace.Decode(raw, file, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Actions) != 3 {
				t.Fatalf("%d actions, want 3: %s", len(tr.Actions), raw)
			}
			failed := tr.Actions[1].Metadata
			if failed["error"] != true || fmt.Sprint(failed["http_status"]) != fmt.Sprint(tc.answer.status) {
				t.Errorf("the failed call's metadata: %v", failed)
			}
			msg, _ := failed["error_message"].(string)
			if !strings.Contains(msg, tc.want[0]) {
				t.Errorf("recorded error message %q does not contain %q", msg, tc.want[0])
			}
			checkExcerpt(t, msg, tc.cut)
			if tr.Actions[2].Metadata["error"] != nil {
				t.Errorf("the call after the failure is recorded as failed: %v", tr.Actions[2].Metadata)
			}
		})
	}
}

// checkExcerpt checks that msg carries no markup or control character, is
// bounded, and says whether the body was cut.
func checkExcerpt(t *testing.T, msg string, cut bool) {
	t.Helper()
	if strings.ContainsAny(msg, "<>\x1b\r\n\t") {
		t.Errorf("message carries markup or control characters: %q", msg)
	}
	if len(msg) > maxBodyExcerpt+200 {
		t.Errorf("message is %d bytes, want at most the %d-byte excerpt and its context", len(msg), maxBodyExcerpt)
	}
	if got := strings.Contains(msg, "cut at"); got != cut {
		t.Errorf("message says it was cut: %v, want %v: %q", got, cut, msg)
	}
}

// A server whose JSON-RPC error travels in the body of a 503 (a server
// shedding load) has that error relayed as the response, as for a 4xx.
func TestUpstreamTransientStatusJSONRPCBody(t *testing.T) {
	ctx := context.Background()
	g := newGatewayServer(t)
	cs, wait := proxiedHTTP(t, g.http.URL, t.TempDir(), nil)
	// The response is the request's whatever id the body names.
	g.answer("tools/call", canned{http.StatusServiceUnavailable, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"overloaded, try later"}}`})
	_, err := echo(ctx, cs, "shed")
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32000 || rpcErr.Message != "overloaded, try later" {
		t.Fatalf("the shed call returned %v, want the server's error", err)
	}
	if got, err := echo(ctx, cs, "after"); err != nil || got != "after" {
		t.Fatalf("echo after the failure = %q, %v", got, err)
	}
	if _, err := wait(); err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// An endpoint that stops accepting connections fails the calls made
// meanwhile; when it refuses maxUnreachable requests in a row the relay
// ends with an error naming it, rather than keep a session that cannot
// work.
func TestUpstreamUnreachableEndsRelay(t *testing.T) {
	ctx := context.Background()
	// A listener the test controls, so the server can go away and its
	// address refuse connections.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gatewayServer{}
	server := mcp.NewServer(&mcp.Implementation{Name: "gone", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	g.http = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)}}
	g.http.Start()
	endpoint := g.http.URL + "/mcp"
	cs, wait := proxiedHTTP(t, endpoint, t.TempDir(), nil)
	if got, err := echo(ctx, cs, "up"); err != nil || got != "up" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	g.http.CloseClientConnections()
	g.http.Close()
	for i := 1; i < maxUnreachable; i++ {
		_, err := echo(ctx, cs, "down")
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || !strings.Contains(rpcErr.Message, endpoint) {
			t.Fatalf("call %d to a server that is gone returned %v, want a JSON-RPC error naming %s", i, err, endpoint)
		}
	}
	// The last refusal ends the relay, and with it the client's session.
	if _, err := echo(ctx, cs, "down"); err == nil {
		t.Fatal("a call succeeded with the server gone")
	}
	file, err := wait()
	if err == nil || !strings.Contains(err.Error(), endpoint) || !strings.Contains(err.Error(), fmt.Sprintf("%d messages in a row", maxUnreachable)) {
		t.Fatalf("Run = %v, want an error naming %s and the refusals", err, endpoint)
	}
	// The calls before the end are recorded, the failed ones as such.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Decode(raw, file, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Actions) != maxUnreachable {
		t.Fatalf("%d actions, want %d: %s", len(tr.Actions), maxUnreachable, raw)
	}
	for _, a := range tr.Actions[1:] {
		if a.Metadata["error"] != true || a.Metadata["upstream_unreachable"] != true {
			t.Errorf("a call to the server that is gone: %v", a.Metadata)
		}
	}
}

// A notification refused with a transient status, or with a JSON-RPC
// error, cannot be answered with an error; the proxy says it was not
// delivered, and the session goes on.
func TestUpstreamRefusedNotification(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer canned
		want   []string
	}{
		{"503 page", canned{http.StatusServiceUnavailable, "text/html", nginxPage},
			[]string{g0, "503 Service Unavailable", "502 Bad Gateway nginx"}},
		{"400 JSON-RPC error", canned{http.StatusBadRequest, "application/json", `{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"roots \u001b[2Jare not taken here"}}`},
			[]string{"roots are not taken here"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g := newGatewayServer(t)
			var (
				mu    sync.Mutex
				warns []string
			)
			warned := make(chan struct{}, 1)
			client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
			proxySide, clientSide := mcp.NewInMemoryTransports()
			done := make(chan error, 1)
			go func() {
				_, err := Run(ctx, proxySide, &HTTPUpstream{Endpoint: g.http.URL, Warn: func(m string) {
					mu.Lock()
					warns = append(warns, m)
					mu.Unlock()
					select {
					case warned <- struct{}{}:
					default:
					}
				}}, Options{Out: t.TempDir(), ID: "notification"})
				done <- err
			}()
			cs, err := client.Connect(ctx, clientSide, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			g.answer("notifications/roots/list_changed", tc.answer)
			// The client tells the server its roots changed: a
			// notification, which the servers here (before 2026-07-28)
			// still take.
			//lint:ignore SA1019 a client notification of the protocol versions relayed here
			client.AddRoots(&mcp.Root{URI: "file:///tmp", Name: "tmp"})
			select {
			case <-warned:
			case err := <-done:
				t.Fatalf("the relay ended on a refused notification: %v", err)
			case <-time.After(10 * time.Second):
				t.Fatal("the refused notification was not reported")
			}
			mu.Lock()
			w := strings.Join(warns, "\n")
			mu.Unlock()
			for _, want := range append([]string{`notification "notifications/roots/list_changed" was not delivered`}, tc.want...) {
				if want == g0 {
					want = g.http.URL
				}
				if !strings.Contains(w, want) {
					t.Errorf("warning %q does not contain %q", w, want)
				}
			}
			checkExcerpt(t, w, false)
			if got, err := echo(ctx, cs, "after"); err != nil || got != "after" {
				t.Fatalf("echo after the refused notification = %q, %v", got, err)
			}
			cs.Close()
			if err := <-done; err != nil {
				t.Fatalf("Run = %v", err)
			}
		})
	}
}

// g0 stands for the gateway's URL in expectations written before it exists.
const g0 = "\x00gateway"

func TestBodyExcerpt(t *testing.T) {
	long := strings.Repeat("é", maxBodyExcerpt) // two bytes each: the cut falls inside none
	for _, tc := range []struct {
		name, body, contentType string
		cut                     bool
		want                    string
	}{
		{"empty", "", "text/plain", false, "(empty body)"},
		{"blank", " \r\n", "text/html", false, "(empty body)"},
		{"plain", "upstream request timeout", "text/plain", false, "upstream request timeout"},
		{"nginx", nginxPage, "text/html", false, "502 Bad Gateway 502 Bad Gateway nginx"},
		{"html sniffed", "<!DOCTYPE html><p>down for maintenance</p>", "", false, "down for maintenance"},
		{"script style comment", "<html><style>p{}</style><script type=x>if (a<b) alert(1)</script><!-- <p>hidden</p> --><p>shown</p></html>", "text/html", false, "shown"},
		{"entities stay text", "<p>&lt;script&gt;x&lt;/script&gt; &amp; more</p>", "text/html", false, "script x /script & more"},
		{"plain keeps brackets", "a < b", "text/plain", false, "a < b"},
		{"csi escapes", "\x1b[31mred\x1b[0m text", "text/plain", false, "red text"},
		{"osc title", "\x1b]0;pwned\x07after", "text/plain", false, "after"},
		{"control and invalid utf-8", "a\x00b\x07c\xffd\u202ee", "text/plain", false, "a b c\ufffdd e"},
		{"body cut", "partial", "text/plain", true, "partial … (body cut at 65536 bytes)"},
		{"text cut on a rune", long, "text/plain", false, long[:maxBodyExcerpt] + " … (cut at 1024 bytes)"},
		{"unfinished tag", "<p>ok</p><a href='x", "text/html", false, "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := bodyExcerpt([]byte(tc.body), tc.contentType, tc.cut); got != tc.want {
				t.Errorf("bodyExcerpt(%q) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

// A refusal after which the SDK's connection cannot go on (the session is
// gone: 404) ends the relay with an error naming the endpoint, the status
// and what the body says; the calls before it are recorded.
func TestUpstreamPermanentStatusEndsRelay(t *testing.T) {
	ctx := context.Background()
	g := newGatewayServer(t)
	cs, wait := proxiedHTTP(t, g.http.URL, t.TempDir(), nil)
	if got, err := echo(ctx, cs, "before"); err != nil || got != "before" {
		t.Fatalf("echo before = %q, %v", got, err)
	}
	g.answer("tools/call", canned{http.StatusNotFound, "text/html", "<h1>Session \x1b[1mnot found</h1>"})
	if _, err := echo(ctx, cs, "gone"); err == nil {
		t.Fatal("a call succeeded in a session the server ended")
	}
	file, err := wait()
	if err == nil {
		t.Fatal("Run = nil, want the end of the session")
	}
	for _, want := range []string{g.http.URL, `"tools/call" request`, "404 Not Found", "Session not found"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run = %v, want it to contain %q", err, want)
		}
	}
	if strings.ContainsAny(err.Error(), "<>\x1b") {
		t.Errorf("Run's error carries markup or escapes: %q", err)
	}
	if file == "" {
		t.Error("the call before the end was not recorded")
	}
}
