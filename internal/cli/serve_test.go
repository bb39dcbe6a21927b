package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/runner"
	"github.com/crystallize-dev/crystallize/internal/runstate"
	"github.com/crystallize-dev/crystallize/internal/serve"
)

// noteTraces writes four traces of an agent writing a note with the
// built-in fs tools, the last held out, optionally stopping for an
// approval between writing and reading it back; each step cost a model
// call in the trace.
func noteTraces(t testing.TB, dir string, approval bool) (src, held string) {
	t.Helper()
	src, held = filepath.Join(dir, "traces"), filepath.Join(dir, "heldout")
	for _, d := range []string{src, held} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 4; i++ {
		approve := ""
		if approval {
			approve = `{"id":"a2","kind":"human_approval","name":"publish","approval":{"required":true,"boundary":"publish","prompt":"Publish the note?"}},`
		}
		tr := fmt.Sprintf(`{"version":1,"id":"t%d","metadata":{"goal":"write a note"},"actions":[
{"id":"a1","kind":"tool_call","name":"fs.write","parameters":{"path":"note.txt","content":"note %d"},"capabilities":["fs.write"],"side_effects":[{"kind":"file_write","target":"note.txt","capability":"fs.write"}],"output":{"bytes":6},"cost":{"model":"m","model_calls":1,"input_tokens":1000,"output_tokens":50,"total_cost_usd":0.01,"wall_ms":900}},
%s
{"id":"a3","kind":"tool_call","name":"fs.read","parameters":{"path":"note.txt"},"capabilities":["fs.read"],"output":"note %d","cost":{"model":"m","model_calls":1,"input_tokens":1200,"output_tokens":40,"total_cost_usd":0.012,"wall_ms":800}}]}`, i, i, approve, i)
		d := src
		if i == 4 {
			d = held
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("t%d.json", i)), []byte(tr), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src, held
}

// noteServer mines the note traces into an approved bundle under dir,
// writes a config granting the fs tools, and returns a serve.Server for
// it and a client session connected to it in process.
func noteServer(t testing.TB, dir string, approval bool) (*serve.Server, *mcp.ClientSession, *runconfig.Config) {
	return noteServerWith(t, dir, approval, nil)
}

func noteServerWith(t testing.TB, dir string, approval bool, copts *mcp.ClientOptions) (*serve.Server, *mcp.ClientSession, *runconfig.Config) {
	t.Helper()
	src, held := noteTraces(t, dir, approval)
	bundleDir := filepath.Join(dir, "bundles", "note")
	mustRun(t, "mine", "--from", src, "--shadow-from", held, "--bundle", bundleDir, "--workflow-name", "write_note")
	mustRun(t, "approve", bundleDir, "--approver", "reviewer", "--state-dir", t.TempDir())
	cfgFile := filepath.Join(dir, "crystallize.toml")
	if err := os.WriteFile(cfgFile, []byte("[grants]\ncapabilities = [\"fs.read\", \"fs.write\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := runconfig.LoadConfig(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	// The server registers its calls as the command does.
	e := &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	s := serve.New(serve.Options{
		Bundles:  []string{filepath.Join(dir, "bundles")},
		Run:      runner.Options{Config: cfg, StateDir: filepath.Join(dir, "state")},
		Register: serveRegistry(e, filepath.Join(dir, "state")),
	})
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return s, cs, cfg
}

func TestServeApprovalPending(t *testing.T) {
	dir := t.TempDir()
	_, cs, cfg := noteServer(t, dir, true)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"content": "hello"}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	sc, _ := res.StructuredContent.(map[string]any)
	approval, _ := sc["approval"].(map[string]any)
	resume, _ := sc["resume"].(string)
	if sc["status"] != runstate.StatusPendingApproval || approval["boundary"] != "publish" || !strings.Contains(resume, "crystallize resume") || !strings.HasSuffix(resume, "--approve publish") {
		t.Fatalf("structuredContent = %v, want pending_approval of publish with a resume command", sc)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "waiting for approval publish") {
		t.Errorf("text = %q", text)
	}
	if data, err := os.ReadFile(filepath.Join(cfg.Dir, "note.txt")); err != nil || string(data) != "hello" {
		t.Fatalf("note.txt = %q, %v; the step before the boundary should have run", data, err)
	}

	// The suspended call is a live session of an agent, pending, with
	// its approval in the inbox.
	runID := sc["run_id"].(string)
	state := filepath.Join(dir, "state")
	var live []registry.Summary
	if err := json.Unmarshal([]byte(mustRun(t, "sessions", "--json", "--state-dir", state)), &live); err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].SessionID != runID || live[0].State != registry.StatusPending || live[0].AgentType != registry.TypeAgent || live[0].Name != "write_note" || live[0].Agent != "test" {
		t.Fatalf("sessions --json = %+v, want run %s of write_note pending as a session of the agent that called (the MCP client test)", live, runID)
	}
	inbox := mustRun(t, "session", "inbox", "--json", "--db", registry.Path(state))
	if !strings.Contains(inbox, `"type": "approval_required"`) || !strings.Contains(inbox, `"boundary": "publish"`) || !strings.Contains(inbox, runID) {
		t.Errorf("session inbox --json lacks the call's approval:\n%s", inbox)
	}
	if line := mustRun(t, "status", "--state-dir", state); !strings.Contains(line, "test  |") || !strings.Contains(line, "|  1  /sessions") {
		t.Errorf("status = %q", line)
	}

	// A person continues it, and the run completes and leaves the list.
	out := mustRun(t, "resume", runID, "--approve", "publish", "--state-dir", state, "--config", filepath.Join(dir, "crystallize.toml"))
	if !strings.Contains(out, ": completed") {
		t.Errorf("resume printed:\n%s", out)
	}
	if err := json.Unmarshal([]byte(mustRun(t, "sessions", "--json", "--state-dir", state)), &live); err != nil || len(live) != 0 {
		t.Errorf("sessions --json after resume = %+v, %v; want none active", live, err)
	}
}

func TestServeRefusals(t *testing.T) {
	dir := t.TempDir()
	_, cs, _ := noteServer(t, dir, false)
	ctx := context.Background()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "missing parameters content"},
		{map[string]any{"content": "x", "extra": 1}, "unknown parameters extra"},
		{map[string]any{"content": 7}, "$.content: integer, want string"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: tc.args})
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, tc.want) {
			t.Errorf("CallTool(%v) = %+v, %v; want a tool error containing %q", tc.args, res, err, tc.want)
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_workflow"}); err == nil {
		t.Errorf("calling an unknown tool succeeded")
	}
}

