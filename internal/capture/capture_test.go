package capture

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

var (
	buildOnce sync.Once
	notesBin  string
	buildErr  error
)

// notesServer builds testdata/notesserver, a real MCP server written with
// the official SDK, once per test binary.
func notesServer(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "notesserver")
		if err != nil {
			buildErr = err
			return
		}
		notesBin = filepath.Join(dir, "notesserver")
		out, err := exec.Command("go", "build", "-o", notesBin, "./testdata/notesserver").CombinedOutput()
		if err != nil {
			buildErr = err
			notesBin = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building notesserver: %v\n%s", buildErr, notesBin)
	}
	return notesBin
}

// proxied starts Run between an in-memory client transport and the notes
// server, and returns a connected SDK client session and a function that
// ends the session and returns Run's results.
func proxied(t *testing.T, notesDir, out, id string) (*mcp.ClientSession, func() (string, error)) {
	t.Helper()
	ctx := context.Background()
	cmd := exec.Command(notesServer(t))
	cmd.Env = append(os.Environ(), "NOTES_DIR="+notesDir)
	proxySide, clientSide := mcp.NewInMemoryTransports()
	type ret struct {
		file string
		err  error
	}
	done := make(chan ret, 1)
	go func() {
		file, err := Run(ctx, proxySide, &mcp.CommandTransport{Command: cmd}, Options{Out: out, ID: id})
		done <- ret{file, err}
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatalf("connecting through the proxy: %v", err)
	}
	return cs, func() (string, error) {
		cs.Close()
		select {
		case r := <-done:
			return r.file, r.err
		case <-time.After(30 * time.Second):
			t.Fatal("proxy did not end after the client closed")
			return "", nil
		}
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s) = %v", name, err)
	}
	return res
}

