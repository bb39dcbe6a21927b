package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpBinaries builds the crystallize command and the notes server (an
// MCP server written with the official SDK) into one directory, once.
var mcpBinaries = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "crystallize-mcp")
	if err != nil {
		return "", err
	}
	for _, b := range [][2]string{{"crystallize", "../../cmd/crystallize"}, {"notesserver", "../capture/testdata/notesserver"}} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]), b[1]).CombinedOutput(); err != nil {
			return "", fmt.Errorf("building %s: %v\n%s", b[0], err, out)
		}
	}
	return dir, nil
})

// syncBuffer is a bytes.Buffer a process's stderr can be copied into
// while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func mustRun(t testing.TB, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "SOURCE_DATE_EPOCH" {
			return sourceDateEpoch
		}
		return ""
	}}
	if code := run(context.Background(), e, args); code != 0 {
		t.Fatalf("crystallize %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestMCPLoop closes the loop with real processes: an agent's calls of
// an MCP server, recorded by capture mcp, are mined into a bundle, which
// serve mcp lists once approved and whose call has the effects the
// agent's calls had; an edit after approval takes it off the list.
func TestMCPLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	crystallize, notesserver := filepath.Join(bin, "crystallize"), filepath.Join(bin, "notesserver")
	work := t.TempDir()
	agentNotes, servedNotes := filepath.Join(work, "agent-notes"), filepath.Join(work, "served-notes")
	for _, d := range []string{agentNotes, servedNotes} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The agent: four sessions through the proxy, each looking at the
	// notebook, opening it and adding a note; the fourth is held out.
	texts := []string{"buy milk", "call the plumber", "water the plants", "renew the passport"}
	for i, text := range texts {
		out := filepath.Join(work, "captures")
		if i == len(texts)-1 {
			out = filepath.Join(work, "heldout")
		}
		cmd := exec.Command(crystallize, "capture", "mcp", "--out", out, "--", notesserver)
		cmd.Env = append(os.Environ(), "NOTES_DIR="+agentNotes)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			args map[string]any
		}{
			{"list_notes", map[string]any{"notebook": "home"}},
			{"open_notebook", map[string]any{"name": "home"}},
			{"add_note", map[string]any{"notebook": "home", "text": text}},
		} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
			if err != nil || res.IsError {
				t.Fatalf("session %d: %s = %+v, %v", i, c.name, res, err)
			}
		}
		cs.Close()
		cmd.Wait()
		if !strings.Contains(stderr.String(), "session recorded in") {
			t.Fatalf("session %d: capture said:\n%s", i, stderr.String())
		}
	}
	agentFile, err := os.ReadFile(filepath.Join(agentNotes, "home.txt"))
	if err != nil {
		t.Fatal(err)
	}

	// Mine the captures into a bundle, with the held-out session as the
	// replay gate's evidence.
	bundleDir := filepath.Join(work, "bundles", "notes")
	mustRun(t, "mine", "--from", filepath.Join(work, "captures"), "--shadow-from", filepath.Join(work, "heldout"),
		"--out", filepath.Join(work, "notes.star"), "--bundle", bundleDir, "--workflow-name", "add_home_note")
	config := fmt.Sprintf(`[mcp.notes]
command = [%q]
env = { NOTES_DIR = %q }

[tools.list_notes]
mcp = "notes"

[tools.open_notebook]
mcp = "notes"
capability = "mcp:notes"

[tools.add_note]
mcp = "notes"
capability = "mcp:notes"

[grants]
capabilities = ["mcp:notes"]
`, notesserver, servedNotes)
	if err := os.WriteFile(filepath.Join(work, "crystallize.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	// The server, before approval: nothing listed, a call is an error.
	cmd := exec.Command(crystallize, "serve", "mcp", "--bundles", "bundles", "--config", "crystallize.toml", "--state-dir", "state")
	cmd.Dir = work
	var serverLog syncBuffer
	cmd.Stderr = &serverLog
	changed := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	listed := func() map[string]*mcp.Tool {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]*mcp.Tool{}
		for _, tl := range workflowTools(res.Tools) {
			m[tl.Name] = tl
		}
		return m
	}
	waitChange := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Fatalf("no tools/list_changed after %s; server log:\n%s", what, serverLog.String())
		}
	}
	if got := listed(); len(got) != 0 {
		t.Fatalf("an unapproved bundle is listed: %v", got)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_home_note", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "needs_approval") {
		t.Fatalf("calling an unapproved bundle = %v, want an MCP error naming its status", err)
	}
	if !strings.Contains(serverLog.String(), "not served: promotion status needs_approval") {
		t.Errorf("the server log does not say why the bundle is not served:\n%s", serverLog.String())
	}

	// Approval lists it, with the candidate's parameters as its schema.
	mustRun(t, "approve", bundleDir, "--approver", "reviewer", "--state-dir", t.TempDir())
	waitChange("approval")
	tool := listed()["add_home_note"]
	if tool == nil {
		t.Fatalf("the approved bundle is not listed; server log:\n%s", serverLog.String())
	}
	var schema map[string]any
	raw, _ := json.Marshal(tool.InputSchema)
	json.Unmarshal(raw, &schema)
	// Examples are in the order of the traces, whose ids are random.
	if p, ok := schema["properties"].(map[string]any)["text"].(map[string]any); ok {
		if ex, ok := p["examples"].([]any); ok {
			slices.SortFunc(ex, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		}
	}
	want := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []any{"text"},
		"properties": map[string]any{"text": map[string]any{
			"type":        "string",
			"examples":    []any{"buy milk", "call the plumber", "water the plants"},
			"description": "the value of steps[2].parameters.text in the traces this workflow was crystallized from",
		}},
	}
	if diff := cmp.Diff(want, schema); diff != "" {
		t.Errorf("inputSchema (-want +got):\n%s", diff)
	}
	if a := tool.Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
		t.Errorf("annotations = %+v, want a tool that writes additively", a)
	}

	// Calling it does what the agent did, without the agent.
	for _, text := range texts {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_home_note", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("calling the workflow = %+v, %v; server log:\n%s", res, err, serverLog.String())
		}
		sc, _ := res.StructuredContent.(map[string]any)
		if sc["status"] != "completed" || sc["tool_calls"] != float64(2) {
			t.Errorf("structuredContent = %v", sc)
		}
		if _, err := os.Stat(filepath.Join(work, fmt.Sprint(sc["dir"]), "trace.json")); err != nil {
			t.Errorf("the run was not recorded: %v", err)
		}
	}
	// stats counts the calls served, and sets what one spent against
	// what the agent's sessions spent on the same procedure.
	t.Chdir(work)
	var st struct {
		Workflows []struct {
			Workflow string `json:"workflow"`
			PerCall  *struct {
				Examples int `json:"examples"`
				Calls    int `json:"calls"`
			} `json:"per_call"`
		} `json:"workflows"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "stats", "--runs", filepath.Join("state", "runs"), "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Workflows) != 1 || st.Workflows[0].PerCall == nil || st.Workflows[0].PerCall.Calls != len(texts) || st.Workflows[0].PerCall.Examples != len(texts)-1 {
		t.Errorf("stats after %d served calls of a workflow mined from %d sessions = %+v", len(texts), len(texts)-1, st)
	}
	servedFile, err := os.ReadFile(filepath.Join(servedNotes, "home.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(agentFile), string(servedFile)); diff != "" {
		t.Errorf("notes written by the workflow differ from the agent's (-agent +workflow):\n%s", diff)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_home_note", Arguments: map[string]any{"text": 3}})
	if err != nil || !res.IsError {
		t.Errorf("a number for a string parameter = %+v, %v; want a tool error", res, err)
	}

	// An edit after approval takes it off the list.
	wf := filepath.Join(bundleDir, "workflow.star")
	src, err := os.ReadFile(wf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wf, append(src, []byte("# edited after approval\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	waitChange("the edit")
	if got := listed(); len(got) != 0 {
		t.Fatalf("a bundle edited after approval is listed: %v", got)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_home_note", Arguments: map[string]any{"text": "x"}})
	if err == nil || !strings.Contains(err.Error(), "approval_stale") {
		t.Fatalf("calling an edited bundle = %v, want an MCP error naming approval_stale", err)
	}
}

// TestServeHTTP runs serve mcp --http as a process and uses it with the
// SDK's streamable HTTP client: listing, calling, and the list change
// when the bundle is edited.
func TestServeHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, held := noteTraces(t, dir, false)
	bundleDir := filepath.Join(dir, "bundles", "note")
	mustRun(t, "mine", "--from", src, "--shadow-from", held, "--bundle", bundleDir, "--workflow-name", "write_note")
	mustRun(t, "approve", bundleDir, "--approver", "reviewer", "--state-dir", t.TempDir())
	if err := os.WriteFile(filepath.Join(dir, "crystallize.toml"), []byte("[grants]\ncapabilities = [\"fs.read\", \"fs.write\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "crystallize"), "serve", "mcp", "--bundles", "bundles", "--http", "127.0.0.1:0")
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	addr := make(chan string, 1)
	var serverLog syncBuffer
	go func() {
		buf := make([]byte, 4096)
		var line strings.Builder
		sent := false
		for {
			n, err := stderr.Read(buf)
			serverLog.Write(buf[:n])
			line.Write(buf[:n])
			if i := strings.Index(line.String(), "listening on http://"); i >= 0 && !sent {
				rest := line.String()[i+len("listening on "):]
				if j := strings.IndexByte(rest, '\n'); j >= 0 {
					addr <- rest[:j]
					sent = true
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var url string
	select {
	case url = <-addr:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve mcp --http did not say where it listens:\n%s", serverLog.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	changed := make(chan struct{}, 10)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(workflowTools(tools.Tools)) != 1 || workflowTools(tools.Tools)[0].Name != "write_note" {
		t.Fatalf("ListTools = %+v, %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"content": "over http"}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "note.txt")); string(data) != "over http" {
		t.Errorf("note.txt = %q", data)
	}
	wf := filepath.Join(bundleDir, "workflow.star")
	data, _ := os.ReadFile(wf)
	os.WriteFile(wf, append(data, "# edited\n"...), 0o644)
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatalf("no tools/list_changed over HTTP; server log:\n%s", serverLog.String())
	}
	if tools, err := cs.ListTools(ctx, nil); err != nil || len(workflowTools(tools.Tools)) != 0 {
		t.Errorf("after the edit ListTools = %+v, %v; want none", tools, err)
	}
}

// TestCaptureUpstreamStandalone: through `capture mcp --upstream`, a
// client of a streamable HTTP server speaking a protocol version before
// 2026-07-28 receives what the server sends outside any request, on the
// standalone stream: a changed tool list and a log message.
func TestCaptureUpstreamStandalone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.Command(filepath.Join(bin, "notesserver"), "-http", addr)
	srv.Env = append(os.Environ(), "NOTES_DIR="+t.TempDir())
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

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(filepath.Join(bin, "crystallize"), "capture", "mcp", "--out", t.TempDir(), "--upstream", "http://"+addr+"/mcp")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	events := make(chan string, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { events <- "tools/list_changed" },
		//lint:ignore SA1019 logging is what servers before 2026-07-28 send outside a request
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { events <- fmt.Sprint("log ", req.Params.Data) },
	})
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting through capture mcp --upstream: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v >= "2026-07-28" {
		t.Fatalf("negotiated %s; the test needs a version with a standalone stream", v)
	}
	//lint:ignore SA1019 logging is what servers before 2026-07-28 send outside a request
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "announce", Arguments: map[string]any{"message": "hello from outside"}}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) < 2 {
		select {
		case e := <-events:
			got = append(got, e)
		case <-ctx.Done():
			t.Fatalf("the client received %q; stderr:\n%s", got, stderr.String())
		}
	}
	// The client's SDK runs each notification's handler on its own, so
	// the two may reach the handlers in either order; both must arrive.
	slices.Sort(got)
	if got[0] != "log hello from outside" || got[1] != "tools/list_changed" {
		t.Errorf("messages outside a request: %q", got)
	}
}