// A bundle removed while the server runs leaves the list, and clients
// are told; put back, it returns.
func TestServeRemoved(t *testing.T) {
	dir := t.TempDir()
	changed := make(chan struct{}, 10)
	s, cs, _ := noteServerWith(t, dir, false, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	count := func() int {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Tools)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no tools/list_changed after %s", what)
		}
	}
	if count() != 1 {
		t.Fatal("the approved bundle is not listed")
	}
	bundleDir := filepath.Join(dir, "bundles", "note")
	if err := os.Rename(bundleDir, filepath.Join(dir, "away")); err != nil {
		t.Fatal(err)
	}
	s.Refresh()
	wait("removal")
	if n := count(); n != 0 {
		t.Fatalf("%d tools listed after the bundle was removed", n)
	}
	if err := os.Rename(filepath.Join(dir, "away"), bundleDir); err != nil {
		t.Fatal(err)
	}
	s.Refresh()
	wait("return")
	if n := count(); n != 1 {
		t.Fatalf("%d tools listed after the bundle came back", n)
	}
}

// BenchmarkServeCall measures one call of a served workflow of two
// built-in steps (fs.write, fs.read) over the SDK's in-memory transport,
// against runner.Run of the same workflow: the difference is what
// serving adds (the protocol, the readiness check that validates the
// bundle, reloading it).
func BenchmarkServeCall(b *testing.B) {
	dir := b.TempDir()
	_, cs, cfg := noteServer(b, dir, false)
	ctx := context.Background()
	b.Run("serve", func(b *testing.B) {
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_note", Arguments: map[string]any{"content": "x"}})
			if err != nil || res.IsError {
				b.Fatalf("%+v, %v", res, err)
			}
		}
	})
	b.Run("runtime", func(b *testing.B) {
		w, err := runner.Load(filepath.Join(dir, "bundles", "note"))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := runner.Run(ctx, w, runner.Params{"content": "x"}, runner.Options{Config: cfg, StateDir: filepath.Join(dir, "state")}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
