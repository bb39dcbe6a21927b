package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrRemote is the refusal of an HTTP address off the loopback interface
// that the caller did not allow: anyone who can reach it can run the
// served workflows with the project's grants.
var ErrRemote = errors.New("not a loopback address")

// CheckLoopback reports whether addr (host:port) may be listened on: a
// loopback address, or any when allowRemote. "" (every interface) counts
// as remote. A malformed address is an error from net.SplitHostPort; a
// remote one not allowed wraps ErrRemote.
func CheckLoopback(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if allowRemote || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q: %w", addr, ErrRemote)
}

// ListenHTTP serves s over MCP's streamable HTTP transport at addr until
// ctx is done; listening reports the address it listens on (the port
// chosen for ":0") before the first request. A session idle for
// Options.SessionIdle is closed.
func (s *Server) ListenHTTP(ctx context.Context, addr string, listening func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	idle := s.opts.SessionIdle
	switch {
	case idle == 0:
		idle = DefaultSessionIdle
	case idle < 0:
		idle = 0 // the SDK's "never"
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP() },
		&mcp.StreamableHTTPOptions{SessionTimeout: idle})
	hs := &http.Server{Handler: h}
	if listening != nil {
		listening(ln.Addr())
	}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
