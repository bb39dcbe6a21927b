package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/registry"
	"github.com/crystallize-dev/crystallize/internal/review"
	"github.com/crystallize-dev/crystallize/internal/serve"
)

// TestServeAgentSession: a real crystallize serve mcp process over stdio
// and an MCP client of the official SDK. The client registers, the
// person's status line and session listing show it as BRANCH/AGENT with
// its model, it asks, the person answers with session inbox answer (and
// a second question from the review page's inbox), the client reads each
// answer and who gave it, ends, and the status line no longer shows it.
func TestServeAgentSession(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	state, bundles := filepath.Join(work, "state"), filepath.Join(work, "bundles")
	if err := os.Mkdir(bundles, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(state, registry.DBFile)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(filepath.Join(bin, "crystallize"), "serve", "mcp", "--bundles", bundles, "--state-dir", state)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, stderr.String())
		}
		if res.IsError {
			t.Fatalf("%s: %s", tool, res.Content[0].(*mcp.TextContent).Text)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	// Serving created no registry: nobody registered yet.
	if _, err := os.Stat(db); err == nil {
		t.Error("serve mcp created the registry before any agent registered")
	}
	id := call("session_register", map[string]any{"model": "opus-4", "branch": "feat/auth", "cwd": work})["session_id"].(string)
	if got, want := mustRun(t, "status", "--state-dir", state), "[1] feat/auth/claude-code  |  0  /sessions\n"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
	list := mustRun(t, "sessions", "--state-dir", state)
	if !regexp.MustCompile(`(?m)^\[1\]  running  agent  claude-code  ` + id + `  ` + regexp.QuoteMeta(work) + `  feat/auth/claude-code \(opus-4\)$`).MatchString(list) {
		t.Errorf("sessions =\n%s\nwant the agent session with its branch, agent and model", list)
	}

	item := int64(call("session_ask", map[string]any{"session_id": id, "question": "Which auth strategy?", "options": []string{"JWT", "Session", "OAuth"}})["item"].(float64))
	if got, want := mustRun(t, "status", "--state-dir", state), "[1] feat/auth/claude-code  |  1  /sessions\n"; got != want {
		t.Errorf("status after session_ask = %q, want %q", got, want)
	}
	inbox := mustRun(t, "session", "inbox", "--db", db)
	if want := fmt.Sprintf("#%d  %s  [!decision_needed]  Which auth strategy? (JWT | Session | OAuth)\n", item, id); inbox != want {
		t.Errorf("session inbox = %q, want %q", inbox, want)
	}
	show := mustRun(t, "sessions", "show", "1", "--state-dir", state)
	if !strings.Contains(show, "an agent session of feat/auth/claude-code (opus-4): the agent keeps its own log") || !strings.Contains(show, "[!decision_needed]  Which auth strategy?") {
		t.Errorf("sessions show 1 =\n%s\nwant the agent and its question", show)
	}
	if got := call("session_check", map[string]any{"session_id": id, "item": item}); got["state"] != "pending" {
		t.Errorf("session_check before the answer = %v", got)
	}
	out := mustRun(t, "session", "inbox", "answer", fmt.Sprint(item), "--decide", "OAuth", "--reason", "SSO is required", "--by", "ana", "--db", db)
	if want := fmt.Sprintf("answered #%d (decide OAuth) for %s\n", item, id); out != want {
		t.Errorf("session inbox answer = %q, want %q", out, want)
	}
	got := call("session_check", map[string]any{"session_id": id, "item": item})
	if got["state"] != "answered" || got["option"] != "OAuth" || got["by"] != "ana" || got["reason"] != "SSO is required" {
		t.Errorf("session_check after the answer = %v, want OAuth by ana", got)
	}

	// The review page answers through the same road, as its --approver.
	second := int64(call("session_ask", map[string]any{"session_id": id, "question": "Squash the commits?", "options": []string{"yes", "no"}})["item"].(float64))
	page := &cliInbox{e: &env{getenv: func(string) string { return "" }}, db: db, by: "lead"}
	pending, err := page.Pending(ctx)
	if err != nil || len(pending) != 1 || pending[0].ID != second {
		t.Fatalf("review inbox = %+v, %v; want item %d", pending, err, second)
	}
	if _, err := page.Answer(ctx, second, registry.Answer{Decide: "no"}); err != nil {
		t.Fatal(err)
	}
	if got := call("session_check", map[string]any{"session_id": id, "item": second}); got["option"] != "no" || got["by"] != "lead" {
		t.Errorf("session_check of the page's answer = %v, want no by lead", got)
	}

	call("session_end", map[string]any{"session_id": id, "status": "completed"})
	if got, want := mustRun(t, "status", "--state-dir", state), "no active sessions  |  0  /sessions\n"; got != want {
		t.Errorf("status after session_end = %q, want %q", got, want)
	}
	if all := mustRun(t, "sessions", "--all", "--state-dir", state); !strings.Contains(all, "[1]  completed  agent  claude-code  "+id) {
		t.Errorf("sessions --all =\n%s\nwant the session completed", all)
	}
}