func TestRunRecordsSession(t *testing.T) {
	notes, out := t.TempDir(), t.TempDir()
	cs, end := proxied(t, notes, out, "session-1")

	// The client sees the server as it is: its name, its tools and
	// their annotations.
	if got := cs.InitializeResult().ServerInfo.Name; got != "notes" {
		t.Errorf("serverInfo.name through the proxy = %q, want notes", got)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == "list_notes" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
			t.Errorf("list_notes lost its readOnlyHint through the proxy: %+v", tl.Annotations)
		}
	}
	if diff := cmp.Diff([]string{"add_note", "announce", "list_notes", "open_notebook", "wait"}, names); diff != "" {
		t.Errorf("tools through the proxy (-want +got):\n%s", diff)
	}

	call(t, cs, "list_notes", map[string]any{"notebook": "work"})
	call(t, cs, "open_notebook", map[string]any{"name": "work"})
	res := call(t, cs, "add_note", map[string]any{"notebook": "work", "text": "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"})
	if res.IsError {
		t.Fatalf("add_note failed: %+v", res.Content)
	}
	bad := call(t, cs, "add_note", map[string]any{"notebook": "missing", "text": "x < y & z"})
	if !bad.IsError {
		t.Fatalf("add_note to a notebook never opened succeeded")
	}
	file, err := end()
	if err != nil {
		t.Fatalf("Run = %v", err)
	}
	if want := filepath.Join(out, "session-1.json"); file != want {
		t.Fatalf("Run wrote %q, want %q", file, want)
	}

	// The call reached the server unchanged: the secret is in the
	// notebook, which is the tool's business, and not in the trace.
	data, err := os.ReadFile(filepath.Join(notes, "work.txt"))
	if err != nil || !strings.Contains(string(data), "ghp_0123456789") {
		t.Fatalf("notes file = %q, %v; want the note as sent", data, err)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "ghp_0123456789") {
		t.Errorf("the trace holds the secret:\n%s", raw)
	}
	// Strings are escaped as in every other trace file: < and & as written.
	if !strings.Contains(string(raw), `"text": "x < y & z"`) {
		t.Errorf("the trace does not hold the text as written:\n%s", raw)
	}
	tr, err := trace.Decode(raw, file, 0)
	if err != nil {
		t.Fatalf("the trace does not decode: %v", err)
	}
	if tr.Metadata["agent"] != Agent || tr.Metadata["server"] != "notes" || tr.Metadata["server_version"] != "1.0.0" || tr.Metadata["client"] != "test-client" {
		t.Errorf("metadata = %v", tr.Metadata)
	}
	type row struct {
		Name, Kind, Mutation string
		Params               []string
		Error                bool
	}
	var got []row
	for _, a := range tr.Actions {
		r := row{Name: a.Name, Kind: string(a.Kind), Error: a.Metadata["error"] == true}
		for k := range a.Parameters {
			r.Params = append(r.Params, k)
		}
		slicesSort(r.Params)
		if len(a.SideEffects) == 1 {
			se := a.SideEffects[0]
			r.Mutation = se.Mutation
			if se.Target != "notes/"+a.Name || se.Capability != "mcp:notes" || se.Kind != SideEffectKind {
				t.Errorf("%s: side effect %+v", a.Name, se)
			}
		}
		if a.DurationMS == nil {
			t.Errorf("%s: no duration", a.Name)
		}
		got = append(got, r)
	}
	want := []row{
		{Name: "list_notes", Kind: "observation", Params: []string{"notebook"}},
		{Name: "open_notebook", Kind: "tool_call", Mutation: "additive", Params: []string{"name"}},
		{Name: "add_note", Kind: "tool_call", Mutation: "additive", Params: []string{"notebook", "text"}},
		{Name: "add_note", Kind: "tool_call", Mutation: "additive", Params: []string{"notebook", "text"}, Error: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	open := tr.Actions[1]
	if diff := cmp.Diff(map[string]any{"notebook": "work", "path": "work.txt"}, open.Output); diff != "" {
		t.Errorf("open_notebook output (-want +got):\n%s", diff)
	}
	if open.Metadata["idempotent"] != true {
		t.Errorf("open_notebook: idempotentHint not recorded: %v", open.Metadata)
	}
	if txt, _ := tr.Actions[2].Parameters["text"].(string); !strings.Contains(txt, "[redacted") {
		t.Errorf("add_note text = %q, want it redacted", txt)
	}
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestRunWithoutCallsWritesNothing(t *testing.T) {
	out := t.TempDir()
	cs, end := proxied(t, t.TempDir(), out, "empty")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	file, err := end()
	if err != nil || file != "" {
		t.Fatalf("Run = %q, %v; want no file, no error", file, err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 0 {
		t.Errorf("out holds %d files, want none", len(entries))
	}
}

func TestRunServerDoesNotStart(t *testing.T) {
	proxySide, _ := mcp.NewInMemoryTransports()
	cmd := exec.Command(filepath.Join(t.TempDir(), "no-such-server"))
	_, err := Run(context.Background(), proxySide, &mcp.CommandTransport{Command: cmd}, Options{Out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "starting server") {
		t.Fatalf("Run = %v, want a starting server error", err)
	}
}

// A session with no call is never written, however often it is flushed.
func TestFlushEmptySession(t *testing.T) {
	r := NewRecorder(Options{Out: t.TempDir(), ID: "x"})
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.File()); !os.IsNotExist(err) {
		t.Fatalf("an empty session was written: %v", err)
	}
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// The proxy relays a streamable HTTP server as it relays a command.
func TestRunUpstreamHTTP(t *testing.T) {
	notes, out := t.TempDir(), t.TempDir()
	addr := freeAddr(t)
	srv := exec.Command(notesServer(t), "-http", addr)
	srv.Env = append(os.Environ(), "NOTES_DIR="+notes)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("the notes server does not listen: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	ctx := context.Background()
	proxySide, clientSide := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	var file string
	go func() {
		var err error
		file, err = Run(ctx, proxySide, &HTTPUpstream{Endpoint: "http://" + addr + "/mcp"}, Options{Out: out, ID: "http"})
		done <- err
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "open_notebook", map[string]any{"name": "web"})
	call(t, cs, "add_note", map[string]any{"notebook": "web", "text": "over http"})
	cs.Close()
	if err := <-done; err != nil {
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
	if len(tr.Actions) != 2 || tr.Actions[1].Name != "add_note" || tr.Metadata["server"] != "notes" {
		t.Fatalf("trace over http: %s", raw)
	}
	if data, _ := os.ReadFile(filepath.Join(notes, "web.txt")); string(data) != "over http\n" {
		t.Errorf("web.txt = %q", data)
	}
}

// Progress notifications reach the client and a cancellation reaches the
// server, through the proxy; the cancelled call is counted, not recorded
// as a step.
func TestRunProgressAndCancel(t *testing.T) {
	notes, out := t.TempDir(), t.TempDir()
	ctx := context.Background()
	cmd := exec.Command(notesServer(t))
	cmd.Env = append(os.Environ(), "NOTES_DIR="+notes)
	proxySide, clientSide := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, proxySide, &mcp.CommandTransport{Command: cmd}, Options{Out: out, ID: "cancel"})
		done <- err
	}()
	progress := make(chan string, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress <- fmt.Sprintf("%v %v/%v %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message)
		},
	})
	cs, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "open_notebook", map[string]any{"name": "work"})
	callCtx, cancel := context.WithCancel(ctx)
	params := &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, params)
		errc <- err
	}()
	var got []string
	for len(got) < 3 {
		select {
		case p := <-progress:
			got = append(got, p)
		case <-time.After(10 * time.Second):
			t.Fatalf("progress through the proxy: got %v", got)
		}
	}
	if diff := cmp.Diff([]string{"tok 1/3 step 1", "tok 2/3 step 2", "tok 3/3 step 3"}, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(notes, "cancelled.txt")); err == nil {
			break
		}
		if i == 200 {
			t.Fatal("the cancellation did not reach the server")
		}
		time.Sleep(25 * time.Millisecond)
	}
	cs.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "cancel.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := trace.Decode(raw, "cancel.json", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Actions) != 1 || fmt.Sprint(tr.Metadata["cancelled_calls"]) != "1" {
		t.Errorf("trace: %d actions, metadata %v; want the open call and one cancelled call", len(tr.Actions), tr.Metadata)
	}
}
