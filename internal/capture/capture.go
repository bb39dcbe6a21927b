package capture

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// flushInterval is the least time between two rewrites of a session's
// trace while it runs; the final write happens when the session ends.
const flushInterval = 250 * time.Millisecond

// Run relays one client session between the transports client (facing
// the MCP client, usually &mcp.StdioTransport{}) and server (the real
// server: an *mcp.CommandTransport, or an *HTTPUpstream for a streamable
// HTTP server, which relays its standalone stream too),
// recording it with a Recorder built from opts. It returns when either
// side ends the session or ctx is cancelled, after writing the trace; the
// returned path is the trace's file, "" when the session made no tool
// call, and is returned with a relay error too when calls were recorded.
//
// The server is connected first, so a server that cannot start fails Run
// before the client's first message is read.
func Run(ctx context.Context, client, server mcp.Transport, opts Options) (string, error) {
	up, err := server.Connect(ctx)
	if err != nil {
		return "", fmt.Errorf("starting server: %w", err)
	}
	down, err := client.Connect(ctx)
	if err != nil {
		up.Close()
		return "", fmt.Errorf("connecting client: %w", err)
	}
	rec := NewRecorder(opts)

	// The writer rewrites the trace after calls, off the relay's path,
	// so a response is never held back by a disk write. Rewrites are at
	// least flushInterval apart: a busy session costs one write per
	// interval, not one per call (each write is of the whole session).
	done := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-rec.changed:
				if err := rec.Flush(); err != nil && werr == nil {
					werr = err
				}
			case <-done:
				return
			}
			select {
			case <-time.After(flushInterval):
			case <-done:
				return
			}
		}
	}()
	rerr := Relay(ctx, down, up, rec)
	close(done)
	wg.Wait()
	ferr := rec.Flush()
	rec.mu.Lock()
	n := len(rec.actions)
	rec.mu.Unlock()
	file := ""
	if n > 0 && ferr == nil {
		// Written even when the relay failed: the calls seen so far.
		file = rec.File()
	}
	return file, errors.Join(rerr, werr, ferr)
}
