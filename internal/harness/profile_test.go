package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", os.Getenv("CRYSTALLIZE_UPDATE") != "", "rewrite golden files (or set CRYSTALLIZE_UPDATE=1)")

// gitEnv pins identity, dates and configuration so that the repositories
// the tests build have the same commit ids on every machine.
func gitEnv(t *testing.T) {
	t.Helper()
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
		"GIT_CONFIG_GLOBAL": os.DevNull, "GIT_CONFIG_NOSYSTEM": "1",
	} {
		t.Setenv(k, v)
	}
}

func run(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out)
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repo is a small repository: tracked files committed, untracked files
// left in the work tree.
type repo struct {
	name      string
	tracked   map[string]string
	untracked map[string]string
}

var repos = []repo{
	{
		name: "go-service",
		tracked: map[string]string{
			"go.mod":                               "module example.com/svc\n\ngo 1.22\n",
			"cmd/svc/main.go":                      "package main\n\nimport \"net/http\"\n\nfunc main() {\n\thttp.HandleFunc(\"/\", nil)\n\thttp.ListenAndServe(\":8080\", nil)\n}\n",
			"internal/users/users.go":              "package users\n\n// Name returns a user's name.\nfunc Name(id int) string { return \"user\" }\n",
			"internal/users/users_test.go":         "package users\n\nimport \"testing\"\n\nfunc TestName(t *testing.T) {\n\tif Name(1) != \"user\" {\n\t\tt.Fatal(\"name\")\n\t}\n}\n",
			"internal/users/auth.go":               "package users\n\n// Check checks a password.\nfunc Check(p string) bool { return p != \"\" }\n",
			"db/migrations/001_init.sql":           "CREATE TABLE users (id integer primary key, name text);\n",
			"db/migrations/002_drop_legacy.sql":    "DROP TABLE legacy_users;\n",
			"compose.yaml":                         "services:\n  db:\n    image: postgres:16\n    ports:\n      - \"5432:5432\"\n",
			".github/workflows/ci.yml":             "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: go test ./...\n",
			".golangci.yml":                        "linters:\n  enable: [govet]\n",
			"README.md":                            "# svc\n\nA user service.\n",
			"docs/ARCHITECTURE.md":                 "# Architecture\n",
			"internal/users/bench_test.go":         "package users\n\nimport \"testing\"\n\nfunc BenchmarkName(b *testing.B) {\n\tfor i := 0; i < b.N; i++ {\n\t\tName(i)\n\t}\n}\n",
			"internal/users/service_windows.go":    "package users\n",
			"scripts/install-service.ps1":          "Write-Output 'install'\n",
			"internal/users/testdata/example.json": "{}\n",
			"Dockerfile":                           "FROM golang:1.22\nEXPOSE 8080\nENTRYPOINT [\"/svc\"]\n",
			"flake.nix":                            "{ outputs = { self }: { }; }\n",
			".devcontainer/devcontainer.json":      "{\"image\": \"golang\"}\n",
		},
		untracked: map[string]string{"notes/scratch.md": "# scratch\nideas for the next migration\n", ".env.local": "DATABASE_URL=postgres://localhost\n"},
	},
	{
		name: "typescript-cli",
		tracked: map[string]string{
			"package.json":     `{"name":"tcli","version":"1.0.0","bin":{"tcli":"dist/cli.js"},"scripts":{"build":"tsc","test":"node --test dist","lint":"eslint ."},"devDependencies":{"typescript":"^5.4.0","eslint":"^9.0.0"},"dependencies":{"commander":"^12.0.0"}}` + "\n",
			"tsconfig.json":    `{"compilerOptions":{"outDir":"dist","strict":true}}` + "\n",
			"src/cli.ts":       "export function main(argv: string[]): number { return argv.length }\n",
			"src/cli.test.ts":  "import { main } from './cli'\n",
			"eslint.config.js": "export default []\n",
			"README.md":        "# tcli\n",
		},
		untracked: map[string]string{"TODO.md": "- publish\n"},
	},
	{
		name: "agent",
		tracked: map[string]string{
			".mcp.json":           `{"mcpServers":{"github":{"command":"gh-mcp"},"files":{"command":"fs-mcp"}}}` + "\n",
			"prompts/system.md":   "You are a careful release agent.\n",
			"AGENTS.md":           "# Agents\nRun tests before opening a pull request.\n",
			"pyproject.toml":      "[project]\nname = \"agent\"\ndependencies = [\"anthropic>=0.30\", \"mcp>=1.0\", \"chromadb>=0.5\"]\n",
			"agent/tools.py":      "def run(tool):\n    return tool\n",
			"agent/retriever.py":  "def search(q):\n    return []\n",
			"tests/test_tools.py": "def test_run():\n    assert True\n",
			"src/auth/token.py":   "TOKEN_TTL = 60\n",
		},
		untracked: map[string]string{"prompts/draft.prompt.md": "Try a shorter system prompt.\n"},
	},
}

