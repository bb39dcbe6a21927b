package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/skill"
	"github.com/crystallize-dev/crystallize/internal/tracetest"
)

// This file is the acceptance test of "back into the agent": Claude Code
// sessions in which a person had the agent triage issues, among noise
// (exploration, retries, other procedures, sessions without tools), are
// mined into bundles; the triage bundle is approved and installed for
// each agent into a project of its own; the agent's configuration starts
// the server, whose tool does what the agent did (through stand-ins for
// gh bound in the project's crystallize.toml), and stats counts the call
// and sets it against what the agent spent.

// triageGh stands in for gh issue edit and gh issue comment: it appends
// the call to issues/NUMBER.log in the directory it runs in (the
// project) and prints the issue's address, as gh does.
const triageGh = `#!/bin/sh
set -eu
[ "$1" = "--" ] && shift
verb=$1 number=$2 value=$3
mkdir -p issues
printf '%s %s\n' "$verb" "$value" >> "issues/$number.log"
echo "https://example.test/issues/$number"
`

// triageConfig binds the two gh commands of the triage workflow to the
// stand-in, which runs in gh's place under the capability the reviewed
// workflow declares for gh (exec:gh), the only one granted.
const triageConfig = `[workspace]
roots = ["."]

[tools."gh issue edit"]
command = ["./tools/gh-issue.sh", "--", "label", "{number}", "{add_label}"]
capability = "exec:gh"

[tools."gh issue comment"]
command = ["./tools/gh-issue.sh", "--", "comment", "{number}", "{body}"]
capability = "exec:gh"

[grants]
capabilities = ["exec:gh"]
`