// TestServeAgentsAPI: serve agents listens on loopback, writes a fresh
// token its requests need, and its sessions are the registry's.
func TestServeAgentsAPI(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	e := &env{stdout: io.Discard, stderr: &stderr, getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, e, []string{"serve", "agents", "--addr", "127.0.0.1:0", "--state-dir", state})
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve agents exited %d\n%s", code, stderr.String())
		}
	}()
	var url string
	for range 200 {
		if m := regexp.MustCompile(`serve: agents API on (http://\S+) \(token in (\S+)\)`).FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if url == "" {
		t.Fatalf("no address on stderr: %q", stderr.String())
	}
	token, err := os.ReadFile(filepath.Join(state, registry.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	post := func(token, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url+"/v1/sessions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := post("wrong", `{"agent":"ci-bot"}`); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d %s, want 401", code, body)
	}
	if code, body := post(strings.TrimSpace(string(token)), `{"agent":"ci-bot","branch":"main"}`); code != http.StatusCreated {
		t.Fatalf("register: %d %s", code, body)
	}
	if got, want := mustRun(t, "status", "--state-dir", state), "[1] main/ci-bot  |  0  /sessions\n"; got != want {
		t.Errorf("status = %q, want %q", got, want)
	}
}

// workflowTools is tools without the session tools serve mcp lists next
// to the workflows.
func workflowTools(tools []*mcp.Tool) []*mcp.Tool {
	var out []*mcp.Tool
	for _, tl := range tools {
		if !slices.Contains(serve.SessionTools, tl.Name) {
			out = append(out, tl)
		}
	}
	return out
}

// TestReviewAgentQuestion: an agent's question written as HTML reaches
// the review page as text, not markup; its option, answered from the
// page, reaches the agent as it was sent, with who answered.
func TestReviewAgentQuestion(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	agents := registry.NewAgents(state, registry.Options{})
	defer agents.Close()
	id, err := agents.Register(ctx, registry.Agent{Name: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	opt := `<img src=x onerror="alert(2)">`
	item, err := agents.Ask(ctx, id, registry.Question{Text: "<script>alert(1)</script> Which?", Options: []string{opt, "plain"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := review.NewServer(review.Options{Inbox: &cliInbox{e: &env{getenv: func(string) string { return "" }}, db: filepath.Join(state, registry.DBFile), by: "lead"}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config.Handler = srv.Handler(ts.Listener.Addr().String())
	ts.Start()
	defer ts.Close()
	res, err := http.Get(ts.URL + "/inbox")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := string(body)
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
		t.Errorf("the inbox page carries the agent's markup:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt; Which?") {
		t.Errorf("the inbox page lacks the question as text:\n%s", page)
	}
	form := url.Values{"token": {srv.Token()}, "decide": {opt}}
	res, err = http.PostForm(fmt.Sprintf("%s/inbox/%d", ts.URL, item), form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("answering from the page: %s", res.Status)
	}
	r, err := agents.Poll(ctx, id, item)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != registry.ReplyAnswered || r.Option != opt || r.By != "lead" {
		t.Errorf("Poll = %+v, want %q by lead", r, opt)
	}
}

// TestAnswerAgentQuestionJSON pins session inbox answer --json for an
// agent's question, and who answers by default: $USER.
func TestAnswerAgentQuestionJSON(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	agents := registry.NewAgents(state, registry.Options{})
	defer agents.Close()
	id, _ := agents.Register(ctx, registry.Agent{Name: "codex"})
	item, err := agents.Ask(ctx, id, registry.Question{Text: "Rename the package?", Options: []string{"yes", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	e := &env{stdout: &stdout, stderr: &stderr, getenv: func(k string) string {
		if k == "USER" {
			return "ana"
		}
		return ""
	}}
	args := []string{"session", "inbox", "answer", fmt.Sprint(item), "--dismiss", "--reason", "ask the owner", "--json", "--db", filepath.Join(state, registry.DBFile)}
	if code := run(ctx, e, args); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := fmt.Sprintf("{\n  \"answer\": \"dismiss\",\n  \"answered_by\": \"ana\",\n  \"item\": %d,\n  \"reason\": \"ask the owner\",\n  \"session_id\": %q\n}\n", item, id)
	if stdout.String() != want {
		t.Errorf("--json = %s, want %s", stdout.String(), want)
	}
	if r, _ := agents.Poll(ctx, id, item); r.State != registry.ReplyDismissed || r.By != "ana" {
		t.Errorf("Poll = %+v, want dismissed by ana", r)
	}
	stdout.Reset()
	if code := run(ctx, e, args); code != 2 || !strings.Contains(stderr.String(), "was answered already (dismiss)") {
		t.Errorf("a second answer: exit %d, %s; want a usage error", code, stderr.String())
	}
}
