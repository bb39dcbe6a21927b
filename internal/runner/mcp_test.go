package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// The test binary stands in for an MCP server when RUNTIME_TEST_MCP is
// set: "serve" serves docsServer over stdio, "exit" fails before it
// starts. This is an init function rather than a case of TestMain so the
// server needs nothing from the command-tool helpers. With
// RUNTIME_TEST_MCP_LOG set, the server appends "start" and "exit" lines to
// that file, so a test can count sessions.
func init() {
	switch os.Getenv("RUNTIME_TEST_MCP") {
	case "serve":
		logf := func(msg string) {
			if p := os.Getenv("RUNTIME_TEST_MCP_LOG"); p != "" {
				f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err == nil {
					fmt.Fprintln(f, msg)
					f.Close()
				}
			}
		}
		logf("start")
		err := docsServer().Run(context.Background(), &mcp.StdioTransport{})
		logf("exit")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "docs index missing")
		os.Exit(3)
	}
}

// docsServer is the MCP server of the tests: search is read-only and
// answers with structured content, archive is destructive and answers
// with text, fail reports a tool error, crash exits the server.
func docsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "v0.0.1"}, nil)
	no, yes := false, true
	type searchIn struct {
		Query string `json:"query"`
	}
	type searchOut struct {
		Path string `json:"path"`
		Hits int    `json:"hits"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: "search", Description: "find the page about a query",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
		return nil, searchOut{Path: "docs/" + in.Query + ".md", Hits: 3}, nil
	})
	type pathIn struct {
		Path string `json:"path"`
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: "archive", Description: "archive a page",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, Title: "Archive page"},
	}, func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "archived " + in.Path}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("quota exceeded")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "index corrupted")
		os.Exit(7)
		return nil, nil, nil
	})
	return s
}

// docsWorkflow is a workflow in the style codegen writes: the first
// tool's result flows into the second's argument.
const docsWorkflow = `# capabilities: docs.read, docs.write · secrets: none
def archive_docs(ctx, query):
    """Runs docs.search, docs.archive."""
    # step 1 · tool_call docs.search · capabilities docs.read
    step1 = ctx.tool("docs.search", query = query)
    # step 2 · tool_call docs.archive · capabilities docs.write
    step2 = ctx.tool("docs.archive", path = step1["path"])
    return {"hit": step1, "archived": step2}
`

// docsConfig returns crystallize.toml binding docs.* to the server
// described by server (the body of its [mcp.docs] table), loaded.
func docsConfig(t *testing.T, server string) *runconfig.Config {
	t.Helper()
	dir := t.TempDir()
	src := `[tools."docs.*"]
mcp = "docs"
capability = "docs.read"

[tools."docs.archive"]
mcp = "docs"
tool = "archive"
capability = "docs.write"

[grants]
capabilities = ["docs.read", "docs.write"]

[mcp.docs]
` + server
	p := filepath.Join(dir, runconfig.ConfigFile)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := runconfig.LoadConfig(p)
	if err != nil {
		t.Fatalf("LoadConfig: %v", err)
	}
	return cfg
}

// stdioServer is the [mcp.docs] body that starts the test binary as the
// server, with mode as RUNTIME_TEST_MCP.
func stdioServer(mode, log string) string {
	return fmt.Sprintf("command = [%s]\nenv = { RUNTIME_TEST_MCP = %q, RUNTIME_TEST_MCP_LOG = %s }\ntimeout = \"20s\"\n",
		strconv.Quote(os.Args[0]), mode, strconv.Quote(log))
}

func TestMCPStdio(t *testing.T) {
	log := filepath.Join(t.TempDir(), "server.log")
	cfg := docsConfig(t, stdioServer("serve", log))
	testDocsRun(t, cfg)
	// One session for both calls, closed when the run ended.
	if got := readFile(t, log); got != "start\nexit\n" {
		t.Errorf("server log = %q, want one start and one exit", got)
	}
}

func TestMCPStreamableHTTP(t *testing.T) {
	srv := docsServer()
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	cfg := docsConfig(t, fmt.Sprintf("url = %q\n", ts.URL))
	testDocsRun(t, cfg)
}

// testDocsRun runs docsWorkflow through cfg and checks its result and
// record.
func testDocsRun(t *testing.T, cfg *runconfig.Config) {
	t.Helper()
	w := workflow(t, docsWorkflow)
	o := opts(t, nil)
	o.Config = cfg
	res, err := Run(context.Background(), w, Params{"query": "retries"}, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := map[string]any{
		"hit":      map[string]any{"path": "docs/retries.md", "hits": json.Number("3")},
		"archived": "archived docs/retries.md",
	}
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	tr := readTrace(t, res)
	var got []any
	for _, a := range tr.Actions {
		got = append(got, a.Metadata["mcp"])
	}
	wantMeta := []any{
		map[string]any{"server": "docs", "tool": "search", "annotations": map[string]any{
			"readOnlyHint": true, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false,
		}},
		map[string]any{"server": "docs", "tool": "archive", "annotations": map[string]any{
			"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true, "title": "Archive page",
		}},
	}
	if diff := cmp.Diff(wantMeta, got); diff != "" {
		t.Errorf("trace mcp metadata (-want +got):\n%s", diff)
	}
	if p := tr.Actions[1].Parameters["path"]; p != "docs/retries.md" {
		t.Errorf("step 2 path = %v, want step 1's docs/retries.md", p)
	}
	checkSessionLog(t, res)
	session := readFile(t, filepath.Join(res.Dir, runstate.SessionFile))
	for _, line := range []string{
		"MCP server `docs`, tool `search`: destructiveHint=true, idempotentHint=true, openWorldHint=false, readOnlyHint=true",
		"MCP server `docs`, tool `archive`: destructiveHint=true, idempotentHint=false, openWorldHint=true, readOnlyHint=false",
	} {
		if !strings.Contains(session, line+"\n") {
			t.Errorf("session.md lacks %q:\n%s", line, session)
		}
	}
}

func TestMCPErrors(t *testing.T) {
	for _, tc := range []struct {
		name, mode, call string
		want             string // a prefix of the error
		stderr           string // the server's stderr quoted at its end
	}{
		{
			name: "tool error", mode: "serve", call: "docs.fail",
			want: "tool docs.fail: mcp server docs: tool fail: the tool reported an error: quota exceeded",
		},
		{
			name: "undeclared tool", mode: "serve", call: "docs.nothing",
			want: "tool docs.nothing: mcp server docs: tool nothing: the server declares no such tool (it declares: archive, crash, fail, search)",
		},
		{
			name: "server exits on start", mode: "exit", call: "docs.search",
			want: "tool docs.search: mcp server docs: starting: ", stderr: "docs index missing",
		},
		{
			name: "server exits on call", mode: "serve", call: "docs.crash",
			want: "tool docs.crash: mcp server docs: tool crash: the server went away: ", stderr: "index corrupted",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := docsConfig(t, stdioServer(tc.mode, ""))
			w := workflow(t, "# capabilities: docs.read · secrets: none\ndef wf(ctx):\n    ctx.tool(\""+tc.call+"\")\n")
			o := opts(t, nil)
			o.Config = cfg
			res, err := Run(context.Background(), w, nil, o)
			if !errors.Is(err, toolexec.ErrMCP) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("Run = %v, want ErrMCP starting %q", err, tc.want)
			}
			if tc.stderr != "" && !strings.HasSuffix(err.Error(), "; server stderr: "+tc.stderr) {
				t.Errorf("Run = %v, want it to end quoting the server's stderr %q", err, tc.stderr)
			}
			if res.Status != runstate.StatusFailed || len(res.Receipts) != 1 || res.Receipts[0].Status != ReceiptError {
				t.Errorf("status %s, receipts %+v; want failed with one error receipt", res.Status, res.Receipts)
			}
		})
	}
}

func TestCheckMCP(t *testing.T) {
	w := workflow(t, `# capabilities: docs.read · secrets: none
def wf(ctx):
    ctx.tool("docs.search", query = "q")
    ctx.tool("docs.missing")
    ctx.tool("other.tool")
`)
	cfg := docsConfig(t, stdioServer("serve", ""))
	err := CheckMCP(context.Background(), w, cfg, Options{})
	var ue *UnboundError
	if !errors.As(err, &ue) || errors.Is(err, toolexec.ErrMCP) {
		t.Fatalf("CheckMCP = %v, want only an *UnboundError", err)
	}
	if diff := cmp.Diff([]string{"docs.missing", "other.tool"}, ue.Names); diff != "" {
		t.Errorf("unbound (-want +got):\n%s", diff)
	}

	cfg = docsConfig(t, stdioServer("exit", ""))
	err = CheckMCP(context.Background(), w, cfg, Options{})
	if !errors.As(err, &ue) || !errors.Is(err, toolexec.ErrMCP) {
		t.Fatalf("CheckMCP = %v, want an *UnboundError and ErrMCP", err)
	}
	if diff := cmp.Diff([]string{"other.tool"}, ue.Names); diff != "" {
		t.Errorf("unbound with the server down (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "mcp server docs: starting: ") {
		t.Errorf("CheckMCP = %v, want it to say the server did not start", err)
	}
}

func TestMCPConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{
			name: "unknown server",
			src:  "[tools.\"docs.*\"]\nmcp = \"dcos\"\n[mcp.docs]\nurl = \"http://127.0.0.1:1/mcp\"\n",
			want: `tools."docs.*".mcp: unknown server "dcos"; define it under [mcp.dcos] (servers: docs)`,
		},
		{
			name: "no server",
			src:  "[mcp.docs]\ntimeout = \"1s\"\n",
			want: "mcp.docs: no server; set command (stdio) or url (streamable HTTP)",
		},
		{
			name: "both",
			src:  "[mcp.docs]\ncommand = [\"x\"]\nurl = \"http://h/mcp\"\n",
			want: "mcp.docs: both command and url; set one",
		},
		{
			name: "bad url",
			src:  "[mcp.docs]\nurl = \"127.0.0.1:8931\"\n",
			want: `mcp.docs.url: "127.0.0.1:8931" is not an http or https URL`,
		},
		{
			name: "bad timeout",
			src:  "[mcp.docs]\ncommand = [\"x\"]\ntimeout = \"soon\"\n",
			want: `mcp.docs.timeout: "soon" is not a positive duration such as "30s"`,
		},
		{
			name: "unknown key",
			src:  "[mcp.docs]\ncommand = [\"x\"]\nargs = [\"y\"]\n",
			want: "mcp.docs.args: unknown key",
		},
		{
			name: "tool without mcp",
			src:  "[tools.x]\ncommand = [\"x\"]\ntool = \"y\"\n",
			want: `tools."x".tool: names an MCP tool, but the binding sets no mcp server`,
		},
		{
			name: "cwd on binding",
			src:  "[tools.x]\nmcp = \"docs\"\ncwd = \"sub\"\n[mcp.docs]\ncommand = [\"x\"]\n",
			want: `tools."x": cwd and env of an MCP server go in its [mcp.docs] entry: one server process serves every binding`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), runconfig.ConfigFile)
			if err := os.WriteFile(p, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := runconfig.LoadConfig(p)
			if want := p + ": " + tc.want; err == nil || err.Error() != want {
				t.Errorf("LoadConfig = %v, want %s", err, want)
			}
		})
	}
}