// makeRepo builds r under a new temporary directory and returns it.
func makeRepo(t *testing.T, r repo) string {
	t.Helper()
	gitEnv(t)
	dir := filepath.Join(t.TempDir(), r.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, r.tracked)
	run(t, dir, "git", "init", "-q", "-b", "main")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-q", "-m", "initial")
	writeTree(t, dir, r.untracked)
	return dir
}

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestProfileAndPlanGolden(t *testing.T) {
	for _, r := range repos {
		t.Run(r.name, func(t *testing.T) {
			dir := makeRepo(t, r)
			p, err := Profile(context.Background(), dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			golden(t, r.name+".profile.json", p)
			golden(t, r.name+".plan.json", MakePlan(dir, p, nil, nil))

			// The same tree profiles to the same id, and so does a copy of
			// it elsewhere with another history.
			again, err := Profile(context.Background(), dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if again.ProfileID != p.ProfileID {
				t.Errorf("profile id changed between runs: %s, %s", p.ProfileID, again.ProfileID)
			}
			run(t, dir, "git", "commit", "-q", "--allow-empty", "-m", "empty")
			again, err = Profile(context.Background(), dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if again.ProfileID != p.ProfileID {
				t.Errorf("profile id depends on history: %s, %s", p.ProfileID, again.ProfileID)
			}
			writeTree(t, dir, map[string]string{"README.md": "changed\n"})
			again, err = Profile(context.Background(), dir, ProfileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if again.ProfileID == p.ProfileID {
				t.Errorf("profile id did not change with the tree: %s", p.ProfileID)
			}
		})
	}
}

func TestUntrackedFilesAreObservedOnly(t *testing.T) {
	dir := makeRepo(t, repos[0])
	p, err := Profile(context.Background(), dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, o := range p.Git.ChangedFiles {
		if o.GitStatus != StatusUntracked || o.Ownership != OwnObserved {
			t.Errorf("observation %+v, want untracked and observed_only", o)
		}
		seen = append(seen, o.Path)
	}
	if diff := cmp.Diff([]string{".env.local", "notes/scratch.md"}, seen); diff != "" {
		t.Errorf("changed files (-want +got):\n%s", diff)
	}
	// Untracked files inform risk: .env.local is a security signal.
	found := false
	for _, h := range p.RiskHints {
		if h.Family == FamilySecurity && h.Signal == "env-file" {
			found = true
		}
	}
	if !found {
		t.Error("the untracked .env.local raised no security hint")
	}
}

func TestWriteRefusesFilesItDoesNotOwn(t *testing.T) {
	dir := makeRepo(t, repos[0])
	// An untracked file at a path the kit writes is the user's.
	writeTree(t, dir, map[string]string{"gates/go-test.sh": "echo mine\n"})
	p, err := Profile(context.Background(), dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Write(dir, "go-service", p, true)
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "gates/go-test.sh") {
		t.Fatalf("Write over an untracked file: %v, want ErrNotOwned naming gates/go-test.sh", err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "gates/go-test.sh")); string(data) != "echo mine\n" {
		t.Errorf("the untracked gate was rewritten: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestPath)); !os.IsNotExist(err) {
		t.Errorf("a refused write left a manifest: %v", err)
	}
	if _, err := Write(dir, "no-such-kit", p, false); !errors.Is(err, ErrUnknownKit) {
		t.Errorf("Write of an unknown kit: %v, want ErrUnknownKit", err)
	}
}

// snapshotUntracked records the bytes of the untracked files and git's
// view of the index.
func snapshotUntracked(t *testing.T, dir string, files map[string]string) map[string]string {
	t.Helper()
	s := map[string]string{}
	for name := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatalf("untracked file %s: %v", name, err)
		}
		s[name] = string(data)
	}
	s["git ls-files"] = run(t, dir, "git", "ls-files")
	s["git diff --cached"] = run(t, dir, "git", "diff", "--cached", "--name-only")
	return s
}

// checkUntracked fails when an untracked file changed or was staged.
func checkUntracked(t *testing.T, dir, after string, before map[string]string, files map[string]string) {
	t.Helper()
	now := snapshotUntracked(t, dir, files)
	if diff := cmp.Diff(before, now); diff != "" {
		t.Errorf("after %s, untracked files or the index changed (-before +after):\n%s", after, diff)
	}
	status := run(t, dir, "git", "status", "--porcelain", "--untracked-files=all")
	for name := range files {
		if !strings.Contains(status, "?? "+name) {
			t.Errorf("after %s, %s is no longer untracked:\n%s", after, name, status)
		}
	}
}

func TestNoCommandTouchesUntrackedFiles(t *testing.T) {
	r := repos[0]
	dir := makeRepo(t, r)
	before := snapshotUntracked(t, dir, r.untracked)
	ctx := context.Background()
	p, err := Profile(ctx, dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkUntracked(t, dir, "profile", before, r.untracked)
	MakePlan(dir, p, nil, nil)
	checkUntracked(t, dir, "plan", before, r.untracked)
	if _, err := Write(dir, "go-service", p, false); err != nil {
		t.Fatal(err)
	}
	checkUntracked(t, dir, "write", before, r.untracked)
	res, err := Write(dir, "database", p, true)
	if err != nil {
		t.Fatal(err)
	}
	checkUntracked(t, dir, "write --apply", before, r.untracked)
	rep, err := Run(ctx, dir, res.Manifest, "h", p.ProfileID, RunOptions{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	checkUntracked(t, dir, "run", before, r.untracked)
	Drift(dir, p, p, res.Manifest)
	checkUntracked(t, dir, "drift", before, r.untracked)
	// The database kit's guard catches the unreviewed DROP TABLE.
	if rep.Passed {
		t.Errorf("run passed although 002_drop_legacy.sql drops a table without review: %+v", rep.Gates)
	}
	if bytes.Contains([]byte(before["git ls-files"]), []byte("notes/")) {
		t.Error("test setup: notes/ is tracked")
	}
}

// TestPlanAfterKit checks the planner against an existing manifest: the
// written kit's family is covered, a family that appears later asks for
// the kit to be rewritten, and a broken manifest entry is stale, weak or
// overbroad.
func TestPlanAfterKit(t *testing.T) {
	r := repos[0]
	dir := makeRepo(t, repo{name: "svc", tracked: map[string]string{"go.mod": "module x\n", "db/migrations/001.sql": "CREATE TABLE t (id int);\n"}})
	p, err := Profile(context.Background(), dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir, "go-service", p, true)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	// Windows code arrives after the kit was written.
	writeTree(t, dir, map[string]string{"svc_windows.go": r.tracked["internal/users/service_windows.go"]})
	p, err = Profile(context.Background(), dir, ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.Commands = append(m.Commands, Command{ID: "slow", Command: "sh gates/slow.sh", Phase: "nightly", TimeoutSeconds: 3600})
	m.RiskFamilies = append(m.RiskFamilies, FamilyWeb)
	pl := MakePlan(dir, p, m, map[string]bool{"go-test": true})
	find := func(list []Finding, subject string) string {
		for _, f := range list {
			if f.Subject == subject {
				return f.Reason
			}
		}
		return ""
	}
	checks := []struct{ got, want string }{
		{find(pl.Missing, FamilyWindows), "rewrite kit go-service to add its gates for it"},
		{find(pl.Stale, "command slow"), "runs gates/slow.sh, which does not exist"},
		{find(pl.Overbroad, "command slow"), "timeout 3600s is over 1800s"},
		{find(pl.Overbroad, "risk family web"), "the profile shows no signal for it"},
		{find(pl.Weak, "evidence go-vet"), "go vet is clean"},
		{find(pl.Weak, "manifest"), "no CI configuration runs the harness"},
	}
	for _, c := range checks {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("plan finding %q lacks %q\nplan: %+v", c.got, c.want, pl)
		}
	}
	if find(pl.Weak, "evidence go-test") != "" {
		t.Error("go-test has passed, yet its evidence is reported missing")
	}
	for _, pr := range pl.Proposed {
		if pr.Kit == "go-service" {
			t.Error("an applied kit is proposed again")
		}
	}
}
