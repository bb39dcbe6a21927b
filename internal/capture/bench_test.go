package capture

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolsCall measures one tools/call of the notes server over
// stdio, directly and through the recording proxy (in process, over the
// SDK's in-memory transport, so the difference is the proxy's decode,
// record and re-encode, plus one rewrite of the trace per call, off the
// relay's path).
func BenchmarkToolsCall(b *testing.B) {
	bin := notesServer(b)
	ctx := context.Background()
	args := map[string]any{"notebook": "work"}
	server := func() *exec.Cmd {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "NOTES_DIR="+b.TempDir())
		return cmd
	}
	bench := func(b *testing.B, cs *mcp.ClientSession) {
		b.Helper()
		b.ResetTimer()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_notes", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: server()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		bench(b, cs)
	})
	b.Run("proxied", func(b *testing.B) {
		proxySide, clientSide := mcp.NewInMemoryTransports()
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, proxySide, &mcp.CommandTransport{Command: server()}, Options{Out: b.TempDir()})
			done <- err
		}()
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, clientSide, nil)
		if err != nil {
			b.Fatal(err)
		}
		bench(b, cs)
		b.StopTimer()
		cs.Close()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkToolsCallHTTP measures one tools/call of an SDK streamable HTTP
// server on loopback speaking 2025-06-18, directly and through the proxy
// with its standalone stream open (HTTPUpstream): the difference is the
// relay, the recorder and the connection's merge of the two sources.
func BenchmarkToolsCallHTTP(b *testing.B) {
	ctx := context.Background()
	u := newUpstreamServer(b, nil, nil, 0)
	opts := &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"}
	args := map[string]any{"text": "hi"}
	bench := func(b *testing.B, cs *mcp.ClientSession) {
		b.Helper()
		b.ResetTimer()
		for b.Loop() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u.http.URL}, opts)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		bench(b, cs)
	})
	b.Run("proxied", func(b *testing.B) {
		proxySide, clientSide := mcp.NewInMemoryTransports()
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, proxySide, &HTTPUpstream{Endpoint: u.http.URL}, Options{Out: b.TempDir()})
			done <- err
		}()
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, clientSide, opts)
		if err != nil {
			b.Fatal(err)
		}
		bench(b, cs)
		b.StopTimer()
		cs.Close()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
}
