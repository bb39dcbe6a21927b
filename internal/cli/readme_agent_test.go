package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// readmeBlock returns the lines of the first ```sh block after heading in
// README.md, without comments.
func readmeBlock(t *testing.T, heading string) []string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no heading %q", heading)
	}
	s = s[i:]
	start := strings.Index(s, "```sh\n")
	if start < 0 {
		t.Fatalf("README.md has no sh block after %q", heading)
	}
	s = s[start+len("```sh\n"):]
	s = s[:strings.Index(s, "```")]
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestREADMEBackIntoAgent runs the commands of the README's "From your
// agent's history to a tool it calls" as they are written, in a shell
// whose home holds Claude Code sessions in the shape of real ones (the
// procedures among noise, under ~/.claude/projects/-home-me-src-myrepo),
// with the crystallize under test first on PATH. Between install and
// stats the agent does what the installed skill tells it: it starts the
// server its configuration names and calls the tool. Each command must
// succeed and say what the README says it says.
func TestREADMEBackIntoAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	if goruntime.GOOS == "windows" {
		t.Skip("runs the README's commands in sh")
	}
	lines := readmeBlock(t, "### From your agent's history to a tool it calls")
	if len(lines) < 3 || lines[len(lines)-1] != "crystallize stats" {
		t.Fatalf("the README block should end with crystallize stats after the agent's call: %q", lines)
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	project := filepath.Join(home, "src", "myrepo")
	history := filepath.Join(home, ".claude", "projects", "-home-me-src-myrepo")
	for _, d := range []string{filepath.Join(project, "tools"), history} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The generator spreads sessions over several projects; the README
	// mines one project's history, so they are gathered into one.
	corpus := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: agentSessions, Seed: 7})
	gen := t.TempDir()
	if err := corpus.Write(gen, tracetest.FormatClaude); err != nil {
		t.Fatal(err)
	}
	projects, err := os.ReadDir(gen)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range projects {
		entries, err := os.ReadDir(filepath.Join(gen, p.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := os.Rename(filepath.Join(gen, p.Name(), e.Name()), filepath.Join(history, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What the project grants the workflow, and a stand-in for gh.
	if err := os.WriteFile(filepath.Join(project, "tools", "gh-issue.sh"), []byte(triageGh), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "crystallize.toml"), []byte(triageConfig), 0o644); err != nil {
		t.Fatal(err)
	}

	sh := func(script string) string {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = home
		cmd.Env = append(os.Environ(), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("README commands failed: %v\n%s\noutput:\n%s", err, script, out)
		}
		return string(out)
	}
	out := sh(strings.Join(lines[:len(lines)-1], "\n"))
	name := ""
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[1] == "install" {
			name = filepath.Base(f[2])
		}
	}
	if page, err := os.ReadFile(filepath.Join(project, "review.html")); err != nil || !strings.Contains(string(page), name) {
		t.Errorf("the review page of %s was not written: %v", name, err)
	}
	server := "crystallize-" + strings.ReplaceAll(name, "_", "-")
	for _, want := range []string{
		"Bundle: bundles/" + name + " ",
		"Promotion: needs_approval (nothing runs for real until it is ready)",
		"wrote review.html (bundles/" + name + ", status needs_approval)",
		"promotion status is now ready",
		"MCP server: " + server + " in " + filepath.Join(project, ".mcp.json"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the README's commands did not print %q:\n%s", want, out)
		}
	}

	// The agent starts the server its configuration names, in the
	// project, and calls the tool with a new issue and comment.
	data, err := os.ReadFile(filepath.Join(project, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	entry := jsonServers(t, data)[server]
	if entry == nil {
		t.Fatalf(".mcp.json does not name %s:\n%s", server, data)
	}
	var args []string
	for _, a := range entry["args"].([]any) {
		args = append(args, a.(string))
	}
	cmd := exec.Command(entry["command"].(string), args...)
	cmd.Dir = project
	var serverLog syncBuffer
	cmd.Stderr = &serverLog
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(workflowTools(tools.Tools)) != 1 || workflowTools(tools.Tools)[0].Name != name {
		t.Fatalf("the installed server lists %v (%v), want the one tool %s\n%s", tools, err, name, serverLog.String())
	}
	params := map[string]any{}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	raw, _ := json.Marshal(workflowTools(tools.Tools)[0].InputSchema)
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	for p := range schema.Properties {
		switch p {
		case "number":
			params[p] = "4242"
		case "body":
			params[p] = "Reproduced on main: a new symptom."
		default:
			t.Fatalf("the triage tool takes %s, which this test does not know: %s", p, raw)
		}
	}
	params = toolArguments(t, workflowTools(tools.Tools)[0], params)
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: params})
	if err != nil || call.IsError {
		t.Fatalf("calling %s(%v) = %+v, %v\n%s", name, params, call, err, serverLog.String())
	}
	got, err := os.ReadFile(filepath.Join(project, "issues", "4242.log"))
	if want := "label bug\ncomment Reproduced on main: a new symptom.\n"; err != nil || string(got) != want {
		t.Errorf("the call's effect: %q, %v; want %q", got, err, want)
	}

	// The README's last command, in the project, shows the call.
	out = sh(strings.Join(append([]string{"cd " + project}, lines[len(lines)-1]), "\n"))
	if !strings.Contains(out, name+"\n  runs: 1 (completed 1)") {
		t.Errorf("stats after the agent's call:\n%s", out)
	}
}
