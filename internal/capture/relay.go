package capture

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Direction is the way a message travels through the proxy.
type Direction int

const (
	// FromClient: a message the client wrote, on its way to the server.
	FromClient Direction = iota
	// FromServer: a message the server wrote, on its way to the client.
	FromServer
)

func (d Direction) String() string {
	if d == FromClient {
		return "client→server"
	}
	return "server→client"
}

// An Observer sees every message the relay forwards. Observe is called
// from the goroutine of the message's direction, so calls for one
// direction are sequential and calls for the two directions concurrent.
// A message from the client is observed before it is forwarded (so a
// request is known before its response can arrive), one from the server
// after (so recording never delays a response). Observe must not modify
// the message.
type Observer interface {
	Observe(d Direction, msg jsonrpc.Message)
}

// DrainTimeout bounds how long the relay, once the client has ended its
// input, still waits for the responses to the requests it forwarded.
const DrainTimeout = 5 * time.Second

// outstanding is implemented by an Observer that knows how many requests
// from the client have not been answered (Recorder does).
type outstanding interface {
	Outstanding() int
}

// Relay copies messages between client and server until either side ends
// or ctx is cancelled, then closes both connections. It returns nil when a
// side ended by closing its connection (end of input), else the first
// error. Messages are forwarded unchanged and, within a direction, in
// order.
//
// A client that ends its input may still be reading (a pipe closed for
// writing only, or a script of requests), so when obs can say how many
// requests are unanswered, the relay keeps forwarding the server's
// messages until they are answered or DrainTimeout passes.
func Relay(ctx context.Context, client, server mcp.Connection, obs Observer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	stop := func(err error) {
		once.Do(func() {
			first = err
			cancel()
			// Closing unblocks the other direction's Read.
			client.Close()
			server.Close()
		})
	}
	pump := func(d Direction, from, to mcp.Connection) {
		defer wg.Done()
		for {
			msg, err := from.Read(ctx)
			if err != nil {
				if d == FromClient && endErr(ctx, err) == nil {
					drain(ctx, obs)
				}
				stop(endErr(ctx, err))
				return
			}
			if d == FromClient && obs != nil {
				obs.Observe(d, msg)
			}
			if err := to.Write(ctx, msg); err != nil {
				stop(endErr(ctx, err))
				return
			}
			if d == FromServer && obs != nil {
				obs.Observe(d, msg)
			}
		}
	}
	wg.Add(2)
	go pump(FromClient, client, server)
	go pump(FromServer, server, client)
	<-ctx.Done()
	stop(nil)
	wg.Wait()
	return first
}

// drain waits until obs has no unanswered request, ctx is done or
// DrainTimeout passes.
func drain(ctx context.Context, obs Observer) {
	o, ok := obs.(outstanding)
	if !ok {
		return
	}
	deadline := time.NewTimer(DrainTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for o.Outstanding() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// endErr says whether err is the ordinary end of a session: a peer that
// closed its side, or the relay's own cancellation.
func endErr(ctx context.Context, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
		return nil
	}
	return err
}
