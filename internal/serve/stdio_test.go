package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestStdioKeepsServing: a line that is not JSON, a message whose id is
// an object, a batch, a message too large and one nested too deep are
// each answered with a JSON-RPC error (-32700 when the line is not JSON,
// -32600 when it is not a request the server can take) and the server
// goes on to answer the next request.
func TestStdioKeepsServing(t *testing.T) {
	s := New(Options{Bundles: []string{t.TempDir()}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.RunStdio(ctx, inR, outW, StdioOptions{MaxMessage: 1 << 10}) }()
	out := bufio.NewScanner(outR)
	out.Buffer(nil, 1<<20)
	next := func() map[string]any {
		t.Helper()
		lines := make(chan string, 1)
		go func() {
			if out.Scan() {
				lines <- out.Text()
			}
			close(lines)
		}()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the server closed its output: %v", out.Err())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("answer %q: %v", l, err)
			}
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
			return nil
		}
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("writing %.40q: %v", line, err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := next(); m["result"] == nil {
		t.Fatalf("initialize = %v, want a result", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{"garbage", -32700, nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":7,"method":42}`, -32600, 7.0},
		{`{"jsonrpc":"2.0","id":"x","method":"ping"} {"more":1}`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600, nil},
		{`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2<<10) + `"}}`, -32600, nil},
		{strings.Repeat("[", 600) + strings.Repeat("]", 600), -32600, nil},
	} {
		send(tc.line)
		m := next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id || m["jsonrpc"] != "2.0" {
			t.Errorf("answer to %.40q = %v, want error %v with id %v", tc.line, m, tc.code, tc.id)
		}
		// The server still answers.
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 100+i))
		if m := next(); m["result"] == nil || m["id"] != float64(100+i) {
			t.Fatalf("after %.40q: tools/list = %v, want a result", tc.line, m)
		}
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunStdio = %v after the client closed its end", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunStdio did not end after the client closed its end")
	}
}
