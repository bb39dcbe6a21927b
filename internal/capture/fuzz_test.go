package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorderOnly hides Recorder.Outstanding from Relay, so a session of
// requests that are never answered ends as soon as the client closes.
type recorderOnly struct{ r *Recorder }

func (o recorderOnly) Observe(d Direction, msg jsonrpc.Message) { o.r.Observe(d, msg) }

// messages derives a conversation from fuzz input: each byte picks the
// direction and shape of one message (request, notification or
// response, for the methods the recorder follows and others), and text
// is its payload, used as JSON when it is JSON and as a string when not.
func messages(shape []byte, text string) (fromClient, fromServer []jsonrpc.Message) {
	payload := json.RawMessage(text)
	if !json.Valid(payload) {
		q, _ := json.Marshal(text)
		payload = q
	}
	methods := []string{"tools/call", "tools/list", "initialize", "server/discover", "notifications/cancelled", "notifications/progress", "ping", "x/custom"}
	for i, b := range shape {
		var msg jsonrpc.Message
		id, _ := jsonrpc.MakeID(float64(b >> 4))
		if b&0x20 != 0 {
			id, _ = jsonrpc.MakeID(fmt.Sprint(b >> 5))
		}
		method := methods[int(b)%len(methods)]
		params := payload
		if i%3 == 0 {
			params, _ = json.Marshal(map[string]any{"name": "t", "arguments": json.RawMessage(payload), "requestId": b >> 4})
		}
		switch (b >> 3) % 3 {
		case 0:
			msg = &jsonrpc.Request{ID: id, Method: method, Params: params}
		case 1:
			msg = &jsonrpc.Request{Method: method, Params: params}
		default:
			if b&1 == 0 {
				msg = &jsonrpc.Response{ID: id, Result: params}
			} else {
				msg = &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32000, Message: text}}
			}
		}
		if b&0x80 == 0 {
			fromClient = append(fromClient, msg)
		} else {
			fromServer = append(fromServer, msg)
		}
	}
	return fromClient, fromServer
}

// wire encodes messages, the form compared: what one end wrote must be
// what the other end read, byte for byte after the SDK's decoding.
func wire(t *testing.T, msgs []jsonrpc.Message) []string {
	var out []string
	for _, m := range msgs {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatalf("encoding %v: %v", m, err)
		}
		out = append(out, string(b))
	}
	return out
}

// FuzzRelay checks the relay over the SDK's in-memory transports: no
// panic, and every message arrives at the other end, unchanged and in
// the order it was written, in both directions at once, while the
// recorder reads them.
func FuzzRelay(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0x80, 0x81}, `{"name":"add_note","arguments":{"text":"x"}}`)
	f.Add([]byte{0x10, 0x90, 0x11, 0x91, 0x50}, `{"content":[{"type":"text","text":"{}"}],"structuredContent":{"a":1}}`)
	f.Add([]byte{0x20, 0xa0, 0x08, 0x88}, `{"tools":[{"name":"t","annotations":{"readOnlyHint":true}}]}`)
	f.Add([]byte{0xff, 0x00, 0x7f}, `not json`)
	f.Fuzz(func(t *testing.T, shape []byte, text string) {
		if len(shape) > 64 {
			shape = shape[:64]
		}
		fromClient, fromServer := messages(shape, text)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		clientEnd, proxyClient := mcp.NewInMemoryTransports()
		proxyServer, serverEnd := mcp.NewInMemoryTransports()
		conns := make([]mcp.Connection, 4)
		for i, tr := range []mcp.Transport{clientEnd, proxyClient, proxyServer, serverEnd} {
			c, err := tr.Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = c
		}
		rec := NewRecorder(Options{Out: t.TempDir(), ID: "fuzz"})
		relayed := make(chan error, 1)
		go func() { relayed <- Relay(ctx, conns[1], conns[2], recorderOnly{rec}) }()

		send := func(c mcp.Connection, msgs []jsonrpc.Message) chan error {
			done := make(chan error, 1)
			go func() {
				for _, m := range msgs {
					if err := c.Write(ctx, m); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			return done
		}
		recv := func(c mcp.Connection, n int) ([]jsonrpc.Message, error) {
			var got []jsonrpc.Message
			for len(got) < n {
				m, err := c.Read(ctx)
				if err != nil {
					return got, err
				}
				got = append(got, m)
			}
			return got, nil
		}
		sentC, sentS := send(conns[0], fromClient), send(conns[3], fromServer)
		type result struct {
			msgs []jsonrpc.Message
			err  error
		}
		atServer, atClient := make(chan result, 1), make(chan result, 1)
		go func() { m, err := recv(conns[3], len(fromClient)); atServer <- result{m, err} }()
		go func() { m, err := recv(conns[0], len(fromServer)); atClient <- result{m, err} }()
		for _, ch := range []chan error{sentC, sentS} {
			if err := <-ch; err != nil {
				t.Fatalf("writing: %v", err)
			}
		}
		gotS, gotC := <-atServer, <-atClient
		if gotS.err != nil || gotC.err != nil {
			t.Fatalf("reading: %v, %v", gotS.err, gotC.err)
		}
		if diff := cmp.Diff(wire(t, fromClient), wire(t, gotS.msgs)); diff != "" {
			t.Errorf("client→server (-sent +received):\n%s", diff)
		}
		if diff := cmp.Diff(wire(t, fromServer), wire(t, gotC.msgs)); diff != "" {
			t.Errorf("server→client (-sent +received):\n%s", diff)
		}
		conns[0].Close()
		if err := <-relayed; err != nil {
			t.Errorf("Relay = %v after the client closed", err)
		}
		conns[3].Close()
		if _, err := rec.Trace(); err != nil {
			t.Errorf("Trace = %v", err)
		}
		if err := rec.Flush(); err != nil {
			t.Errorf("Flush = %v", err)
		}
	})
}
