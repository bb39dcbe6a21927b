package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// oversizeServer answers each request by its id: 2 with a result larger
// than the limit, 3 with one nested deeper than a JSON decoder goes, 4 by
// first sending a request of its own that is too large and a notification
// that is too large, then the answer; every other id with a small result.
// It logs each line it reads.
const oversizeServer = `
big() { head -c 200000 /dev/zero | tr '\0' x; }
while IFS= read -r line; do
  printf '%s\n' "$line" >>"$LOG"
  case "$line" in
  *'"error"'*) ;;
  *'"id":2,'*)
    printf '{"jsonrpc":"2.0","id":2,"result":{"pad":"'; big; printf '"}}\n' ;;
  *'"id":3,'*)
    printf '{"jsonrpc":"2.0","id":3,"result":'; head -c 20000 /dev/zero | tr '\0' '['; head -c 20000 /dev/zero | tr '\0' ']'; printf '}\n' ;;
  *'"id":4,'*)
    printf '{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"pad":"'; big; printf '"},"id":"s1"}\n'
    printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"pad":"'; big; printf '"}}\n'
    printf '{"jsonrpc":"2.0","id":4,"result":{}}\n' ;;
  *'"id":'*)
    id=${line#*'"id":'}; id=${id%%[,\}]*}
    printf '{"jsonrpc":"2.0","id":%s,"result":{"ok":true}}\n' "$id" ;;
  esac
done
`

// TestCommandUnrelayable: a response of the server over the size limit,
// or nested too deep to decode, reaches the client as a JSON-RPC error
// response with its id; a request of the server's that cannot be relayed
// is answered to the server; a notification is dropped and named; and the
// session goes on: the next request gets its answer.
func TestCommandUnrelayable(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	cmd := exec.Command("sh", "-c", oversizeServer)
	cmd.Env = append(os.Environ(), "LOG="+log)
	var mu sync.Mutex
	var warned []string
	tr := &Command{Cmd: cmd, MaxMessage: 64 << 10, Warn: func(s string) { mu.Lock(); warned = append(warned, s); mu.Unlock() }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(n int64) *jsonrpc.Response {
		t.Helper()
		id, _ := jsonrpc.MakeID(float64(n))
		if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"x"}`)}); err != nil {
			t.Fatalf("writing request %d: %v", n, err)
		}
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answer to %d: %v", n, err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.ID != id {
			t.Fatalf("answer to %d = %#v", n, msg)
		}
		return resp
	}
	if r := call(1); r.Error != nil {
		t.Fatalf("call 1: %v", r.Error)
	}
	for n, want := range map[int64]string{2: "larger than 65536 bytes", 3: "not JSON"} {
		r := call(n)
		var we *jsonrpc.Error
		if e, ok := r.Error.(*jsonrpc.Error); ok {
			we = e
		}
		if we == nil || we.Code != codeUnrelayable || !strings.Contains(we.Message, want) {
			t.Errorf("call %d = %v, want error %d saying %q", n, r.Error, codeUnrelayable, want)
		}
	}
	if r := call(4); r.Error != nil {
		t.Errorf("call 4: %v", r.Error)
	}
	if r := call(5); r.Error != nil {
		t.Errorf("call 5 after the oversized messages: %v", r.Error)
	}
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), `"id":"s1","error":{"code":-32603,`) {
		t.Errorf("the server's oversized request was not answered; it read:\n%.2000s", data)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 2 || !strings.Contains(warned[1], "without an id") {
		t.Errorf("warnings = %q, want one for the request and one for the notification", warned)
	}
}

// TestHTTPUpstreamUnrelayable: an answer of a streamable HTTP server over
// the size limit, or nested too deep to decode, reaches the client as a
// JSON-RPC error for its request and the session goes on, whether the
// server answers with a JSON body or an event stream (on which the SDK
// would end the whole connection).
func TestHTTPUpstreamUnrelayable(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "event-stream"
		}
		t.Run(name, func(t *testing.T) { testUnrelayable(t, sse) })
	}
}

// testUnrelayable runs TestHTTPUpstreamUnrelayable against a server that
// answers as JSON or, with sse, as an event stream.
func testUnrelayable(t *testing.T, sse bool) {
	answer := func(w http.ResponseWriter, msg string) {
		if sse {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			return
		}
		fmt.Fprint(w, msg)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &m)
		w.Header().Set("Mcp-Session-Id", "s")
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		switch string(m.ID) {
		case "2":
			answer(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"result":{"pad":%q}}`, strings.Repeat("x", 200000)))
		case "3":
			answer(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"result":%s%s}`, strings.Repeat("[", 20000), strings.Repeat("]", 20000)))
		default:
			answer(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := (&HTTPUpstream{Endpoint: srv.URL, MaxMessage: 64 << 10}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	call := func(n int64, method string) *jsonrpc.Response {
		t.Helper()
		id, _ := jsonrpc.MakeID(float64(n))
		if err := conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("writing request %d: %v", n, err)
		}
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answer to %d: %v", n, err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.ID != id {
			t.Fatalf("answer to %d = %#v", n, msg)
		}
		return resp
	}
	call(1, "initialize")
	for _, tc := range []struct {
		n    int64
		want string
	}{{2, "larger than 65536 bytes"}, {3, "nested deeper"}} {
		r := call(tc.n, "tools/call")
		if e, ok := r.Error.(*jsonrpc.Error); !ok || e.Code != codeUnrelayable || !strings.Contains(e.Message, tc.want) {
			t.Errorf("call %d = %v, want error %d saying %q", tc.n, r.Error, codeUnrelayable, tc.want)
		}
	}
	if r := call(4, "tools/call"); r.Error != nil {
		t.Errorf("call 4 after the unrelayable answers: %v", r.Error)
	}
}