// TestAgentSessionsBackIntoAgent runs the whole chain, from the agent's
// sessions to the agent calling the workflow, for each agent.
func TestAgentSessionsBackIntoAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	if goruntime.GOOS == "windows" {
		t.Skip("the gh stand-in is a shell script")
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	crystallize := filepath.Join(bin, "crystallize")
	work := t.TempDir()

	// Sessions in Claude Code's shape, with noise around the procedures.
	corpus := tracetest.GenerateAgents(tracetest.AgentConfig{Sessions: agentSessions, Seed: 7})
	sessions := filepath.Join(work, "sessions")
	if err := corpus.Write(sessions, tracetest.FormatClaude); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range corpus.Manifest.Sessions {
		kinds[s.Kind]++
	}
	if kinds[tracetest.SessionExploration] == 0 || kinds[tracetest.SessionNoTools] == 0 || len(corpus.Manifest.Procedures) < 2 {
		t.Fatalf("the corpus lacks noise: sessions by kind %v, %d procedures", kinds, len(corpus.Manifest.Procedures))
	}
	var triage *tracetest.AgentProcedure
	for i := range corpus.Manifest.Procedures {
		if corpus.Manifest.Procedures[i].Name == "triage_issue" {
			triage = &corpus.Manifest.Procedures[i]
		}
	}
	if triage == nil || len(triage.Plantings) < 3 {
		t.Fatalf("the corpus has no triage_issue planted three times: %+v", corpus.Manifest.Procedures)
	}

	// Mine: every candidate becomes a bundle; the triage one is found,
	// safe, and passes its shadow replay.
	bundles, reportPath := filepath.Join(work, "bundles"), filepath.Join(work, "report.json")
	mustRun(t, "mine", "--from", sessions, "--bundles", bundles, "--report", reportPath)
	data, err := os.ReadFile(reportPath)
	if err != nil {
		t.Fatal(err)
	}
	var report e2eReport
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	cand := checkProcedureMined(t, tracetest.FormatClaude, triage, &report)
	if cand == nil {
		t.Fatalf("triage_issue was not mined")
	}
	b := filepath.Join(bundles, cand.Name)
	var manifest struct {
		RiskLevel    string   `json:"risk_level"`
		Capabilities []string `json:"capabilities"`
		Shadow       struct {
			Pass bool `json:"pass"`
		} `json:"shadow"`
		Promotion struct {
			Criteria struct {
				Status string `json:"status"`
			} `json:"criteria"`
		} `json:"promotion"`
	}
	data, err = os.ReadFile(filepath.Join(b, "candidate.json"))
	if err != nil {
		t.Fatalf("the triage candidate has no bundle: %v", err)
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.RiskLevel != "low" || !slices.Equal(manifest.Capabilities, []string{"exec:gh"}) || !manifest.Shadow.Pass || manifest.Promotion.Criteria.Status != "needs_approval" {
		t.Fatalf("triage bundle: risk %q, capabilities %v, shadow pass %v, promotion %q; want a low-risk gh-only candidate that passed its shadow replay, awaiting approval",
			manifest.RiskLevel, manifest.Capabilities, manifest.Shadow.Pass, manifest.Promotion.Criteria.Status)
	}
	if out := mustRun(t, "validate", b); !strings.Contains(out, "\nOK") {
		t.Fatalf("validate:\n%s", out)
	}
	if out := mustRun(t, "approve", b, "--approver", "lead@example.com", "--reason", "read it", "--state-dir", filepath.Join(work, "state")); !strings.Contains(out, "promotion status is now ready") {
		t.Fatalf("approve:\n%s", out)
	}

	server := "crystallize-" + strings.ReplaceAll(cand.Name, "_", "-")
	for i, tc := range []struct {
		agent, config, skills string
		servers               func(*testing.T, []byte) map[string]map[string]any
	}{
		{"claude-code", ".mcp.json", ".claude/skills", jsonServers},
		{"codex", ".codex/config.toml", ".agents/skills", tomlServers},
		{"gemini", ".gemini/settings.json", ".gemini/skills", jsonServers},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			project, home := filepath.Join(work, tc.agent, "project"), filepath.Join(work, tc.agent, "home")
			for _, d := range []string{filepath.Join(project, "tools"), home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(project, "tools", "gh-issue.sh"), []byte(triageGh), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, "crystallize.toml"), []byte(triageConfig), 0o644); err != nil {
				t.Fatal(err)
			}

			// Install: the skill passes the Agent Skills checks, and the
			// configuration parses and names the server.
			out := mustRun(t, "install", b, "--agent", tc.agent, "--scope", "project", "--project", project, "--home", home, "--command", crystallize)
			if !strings.Contains(out, "MCP server: "+server) {
				t.Errorf("install output:\n%s", out)
			}
			skillDir := filepath.Join(project, tc.skills, strings.TrimPrefix(server, "crystallize-"))
			md, err := os.ReadFile(filepath.Join(skillDir, "SKILL.md"))
			if err != nil {
				t.Fatal(err)
			}
			if probs := skill.Check(skillDir, md, nil); len(probs) > 0 {
				t.Errorf("installed skill fails the skill checks: %+v\n%s", probs, md)
			}
			if !strings.Contains(string(md), "Call the MCP tool "+cand.Name+" (server "+server+")") {
				t.Errorf("installed skill does not send the agent to the tool:\n%s", md)
			}
			data, err := os.ReadFile(filepath.Join(project, tc.config))
			if err != nil {
				t.Fatal(err)
			}
			entry := tc.servers(t, data)[server]
			if entry == nil || entry["command"] != crystallize {
				t.Fatalf("%s does not name the server %s run by %s:\n%s", tc.config, server, crystallize, data)
			}
			var args []string
			for _, a := range entry["args"].([]any) {
				args = append(args, a.(string))
			}

			// The agent starts the server from its configuration, in the
			// project, and sees the tool.
			cmd := exec.Command(crystallize, args...)
			cmd.Dir = project
			var serverLog syncBuffer
			cmd.Stderr = &serverLog
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: tc.agent, Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var tool *mcp.Tool
			for _, tl := range res.Tools {
				if tl.Name == cand.Name {
					tool = tl
				}
			}
			if tool == nil {
				t.Fatalf("the installed server does not list %s: %v\nserver log:\n%s", cand.Name, res.Tools, serverLog.String())
			}

			// It calls the tool with a planting's values: the issue
			// and the comment the agent wrote there.
			pl := triage.Plantings[i]
			issue, comment := pl.Values[0]["arg1"], pl.Values[1]["body"]
			// Each parameter takes the value of the planting whose
			// examples it holds: the issue number or the comment.
			issues, comments := map[string]bool{}, map[string]bool{}
			for _, p := range triage.Plantings {
				issues[p.Values[0]["arg1"]], comments[p.Values[1]["body"]] = true, true
			}
			params := map[string]any{}
			for _, p := range cand.Parameters {
				if valuesFrom(p.Examples, issues) {
					params[p.Name] = issue
				} else if valuesFrom(p.Examples, comments) {
					params[p.Name] = comment
				} else {
					t.Fatalf("parameter %s has examples %v, neither issues nor comments of the plantings", p.Name, p.Examples)
				}
			}
			params = toolArguments(t, tool, params)
			call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: cand.Name, Arguments: params})
			if err != nil || call.IsError {
				t.Fatalf("calling %s(%v) = %+v, %v\nserver log:\n%s", cand.Name, params, call, err, serverLog.String())
			}
			if sc, _ := call.StructuredContent.(map[string]any); sc["status"] != "completed" || sc["tool_calls"] != float64(2) {
				t.Errorf("structuredContent = %v", call.StructuredContent)
			}
			got, err := os.ReadFile(filepath.Join(project, "issues", issue+".log"))
			if want := "label bug\ncomment " + comment + "\n"; err != nil || string(got) != want {
				t.Errorf("the call's effect on issue %s: %q, %v; want %q", issue, got, err, want)
			}

			// stats, in the project, counts the call and sets it against
			// what the agent spent on the same procedure.
			t.Chdir(project)
			var st struct {
				Workflows []struct {
					Workflow string `json:"workflow"`
					Runs     int    `json:"runs"`
					Steps    int    `json:"deterministic_steps"`
					Avoided  *struct {
						ModelCalls float64 `json:"model_calls"`
					} `json:"avoided"`
					PerCall *struct {
						Examples int `json:"examples"`
						Calls    int `json:"calls"`
						Source   struct {
							ModelCalls float64 `json:"model_calls"`
							Tokens     float64 `json:"tokens"`
						} `json:"source"`
						Served *struct {
							ModelCalls float64 `json:"model_calls"`
							Tokens     float64 `json:"tokens"`
						} `json:"served"`
					} `json:"per_call"`
				} `json:"workflows"`
			}
			statsOut := mustRun(t, "stats", "--json")
			if err := json.Unmarshal([]byte(statsOut), &st); err != nil {
				t.Fatalf("stats --json: %v\n%s", err, statsOut)
			}
			if len(st.Workflows) != 1 || st.Workflows[0].Runs != 1 || st.Workflows[0].Steps != 2 || st.Workflows[0].Avoided == nil || st.Workflows[0].Avoided.ModelCalls < 2 {
				t.Fatalf("stats after one call:\n%s", statsOut)
			}
			pc := st.Workflows[0].PerCall
			if pc == nil || pc.Calls != 1 || pc.Examples < 1 || pc.Source.ModelCalls < 2 || pc.Source.Tokens <= 0 || pc.Served == nil || pc.Served.ModelCalls != 0 || pc.Served.Tokens != 0 {
				t.Errorf("stats per_call after one call of a workflow that needs no model:\n%s", statsOut)
			}
		})
	}
}

// toolArguments converts each argument to the type the tool's
// inputSchema gives it (an issue number may be typed as an integer), and
// fails when the schema asks for an argument not given or has none of
// the given ones.
func toolArguments(t *testing.T, tool *mcp.Tool, args map[string]any) map[string]any {
	t.Helper()
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	raw, _ := json.Marshal(tool.InputSchema)
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for name, v := range args {
		p, ok := schema.Properties[name]
		if !ok {
			t.Fatalf("the tool's inputSchema has no parameter %s: %s", name, raw)
		}
		switch p.Type {
		case "integer", "number":
			n, err := strconv.Atoi(fmt.Sprint(v))
			if err != nil {
				t.Fatalf("parameter %s is a %s, the procedure's value is %q", name, p.Type, v)
			}
			out[name] = n
		default:
			out[name] = v
		}
	}
	for _, r := range schema.Required {
		if _, ok := out[r]; !ok {
			t.Fatalf("the tool requires %s, which the procedure does not give: %s", r, raw)
		}
	}
	return out
}
