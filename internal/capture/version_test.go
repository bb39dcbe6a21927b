package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// versionLog is a real SDK server behind a handler that notes the
// Mcp-Protocol-Version of every request after initialize.
type versionLog struct {
	http *httptest.Server

	mu      sync.Mutex
	headers map[string][]string // by method (GET for the standalone stream)
}

func newVersionLog(t testing.TB) *versionLog {
	t.Helper()
	v := &versionLog{headers: map[string][]string{}}
	server := mcp.NewServer(&mcp.Implementation{Name: "versions", Version: "1"}, nil)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	v.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(sessionIDHeader) != "" {
			method := r.Method
			if r.Method == http.MethodPost {
				var msg struct {
					Method string `json:"method"`
				}
				body, req := peekBody(r)
				r = req
				_ = json.Unmarshal(body, &msg)
				method = msg.Method
			}
			v.mu.Lock()
			v.headers[method] = append(v.headers[method], r.Header.Get(protocolVersionHeader))
			v.mu.Unlock()
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(v.http.Close)
	return v
}

// Every request after initialize carries the negotiated version, the
// client's first ones included: notifications/initialized and the first
// call go out as soon as the client has read the initialize response, and
// the version must be known by then. The connection is made to pause
// after each message it hands over, which widens the window in which the
// client could be ahead of the connection (without the pause a few
// sessions in a thousand lost the version under the race detector). The
// SDK client's requests are checked, and so is a run of sessions driven
// at the connection itself, as fast as a client can.
func TestUpstreamVersionAfterInitialize(t *testing.T) {
	pause := func() { time.Sleep(20 * time.Millisecond) }
	t.Run("sdk client", func(t *testing.T) {
		v := newVersionLog(t)
		ctx := context.Background()
		proxySide, clientSide := mcp.NewInMemoryTransports()
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, proxySide, &HTTPUpstream{Endpoint: v.http.URL, afterDeliver: pause}, Options{Out: t.TempDir()})
			done <- err
		}()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, clientSide, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// The standalone stream is opened in the background.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			v.mu.Lock()
			n := len(v.headers[http.MethodGet])
			v.mu.Unlock()
			if n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the proxy did not open the standalone stream")
			}
		}
		cs.Close()
		if err := <-done; err != nil {
			t.Fatalf("Run = %v", err)
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		for _, method := range []string{"notifications/initialized", "tools/list", http.MethodGet} {
			hs := v.headers[method]
			if len(hs) == 0 {
				t.Errorf("no %s after initialize", method)
			}
			for _, h := range hs {
				if h != "2025-06-18" {
					t.Errorf("%s went out with Mcp-Protocol-Version %q, want 2025-06-18", method, h)
				}
			}
		}
	})
	t.Run("sessions", func(t *testing.T) {
		const rounds = 20
		v := newVersionLog(t)
		for i := 0; i < rounds; i++ {
			if err := initializeOnce(context.Background(), &HTTPUpstream{Endpoint: v.http.URL, afterDeliver: pause}); err != nil {
				t.Fatal(err)
			}
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		missing := 0
		for _, h := range v.headers["notifications/initialized"] {
			if h != "2025-06-18" {
				missing++
			}
		}
		if n := len(v.headers["notifications/initialized"]); n != rounds || missing > 0 {
			t.Errorf("%d of %d notifications/initialized went out without the negotiated version", missing, n)
		}
	})
}

// initializeOnce opens a session through up the way a client does:
// initialize, and as soon as its response is read,
// notifications/initialized.
func initializeOnce(ctx context.Context, up *HTTPUpstream) error {
	conn, err := up.Connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	id, _ := jsonrpc.MakeID(float64(1))
	params, _ := json.Marshal(map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "test", "version": "1"},
	})
	if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "initialize", Params: params}); err != nil {
		return err
	}
	if _, err := conn.Read(ctx); err != nil {
		return err
	}
	return conn.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized", Params: json.RawMessage(`{}`)})
}

// peekBody reads r's body and returns it with a request whose body reads
// the same.
func peekBody(r *http.Request) ([]byte, *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, r
}
