package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/runconfig"
	"github.com/crystallize-dev/crystallize/internal/toolexec"
)

// TestFSProtected: the file built-ins refuse the files that decide what a
// tool runs or what a later run is granted, however the path is spelled,
// and the refusal names the path and the rule.
func TestFSProtected(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state")
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("crystallize.toml", "# config\n")
	write("tools/git-commit.sh", "#!/bin/sh\n")
	write("tools/lib.sh", "# sourced\n")
	write("bin/deploy", "#!/bin/sh\n")
	write("secrets.env", "TOKEN=x\n")
	write(".git/config", "[core]\n")
	os.Chmod(filepath.Join(root, "secrets.env"), 0o600)
	write("src/main.go", "package main\n")
	write("notes.txt", "n\n")
	symlinks := os.Symlink(filepath.Join(root, "tools"), filepath.Join(root, "alias")) == nil
	hardlinks := os.Link(filepath.Join(root, "tools/git-commit.sh"), filepath.Join(root, "src/hard.sh")) == nil

	cfg := &runconfig.Config{
		Dir:       root,
		File:      filepath.Join(root, "crystallize.toml"),
		Workspace: runconfig.Workspace{Roots: []string{"."}},
		Tools: map[string]runconfig.ToolBinding{
			"git.commit": {Command: []string{"./tools/git-commit.sh", "{message}"}},
			"deploy":     {Command: []string{"bin/deploy"}},
			"from.path":  {Command: []string{"{program}"}},
		},
		Secrets: runconfig.SecretsConfig{File: "secrets.env"},
		Grants:  runconfig.Grants{Capabilities: []string{"fs.read", "fs.write"}},
	}
	src := "# capabilities: fs.read, fs.write · secrets: none\ndef wf(ctx, tool, path):\n    if tool == \"fs.read\":\n        return ctx.tool(\"fs.read\", path = path)\n    return ctx.tool(\"fs.write\", path = path, content = \"pwned\")\n"
	w := workflow(t, src)
	tests := []struct {
		tool, path string
		rule       string // "" when allowed
		skip       bool
	}{
		{tool: "fs.write", path: "crystallize.toml", rule: toolexec.RuleConfig},
		{tool: "fs.write", path: filepath.Join(root, "crystallize.toml"), rule: toolexec.RuleConfig},
		{tool: "fs.write", path: "CRYSTALLIZE.TOML", rule: toolexec.RuleConfig},
		{tool: "fs.write", path: "sub/crystallize.toml", rule: toolexec.RuleConfig},
		{tool: "fs.write", path: "tools/git-commit.sh", rule: toolexec.RuleProgram},
		{tool: "fs.write", path: "./tools/../tools/git-commit.sh", rule: toolexec.RuleProgram},
		{tool: "fs.write", path: "tools/lib.sh", rule: toolexec.RuleProgram},
		{tool: "fs.write", path: "tools/new.sh", rule: toolexec.RuleProgram},
		{tool: "fs.write", path: "alias/git-commit.sh", rule: toolexec.RuleProgram, skip: !symlinks},
		{tool: "fs.write", path: "src/hard.sh", rule: toolexec.RuleProgram, skip: !hardlinks},
		{tool: "fs.write", path: "bin/deploy", rule: toolexec.RuleProgram},
		{tool: "fs.read", path: "secrets.env", rule: toolexec.RuleSecrets},
		{tool: "fs.write", path: "secrets.env", rule: toolexec.RuleSecrets},
		{tool: "fs.write", path: "state/runs/x/journal.json", rule: toolexec.RuleState},
		{tool: "fs.write", path: ".crystallize/state.db", rule: toolexec.RuleState},
		{tool: "fs.write", path: "sub/.Crystallize/x", rule: toolexec.RuleState},
		{tool: "fs.write", path: ".git/hooks/pre-commit", rule: toolexec.RuleGit},
		{tool: "fs.read", path: ".git/config", rule: toolexec.RuleGit},
		{tool: "fs.write", path: "vendor/.GIT/config", rule: toolexec.RuleGit},
		{tool: "fs.write", path: "src/main.go"},
		{tool: "fs.write", path: "notes.txt"},
		{tool: "fs.read", path: "notes.txt"},
		{tool: "fs.write", path: "gitignore/.gitkeep"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.path, func(t *testing.T) {
			if tt.skip {
				t.Skip("no symlinks or hard links here")
			}
			o := opts(t, cfg)
			o.StateDir = state
			res, err := Run(context.Background(), w, Params{"tool": tt.tool, "path": tt.path}, o)
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("%s(%q) = %v, want success", tt.tool, tt.path, err)
				}
				return
			}
			var pe *toolexec.ProtectedError
			if !errors.As(err, &pe) || !errors.Is(err, toolexec.ErrProtected) || pe.Rule != tt.rule || pe.Path != tt.path {
				t.Fatalf("%s(%q) = %v, want a ProtectedError of rule %s naming the path", tt.tool, tt.path, err, tt.rule)
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.rule) {
				t.Errorf("error %q does not name the path and the rule", err)
			}
			if res == nil || len(res.Refusals) != 1 || res.Refusals[0].Tool != tt.tool {
				t.Errorf("refusals = %+v, want the call recorded as refused", res)
			}
		})
	}
	for _, f := range []string{"crystallize.toml", "tools/git-commit.sh", "tools/lib.sh", "bin/deploy", "secrets.env", ".git/config"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); strings.Contains(string(b), "pwned") {
			t.Errorf("%s was written", f)
		}
	}
	for _, f := range []string{"tools/new.sh", ".git/hooks/pre-commit", "sub/crystallize.toml"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}
}

// TestFSProtectedRootProgram: a program at the top of a workspace root
// protects itself, not the whole root.
func TestFSProtectedRootProgram(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	cfg := &runconfig.Config{Dir: root, Tools: map[string]runconfig.ToolBinding{"x": {Command: []string{"./run.sh"}}}, Grants: runconfig.Grants{Capabilities: []string{"fs.write"}}}
	w := workflow(t, "# capabilities: fs.write · secrets: none\ndef wf(ctx, path):\n    return ctx.tool(\"fs.write\", path = path, content = \"x\")\n")
	if _, err := Run(context.Background(), w, Params{"path": "run.sh"}, opts(t, cfg)); !errors.Is(err, toolexec.ErrProtected) {
		t.Errorf("fs.write(run.sh) = %v, want ErrProtected", err)
	}
	if _, err := Run(context.Background(), w, Params{"path": "other.txt"}, opts(t, cfg)); err != nil {
		t.Errorf("fs.write(other.txt) = %v, want success", err)
	}
}
