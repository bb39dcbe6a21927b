package normalize

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// expandTemplate fills an argv template as the runtime does: {name} is the
// parameter's text, an element {name...} is the list parameter's
// elements, "{{" and "}}" are literal braces.
func expandTemplate(t testing.TB, tmpl []any, params map[string]any) []string {
	t.Helper()
	out := make([]string, 0, len(tmpl))
	for i, e := range tmpl {
		s, ok := e.(string)
		if !ok {
			t.Fatalf("argv template element %d is %T, want string", i, e)
		}
		if name, ok := strings.CutSuffix(strings.TrimPrefix(s, "{"), "...}"); ok && strings.HasPrefix(s, "{") {
			list, ok := params[name].([]any)
			if !ok || len(list) == 0 {
				t.Fatalf("template %q names %s, which is not a non-empty list parameter of %v", s, name, params)
			}
			for _, v := range list {
				out = append(out, v.(string))
			}
			continue
		}
		var b strings.Builder
		for j := 0; j < len(s); {
			switch {
			case strings.HasPrefix(s[j:], "{{"), strings.HasPrefix(s[j:], "}}"):
				b.WriteByte(s[j])
				j += 2
			case s[j] == '{':
				end := strings.IndexByte(s[j:], '}')
				if end < 0 {
					t.Fatalf("template %q: unclosed brace", s)
				}
				key := s[j+1 : j+end]
				v, ok := params[key]
				if !ok {
					t.Fatalf("template %q names {%s}, which is not a parameter of %v", s, key, params)
				}
				b.WriteString(fmt.Sprint(v))
				j += end + 1
			case s[j] == '}':
				t.Fatalf("template %q: lone closing brace", s)
			default:
				b.WriteByte(s[j])
				j++
			}
		}
		out = append(out, b.String())
	}
	return out
}

func shell(cmd any) Call {
	return Call{ID: "call_1", Tool: "Bash", Args: map[string]any{"command": cmd}}
}

// got is the part of an action a table test states.
type got struct {
	ID     string
	Kind   trace.Kind
	Name   string
	Params map[string]any
	Argv   []any
	Extra  map[string]any // the metadata keys the case names
}

func summarize(acts []trace.Action, extraKeys []string) []got {
	var out []got
	for _, a := range acts {
		g := got{ID: a.ID, Kind: a.Kind, Name: a.Name, Params: a.Parameters}
		if len(g.Params) == 0 {
			g.Params = nil
		}
		g.Argv, _ = a.Metadata["argv"].([]any)
		for _, k := range extraKeys {
			if v, ok := a.Metadata[k]; ok {
				if g.Extra == nil {
					g.Extra = map[string]any{}
				}
				g.Extra[k] = v
			}
		}
		out = append(out, g)
	}
	return out
}

func argv(ws ...string) []any {
	out := make([]any, len(ws))
	for i, w := range ws {
		out[i] = w
	}
	return out
}

type P = map[string]any

// L is a list parameter's value.
func L(ws ...string) []any { return argv(ws...) }

func TestShellActions(t *testing.T) {
	const tc, obs = trace.KindToolCall, trace.KindObservation
	tests := []struct {
		name  string
		cmd   any
		extra []string
		want  []got
	}{{
		name:  "chained git commit with a quoted message after cd",
		cmd:   `cd /repo && git add go.mod go.sum && git commit -m "Bump x/mod to v0.20.0 (fixes #12)"`,
		extra: []string{"cwd", "compound_index"},
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git add", Params: P{"paths": L("go.mod", "go.sum")},
				Argv: argv("git", "add", "{paths...}"), Extra: P{"cwd": "/repo", "compound_index": 1}},
			{ID: "call_1.2", Kind: tc, Name: "git commit", Params: P{"message": "Bump x/mod to v0.20.0 (fixes #12)"},
				Argv: argv("git", "commit", "-m", "{message}"), Extra: P{"cwd": "/repo", "compound_index": 2}},
		},
	}, {
		name: "go get splits module and version, go mod tidy is one head",
		cmd:  "go get golang.org/x/mod@v0.20.0\ngo mod tidy",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "go get", Params: P{"module": "golang.org/x/mod", "version": "v0.20.0"},
				Argv: argv("go", "get", "{module}@{version}")},
			{ID: "call_1.2", Kind: tc, Name: "go mod tidy", Argv: argv("go", "mod", "tidy")},
		},
	}, {
		// A password apart from its flag is no recognisable credential:
		// its parameter is named as one, so that the redactor removes it
		// and the miner reads it as a secret.
		name: "credentials on a command line are parameters named as credentials",
		cmd:  "mysql -pSup3rS3cret9 -e 'select 1' && curl -u admin:Hx9pLq2Vw7 https://x.example.com && curl --user=admin:Hx9pLq2Vw7 https://x.example.com",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "mysql", Params: P{"p_password": "Sup3rS3cret9", "e": true, "args": L("select 1")},
				Argv: argv("mysql", "-p{p_password}", "-e", "{args...}")},
			{ID: "call_1.2", Kind: tc, Name: "curl", Params: P{"u_password": "admin:Hx9pLq2Vw7", "args": L("https://x.example.com")},
				Argv: argv("curl", "-u", "{u_password}", "{args...}")},
			{ID: "call_1.3", Kind: tc, Name: "curl", Params: P{"user_password": "admin:Hx9pLq2Vw7", "args": L("https://x.example.com")},
				Argv: argv("curl", "--user={user_password}", "{args...}")},
		},
	}, {
		// A message of several lines is text, whatever it holds: a
		// commit message that ends with a session link the redactor
		// takes for a credential keeps its parameter's name, so that its
		// commits are one step with those of messages without the link.
		// The link itself is redacted later, where it stands.
		name: "a message of several lines is not a credential",
		cmd:  "git commit -q -m \"Fix the parser\n\nClaude-Session: https://claude.example/code/session_01Hq7ZkR3mW9xPtL2vN8cB4d\"",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git commit", Params: P{"q": true, "message": "Fix the parser\n\nClaude-Session: https://claude.example/code/session_01Hq7ZkR3mW9xPtL2vN8cB4d"},
				Argv: argv("git", "commit", "-q", "-m", "{message}")},
		},
	}, {
		// A flag named as a credential takes the next word even when
		// the table does not know the program: read as a boolean, the
		// token would be a literal operand.
		name: "a credential flag of an unknown program takes its value",
		cmd:  "vault login --token vtQ8zR2mK5pL1wX4 && tool --password s3cretPw9 --force x",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "vault", Params: P{"args": L("login"), "token": "vtQ8zR2mK5pL1wX4"},
				Argv: argv("vault", "{args...}", "--token", "{token}")},
			{ID: "call_1.2", Kind: tc, Name: "tool", Params: P{"password": "s3cretPw9", "force": true, "args": L("x")},
				Argv: argv("tool", "--password", "{password}", "--force", "{args...}")},
		},
	}, {
		name:  "pipe into filters keeps one action",
		cmd:   `go test ./... 2>&1 | grep -v '^ok' | head -n 40`,
		extra: []string{"filters", "redirects"},
		want: []got{
			{ID: "call_1", Kind: tc, Name: "go test", Params: P{"args": L("./...")}, Argv: argv("go", "test", "{args...}"),
				Extra: P{"filters": argv("grep -v '^ok'", "head -n 40"), "redirects": argv("2>&1")}},
		},
	}, {
		name:  "a pipeline of two real commands is two actions",
		cmd:   `git diff --name-only | xargs gofmt -l`,
		extra: []string{"wrapper"},
		want: []got{
			{ID: "call_1", Kind: obs, Name: "git diff", Params: P{"name_only": true}, Argv: argv("git", "diff", "--name-only")},
			{ID: "call_1.2", Kind: tc, Name: "gofmt", Params: P{"l": true}, Argv: argv("xargs", "gofmt", "-l"), Extra: P{"wrapper": "xargs"}},
		},
	}, {
		name:  "env prefix: names kept, a credential's value dropped",
		cmd:   `GH_TOKEN=ghp_abc GOFLAGS=-mod=mod gh pr create --title "Release v1.4.0" --body 'See CHANGELOG' --label=release`,
		extra: []string{"env", "command"},
		want: []got{{
			ID: "call_1", Kind: tc, Name: "gh pr create",
			Params: P{"title": "Release v1.4.0", "body": "See CHANGELOG", "label": "release"},
			Argv:   argv("gh", "pr", "create", "--title", "{title}", "--body", "{body}", "--label={label}"),
			Extra: P{"env": P{"GH_TOKEN": nil, "GOFLAGS": "-mod=mod"},
				"command": `GH_TOKEN=[redacted] GOFLAGS=-mod=mod gh pr create --title "Release v1.4.0" --body 'See CHANGELOG' --label=release`},
		}},
	}, {
		// The same assignments through env: the credential is in
		// neither the template nor the command text.
		name:  "env wrapper: names kept, a credential's value dropped",
		cmd:   `env GOFLAGS=-mod=mod GH_TOKEN="ghp_abc" gh pr create --title "Release v1.4.0"`,
		extra: []string{"env", "command"},
		want: []got{{
			ID: "call_1", Kind: tc, Name: "gh pr create",
			Params: P{"title": "Release v1.4.0"},
			Argv:   argv("env", "GOFLAGS=-mod=mod", "gh", "pr", "create", "--title", "{title}"),
			Extra: P{"env": P{"GH_TOKEN": nil, "GOFLAGS": "-mod=mod"},
				"command": `env GOFLAGS=-mod=mod GH_TOKEN=[redacted] gh pr create --title "Release v1.4.0"`},
		}},
	}, {
		// VAR= sets the empty string, a value as literal as any other;
		// only a value the shell computes is unknown (nil).
		name:  "an empty assignment is the empty string",
		cmd:   `GIT_PAGER= LANG="$L" git push`,
		extra: []string{"env"},
		want: []got{{ID: "call_1", Kind: tc, Name: "git push", Argv: argv("git", "push"),
			Extra: P{"env": P{"GIT_PAGER": "", "LANG": nil}}}},
	}, {
		name: "git checkout -b and git's own -C",
		cmd:  `git -C services/api checkout -b release/1.4`,
		want: []got{{ID: "call_1", Kind: tc, Name: "git checkout", Params: P{"C": "services/api", "new_branch": "release/1.4"},
			Argv: argv("git", "-C", "{C}", "checkout", "-b", "{new_branch}")}},
	}, {
		// Creating a branch and switching to one are different steps:
		// git's documentation names -b's value <new-branch>, and the
		// two commands have different argv templates, which one step
		// could not replay.
		name: "git checkout of an existing branch",
		cmd:  `git checkout main && git switch -c fix/login`,
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git checkout", Params: P{"branch": "main"}, Argv: argv("git", "checkout", "{branch}")},
			{ID: "call_1.2", Kind: tc, Name: "git switch", Params: P{"new_branch": "fix/login"}, Argv: argv("git", "switch", "-c", "{new_branch}")},
		},
	}, {
		name: "git tag and push name their operands",
		cmd:  `git tag -a v1.4.0 -m "v1.4.0" && git push origin v1.4.0`,
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git tag", Params: P{"annotate": true, "tag": "v1.4.0", "message": "v1.4.0"},
				Argv: argv("git", "tag", "-a", "{tag}", "-m", "{message}")},
			{ID: "call_1.2", Kind: tc, Name: "git push", Params: P{"remote": "origin", "branch": "v1.4.0"},
				Argv: argv("git", "push", "{remote}", "{branch}")},
		},
	}, {
		name: "short flag cluster with a value: git commit -am",
		cmd:  `git commit -am 'fix: nil map'`,
		want: []got{{ID: "call_1", Kind: tc, Name: "git commit", Params: P{"all": true, "message": "fix: nil map"},
			Argv: argv("git", "commit", "-am", "{message}")}},
	}, {
		name:  "bash -lc list from Codex with cd",
		cmd:   []any{"bash", "-lc", "cd web && npm ci && npm run build"},
		extra: []string{"cwd"},
		want: []got{
			{ID: "call_1", Kind: tc, Name: "npm ci", Argv: argv("npm", "ci"), Extra: P{"cwd": "web"}},
			{ID: "call_1.2", Kind: tc, Name: "npm run build", Argv: argv("npm", "run", "build"), Extra: P{"cwd": "web"}},
		},
	}, {
		name: "a plain argv list is one command",
		cmd:  []any{"gh", "issue", "view", "42", "--json", "title,body"},
		want: []got{{ID: "call_1", Kind: obs, Name: "gh issue view", Params: P{"number": "42", "json": "title,body"},
			Argv: argv("gh", "issue", "view", "{number}", "--json", "{json}")}},
	}, {
		name: "sh -c string wrapper",
		cmd:  `sh -c 'docker compose up -d db'`,
		want: []got{{ID: "call_1", Kind: tc, Name: "docker compose up", Params: P{"d": true, "args": L("db")},
			Argv: argv("docker", "compose", "up", "-d", "{args...}")}},
	}, {
		name: "sed -n reads, sed -i writes",
		cmd:  `sed -n '1,40p' main.go; sed -i 's/v1/v2/' main.go`,
		want: []got{
			{ID: "call_1", Kind: obs, Name: "sed", Params: P{"n": true, "args": L("1,40p", "main.go")},
				Argv: argv("sed", "-n", "{args...}")},
			{ID: "call_1.2", Kind: tc, Name: "sed", Params: P{"i": true, "args": L("s/v1/v2/", "main.go")},
				Argv: argv("sed", "-i", "{args...}")},
		},
	}, {
		name: "|| keeps both sides",
		cmd:  `make lint || golangci-lint run ./...`,
		want: []got{
			{ID: "call_1", Kind: tc, Name: "make", Params: P{"targets": L("lint")}, Argv: argv("make", "{targets...}")},
			{ID: "call_1.2", Kind: tc, Name: "golangci-lint", Params: P{"args": L("run", "./...")},
				Argv: argv("golangci-lint", "{args...}")},
		},
	}, {
		name:  "timeout wrapper keeps its words in the template",
		cmd:   `timeout 120 go test -run 'TestLoad$' -count=1 ./internal/source/`,
		extra: []string{"wrapper"},
		want: []got{{ID: "call_1", Kind: tc, Name: "go test",
			Params: P{"run": "TestLoad$", "count": "1", "args": L("./internal/source/")},
			Argv:   argv("timeout", "120", "go", "test", "-run", "{run}", "-count={count}", "{args...}"),
			Extra:  P{"wrapper": "timeout"}}},
	}, {
		name: "python -m is part of the head",
		cmd:  `python3 -m pytest -q tests/test_api.py`,
		want: []got{{ID: "call_1", Kind: tc, Name: "python3 -m pytest", Params: P{"q": true, "args": L("tests/test_api.py")},
			Argv: argv("python3", "-m", "pytest", "-q", "{args...}")}},
	}, {
		name: "npm scoped package with a version",
		cmd:  `npm install --save-dev @types/node@20.11.0`,
		want: []got{{ID: "call_1", Kind: tc, Name: "npm install",
			Params: P{"save_dev": true, "package": "@types/node", "version": "20.11.0"},
			Argv:   argv("npm", "install", "--save-dev", "{package}@{version}")}},
	}, {
		name: "-- ends options",
		cmd:  `git checkout -- go.mod`,
		want: []got{{ID: "call_1", Kind: tc, Name: "git checkout", Params: P{"branch": "go.mod"},
			Argv: argv("git", "checkout", "--", "{branch}")}},
	}, {
		// A file named like a flag stays an operand after --, which is
		// how a user deletes it; read as flags it would be an rm of other
		// options and no file.
		name: "every word after -- is an operand",
		cmd:  `rm -f -- -draft.txt notes.txt`,
		want: []got{{ID: "call_1", Kind: tc, Name: "rm", Params: P{"f": true, "paths": L("-draft.txt", "notes.txt")},
			Argv: argv("rm", "-f", "--", "{paths...}")}},
	}, {
		name: "braces in a value are escaped in the template",
		cmd:  `git log -n 5 --format='%h {%s}'`,
		want: []got{{ID: "call_1", Kind: obs, Name: "git log", Params: P{"n": "5", "format": "%h {%s}"},
			Argv: argv("git", "log", "-n", "{n}", "--format={format}")}},
	}, {
		name: "find -exec braces stay literal",
		cmd:  `find . -name '*.orig' -exec rm {} \;`,
		want: []got{{ID: "call_1", Kind: tc, Name: "find", Params: P{"name": "*.orig", "exec": true, "args": L("."), "args_2": L("rm", "{}", ";")},
			Argv: argv("find", "{args...}", "-name", "{name}", "-exec", "{args_2...}")}},
	}, {
		name:  "output redirection makes a write",
		cmd:   `echo "v1.4.0" > VERSION`,
		extra: []string{"redirects"},
		want: []got{{ID: "call_1", Kind: tc, Name: "echo", Params: P{"args": L("v1.4.0")},
			Argv: argv("echo", "{args...}"), Extra: P{"redirects": argv(">VERSION")}}},
	}, {
		// The file the command writes is known only when it runs: read
		// as plain, the write would vanish from the action.
		name:  "a redirection to an expansion is unparsed",
		cmd:   `go test ./... > "$LOG"`,
		extra: []string{"unparsed", "command"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "go test", Extra: P{"unparsed": true, "command": `go test ./... > "$LOG"`}}},
	}, {
		name:  "command substitution is unparsed",
		cmd:   `git tag "v$(cat VERSION)"`,
		extra: []string{"unparsed", "command"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "git tag", Extra: P{"unparsed": true, "command": `git tag "v$(cat VERSION)"`}}},
	}, {
		name:  "an expansion in an operand leaves a read-only head a step",
		cmd:   `git branch "$NAME"`,
		extra: []string{"unparsed"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "git branch", Extra: P{"unparsed": true}}},
	}, {
		name: "a commit message from a quoted heredoc is a literal",
		cmd:  "git add -A && git commit -m \"$(cat <<'EOF'\nFix nil map in Load\n\nThe $HOME case.\nEOF\n)\"",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git add", Params: P{"paths": L("-A")}, Argv: argv("git", "add", "{paths...}")},
			{ID: "call_1.2", Kind: tc, Name: "git commit", Params: P{"message": "Fix nil map in Load\n\nThe $HOME case."},
				Argv: argv("git", "commit", "-m", "{message}")},
		},
	}, {
		name:  "a heredoc with an unquoted delimiter and an expansion is not",
		cmd:   "gh pr create --title T --body \"$(cat <<EOF\nBy $USER\nEOF\n)\"",
		extra: []string{"unparsed"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "gh pr create", Extra: P{"unparsed": true}}},
	}, {
		// Agents give a commit message as -m "$(cat <<'EOF' …)" or as
		// -F - with the heredoc on standard input: both are one step,
		// with the template of the first, which needs no heredoc.
		name: "a commit message read from a heredoc on standard input is the message",
		cmd:  "git commit -q -F - <<'EOF' && git log --oneline -1\nFix nil map in Load\n\nThe $HOME case.\nEOF",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git commit", Params: P{"q": true, "message": "Fix nil map in Load\n\nThe $HOME case."},
				Argv: argv("git", "commit", "-q", "-m", "{message}")},
			{ID: "call_1.2", Kind: obs, Name: "git log", Params: P{"oneline": true, "n": "1"}, Argv: argv("git", "log", "--oneline", "-{n}")},
		},
	}, {
		name: "a pull request's body read from a heredoc is the body",
		cmd:  "gh pr create --title 'Fix nil map' --body-file=- <<'EOF'\n## Summary\n- fixes Load\nEOF",
		want: []got{
			{ID: "call_1", Kind: tc, Name: "gh pr create", Params: P{"title": "Fix nil map", "body": "## Summary\n- fixes Load"},
				Argv: argv("gh", "pr", "create", "--title", "{title}", "--body", "{body}")},
		},
	}, {
		// The heredoc must be what the flag reads, and read as written.
		name:  "a heredoc the command does not read as a flag's text is input the template cannot carry",
		cmd:   "git commit -F notes.txt <<'EOF'\nx\nEOF\ngit commit -F - <<EOF\nBy $USER\nEOF\ngit commit -F - -F - <<'EOF'\nx\nEOF\npython3 - <<'EOF'\nprint(1)\nEOF",
		extra: []string{"unparsed"},
		want: []got{
			{ID: "call_1", Kind: tc, Name: "git commit", Extra: P{"unparsed": true}},
			{ID: "call_1.2", Kind: tc, Name: "git commit", Extra: P{"unparsed": true}},
			{ID: "call_1.3", Kind: tc, Name: "git commit", Extra: P{"unparsed": true}},
			{ID: "call_1.4", Kind: tc, Name: "python3", Extra: P{"unparsed": true}},
		},
	}, {
		name:  "heredoc into a file is unparsed and writes",
		cmd:   "cat > notes.md <<'EOF'\n# Notes\nEOF",
		extra: []string{"unparsed", "command"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "cat", Extra: P{"unparsed": true, "command": "cat > notes.md <<'EOF'\n# Notes\nEOF"}}},
	}, {
		name:  "subshell and loop are unparsed shell",
		cmd:   `for d in a b; do (cd $d && make); done`,
		extra: []string{"unparsed"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "shell", Extra: P{"unparsed": true}}},
	}, {
		name:  "a command that does not parse",
		cmd:   `git commit -m "unterminated`,
		extra: []string{"unparsed", "command"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "git", Extra: P{"unparsed": true, "command": `git commit -m "unterminated`}}},
	}, {
		name:  "a keyword that does not parse is shell",
		cmd:   `if [ -f x ]; then`,
		extra: []string{"unparsed"},
		want:  []got{{ID: "call_1", Kind: tc, Name: "shell", Extra: P{"unparsed": true}}},
	}, {
		name:  "only cd is one observation",
		cmd:   `cd internal/mine`,
		extra: []string{"cwd"},
		want:  []got{{ID: "call_1", Kind: obs, Name: "cd", Params: P{"dir": "internal/mine"}, Argv: argv("cd", "{dir}")}},
	}, {
		name:  "export carries env to the parts after it",
		cmd:   `export CGO_ENABLED=0; go build -o bin/app ./cmd/app`,
		extra: []string{"env"},
		want: []got{{ID: "call_1", Kind: tc, Name: "go build", Params: P{"o": "bin/app", "args": L("./cmd/app")},
			Argv: argv("go", "build", "-o", "{o}", "{args...}"), Extra: P{"env": P{"CGO_ENABLED": "0"}}}},
	}, {
		name: "read-only heads",
		cmd:  `git status --short && rg -n 'func Load' internal/ && ls -la && cat go.mod`,
		want: []got{
			{ID: "call_1", Kind: obs, Name: "git status", Params: P{"short": true}, Argv: argv("git", "status", "--short")},
			{ID: "call_1.2", Kind: obs, Name: "rg", Params: P{"n": true, "args": L("func Load", "internal/")},
				Argv: argv("rg", "-n", "{args...}")},
			{ID: "call_1.3", Kind: obs, Name: "ls", Params: P{"l": true, "a": true}, Argv: argv("ls", "-la")},
			{ID: "call_1.4", Kind: obs, Name: "cat", Params: P{"paths": L("go.mod")}, Argv: argv("cat", "{paths...}")},
		},
	}, {
		name: "git branch lists, git branch NAME creates",
		cmd:  `git branch -a; git branch hotfix`,
		want: []got{
			{ID: "call_1", Kind: obs, Name: "git branch", Params: P{"a": true}, Argv: argv("git", "branch", "-a")},
			{ID: "call_1.2", Kind: tc, Name: "git branch", Params: P{"branch": "hotfix"}, Argv: argv("git", "branch", "{branch}")},
		},
	}, {
		name: "kubectl and cargo",
		cmd:  `kubectl -n prod rollout status deploy/api && cargo build --release -p core`,
		want: []got{
			{ID: "call_1", Kind: tc, Name: "kubectl rollout status", Params: P{"n": "prod", "resource": "deploy/api"},
				Argv: argv("kubectl", "-n", "{n}", "rollout", "status", "{resource}")},
			{ID: "call_1.2", Kind: tc, Name: "cargo build", Params: P{"release": true, "p": "core"},
				Argv: argv("cargo", "build", "--release", "-p", "{p}")},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acts := Default().Actions(shell(tt.cmd))
			if diff := cmp.Diff(tt.want, summarize(acts, tt.extra)); diff != "" {
				t.Errorf("Actions(%q) mismatch (-want +got):\n%s", tt.cmd, diff)
			}
			for _, a := range acts {
				if tmpl, ok := a.Metadata["argv"].([]any); ok {
					expandTemplate(t, tmpl, a.Parameters) // every placeholder is a parameter
				}
			}
		})
	}
}

// TestArgvRoundTrip checks the argv template's promise: substituting the
// parameters gives back the command's argv exactly. Each argv is given to
// Actions both as a Codex argv list and as a shell command quoted from it.
func TestArgvRoundTrip(t *testing.T) {
	cases := [][]string{
		{"git", "commit", "-m", "feat: add {x} support\n\nBody with \"quotes\" and $HOME"},
		{"git", "commit", "--amend", "--no-edit"},
		{"git", "checkout", "-b", "feature/issue-42"},
		{"git", "switch", "-c", "fix/nil"},
		{"git", "push", "-u", "origin", "HEAD"},
		{"git", "push", "--force-with-lease", "origin", "feat"},
		{"git", "tag", "v2.0.0-rc.1"},
		{"git", "remote", "add", "upstream", "https://github.com/o/r.git"},
		{"git", "stash", "pop"},
		{"git", "rebase", "-i", "HEAD~3"},
		{"git", "log", "--oneline", "-20"},
		{"git", "log", "--pretty=format:%H %s", "--since=2.weeks"},
		{"git", "-c", "user.name=Bot", "commit", "-m", "x"},
		{"git", "--no-pager", "diff", "--stat", "main...HEAD"},
		{"go", "get", "github.com/spf13/cobra@v1.10.2", "golang.org/x/term@latest"},
		{"go", "install", "golang.org/x/tools/cmd/stringer@v0.50.0"},
		{"go", "test", "-race", "-run", "Test(Load|Parse)$", "-count=1", "./..."},
		{"go", "test", "-bench=.", "-benchtime=1x", "-run=^$", "./internal/mine/"},
		{"go", "build", "-ldflags", "-X main.version=1.2.3", "-o", "bin/crystallize", "./cmd/crystallize"},
		{"go", "mod", "edit", "-replace", "a=../a"},
		{"go", "vet", "./..."},
		{"gh", "pr", "create", "--title", "Bump deps", "--body", "Automated.\n\n- a\n- b", "--base", "main", "--draft"},
		{"gh", "pr", "merge", "123", "--squash", "--delete-branch"},
		{"gh", "issue", "create", "-t", "Crash on {}", "-b", "", "-l", "bug", "-l", "p1"},
		{"gh", "release", "create", "v1.4.0", "--notes-file", "CHANGELOG.md", "dist/app.tar.gz"},
		{"gh", "api", "repos/o/r/pulls/1/comments", "-f", "body=LGTM"},
		{"npm", "run", "test:unit", "--", "--watch=false"},
		{"npm", "install", "lodash@4.17.21", "react@^18"},
		{"pnpm", "add", "-D", "vitest@1.6.0"},
		{"yarn", "workspace", "web", "build"},
		{"npx", "prettier", "--write", "src/**/*.ts"},
		{"cargo", "add", "serde@1.0", "--features", "derive"},
		{"cargo", "test", "-p", "core", "--", "--nocapture"},
		{"docker", "build", "-t", "app:1.4.0", "-f", "Dockerfile.prod", "."},
		{"docker", "compose", "-f", "dev.yml", "up", "-d"},
		{"docker", "run", "--rm", "-e", "A=1", "-v", "/tmp:/tmp", "alpine:3", "sh", "-c", "echo hi"},
		{"kubectl", "apply", "-f", "k8s/", "--dry-run=client"},
		{"kubectl", "get", "pods", "-l", "app=api", "-o", "json"},
		{"helm", "upgrade", "--install", "api", "charts/api", "--set", "image.tag=1.4.0"},
		{"terraform", "plan", "-var", "env=prod", "-out=plan.bin"},
		{"pip", "install", "requests==2.32.3", "-r", "requirements.txt"},
		{"python", "-m", "pip", "install", "-U", "pip"},
		{"python3", "scripts/bump.py", "--part", "minor"},
		{"make", "-j4", "build", "test"},
		{"mysql", "-uroot", "-pSup3rS3cret9", "-e", "select 1"},
		{"curl", "-u", "admin:Hx9pLq2Vw7", "--user=admin:Hx9pLq2Vw7", "https://x.example.com"},
		{"make", "-C", "docs", "html"},
		{"curl", "-sS", "-X", "POST", "-H", "Content-Type: application/json", "-d", `{"a":1}`, "https://api.example.com/v1/x"},
		{"head", "-n5", "README.md"},
		{"tail", "-f", "-n", "100", "/var/log/app.log"},
		{"rg", "-n", "--glob", "!vendor", "TODO\\(", "."},
		{"grep", "-rnE", "func [A-Z]\\w+\\(", "--include=*.go", "."},
		{"find", ".", "-type", "f", "-name", "*_test.go", "-newer", "go.mod"},
		{"sed", "-i.bak", "-e", "s/{{ver}}/1.4.0/g", "tpl.txt"},
		{"jq", "-r", ".items[] | {name}", "data.json"},
		{"ls", "-la", "--color=never"},
		{"echo", "--", "-n"},
		{"./scripts/release.sh", "--dry-run", "v1.4.0"},
		{"/usr/local/bin/terraform", "apply", "-auto-approve"},
		{"rm", "-rf", "dist", "node_modules/.cache"},
		{"mv", "a b.txt", "c'd.txt"},
		{"printf", "%s\\n", "a", "b"},
		{"aws", "s3", "cp", "dist/", "s3://bucket/app/", "--recursive"},
		{"timeout", "30", "nohup", "go", "run", "./cmd/server"},
		{"weird", "-", "--", "--x", "{}", "}{", "{{", "-{", "--=", "-=x", "--a=b=c", "-9", "-n-1"},
	}
	rules := Default()
	for _, want := range cases {
		list := make([]any, len(want))
		for i, w := range want {
			list[i] = w
		}
		quoted := make([]string, len(want))
		for i, w := range want {
			q, err := syntax.Quote(w, syntax.LangBash)
			if err != nil {
				t.Fatalf("quoting %q: %v", w, err)
			}
			quoted[i] = q
		}
		for _, cmd := range []any{list, strings.Join(quoted, " ")} {
			acts := rules.Actions(shell(cmd))
			if len(acts) != 1 {
				t.Errorf("Actions(%q) = %d actions, want 1", cmd, len(acts))
				continue
			}
			a := acts[0]
			tmpl, ok := a.Metadata["argv"].([]any)
			if !ok {
				t.Errorf("Actions(%q): no argv template (metadata %v)", cmd, a.Metadata)
				continue
			}
			if got := expandTemplate(t, tmpl, a.Parameters); !cmp.Equal(got, want) {
				t.Errorf("Actions(%q): template %q with %v expands to %q, want %q", cmd, tmpl, a.Parameters, got, want)
			}
			if prog := "exec:" + path.Base(want[0]); !slices.Contains(a.Capabilities, prog) {
				t.Errorf("Actions(%q): capabilities %v, want %s among them", cmd, a.Capabilities, prog)
			}
		}
	}
}

func TestHeads(t *testing.T) {
	tests := map[string]string{
		"git remote add origin git@github.com:o/r.git": "git remote add",
		"git stash pop":                  "git stash pop",
		"git stash":                      "git stash",
		"git -C x status":                "git status",
		"go mod tidy":                    "go mod tidy",
		"go test ./...":                  "go test",
		"go tool cover -html=c.out":      "go tool cover",
		"gh pr create --fill":            "gh pr create",
		"gh issue view 7":                "gh issue view",
		"gh api repos/o/r":               "gh api",
		"npm run build":                  "npm run build",
		"npm test":                       "npm test",
		"npm install":                    "npm install",
		"yarn build":                     "yarn build",
		"cargo clippy -- -D warnings":    "cargo clippy",
		"docker compose up -d":           "docker compose up",
		"docker build .":                 "docker build",
		"kubectl apply -f x.yaml":        "kubectl apply",
		"make release":                   "make",
		"aws s3 ls":                      "aws s3 ls",
		"python -m pytest":               "python -m pytest",
		"python manage.py migrate":       "python",
		"/usr/bin/git log":               "git log",
		"./node_modules/.bin/eslint src": "eslint",
		"terraform init -upgrade":        "terraform init",
		"nohup go run ./cmd/server":      "go run",
		"env GOOS=linux go build ./...":  "go build",
		"git ./weird":                    "git",
	}
	for cmd, want := range tests {
		acts := Default().Actions(shell(cmd))
		if len(acts) != 1 || acts[0].Name != want {
			t.Errorf("Actions(%q) names %v, want [%s]", cmd, names(acts), want)
		}
	}
}

func names(acts []trace.Action) []string {
	var out []string
	for _, a := range acts {
		out = append(out, a.Name)
	}
	return out
}

func TestCompoundShares(t *testing.T) {
	exit := 1
	dur := int64(2300)
	c := Call{
		ID: "toolu_01", Tool: "Bash", Args: map[string]any{"command": "go vet ./... && go test ./..."},
		Result: "FAIL", ExitCode: &exit, Timestamp: "2026-11-20T10:00:00Z", DurationMS: &dur,
		Cost:     &trace.Cost{Model: "claude-sonnet-4-5", ModelCalls: 1, InputTokens: 900, OutputTokens: 40},
		Metadata: map[string]any{"sidechain": true},
	}
	acts := Default().Actions(c)
	if len(acts) != 2 {
		t.Fatalf("Actions = %v, want 2 actions", names(acts))
	}
	for i, a := range acts {
		if a.Timestamp != c.Timestamp || a.DurationMS == nil || *a.DurationMS != dur {
			t.Errorf("action %d: timestamp %q duration %v, want the call's", i, a.Timestamp, a.DurationMS)
		}
		md := a.Metadata
		if md["exit_code"] != 1 || md["error"] != true || md["sidechain"] != true || md["agent_tool"] != "Bash" ||
			md["compound_index"] != i+1 || md["compound_count"] != 2 {
			t.Errorf("action %d metadata = %v", i, md)
		}
	}
	if acts[0].Cost == nil || acts[0].Cost.InputTokens != 900 || acts[1].Cost != nil {
		t.Errorf("cost = %v, %v; want it on the first part only", acts[0].Cost, acts[1].Cost)
	}
	if acts[0].Output != nil || acts[1].Output != "FAIL" {
		t.Errorf("output = %v, %v; want it on the last part only", acts[0].Output, acts[1].Output)
	}
	acts[0].Cost.InputTokens = 1
	if c.Cost.InputTokens != 900 {
		t.Error("the action shares the call's Cost")
	}
	ok := Default().Actions(Call{ID: "x", Tool: "Bash", Args: map[string]any{"command": "true"}, IsError: true})
	if ok[0].Metadata["error"] != true {
		t.Errorf("IsError call: metadata %v, want error true", ok[0].Metadata)
	}
}

func TestFileTools(t *testing.T) {
	patch := "*** Begin Patch\n*** Update File: internal/a.go\n@@ func A\n-\treturn 1\n+\treturn 2\n" +
		"*** Add File: docs/b.md\n+# B\n+\n+text\n*** Delete File: old.txt\n*** Update File: c.go\n*** Move to: d.go\n@@\n-x\n+y\n*** End Patch\n"
	patchActs := []want{
		{FileEdit, P{"path": "internal/a.go", "old": "\treturn 1\n", "new": "\treturn 2\n"}, nil, "edit"},
		{FileWrite, P{"path": "docs/b.md", "content": "# B\n\ntext\n"}, nil, "write"},
		{FileChange, P{"path": "old.txt"}, P{"operation": "delete", "patch": ""}, "delete"},
		{FileChange, P{"path": "c.go"}, P{"operation": "update", "patch": "@@\n-x\n+y\n", "move_to": "d.go"}, "update"},
	}
	tests := []struct {
		name string
		call Call
		want []want
	}{
		{"Write", Call{Tool: "Write", Args: P{"file_path": "README.md", "content": "# x"}},
			[]want{{FileWrite, P{"path": "README.md", "content": "# x"}, nil, "write"}}},
		{"Edit", Call{Tool: "Edit", Args: P{"file_path": "/r/main.go", "old_string": "a", "new_string": "b", "replace_all": false}},
			[]want{{FileEdit, P{"path": "/r/main.go", "old": "a", "new": "b"}, nil, "edit"}}},
		{"Edit replace_all", Call{Tool: "Edit", Args: P{"file_path": "a.go", "old_string": "a", "new_string": "b", "replace_all": true}},
			[]want{{FileEdit, P{"path": "a.go", "old": "a", "new": "b", "replace_all": true}, nil, "edit"}}},
		{"Edit of a new file", Call{Tool: "Edit", Args: P{"file_path": "n.txt", "old_string": "", "new_string": "hello\n"}},
			[]want{{FileWrite, P{"path": "n.txt", "content": "hello\n"}, nil, "write"}}},
		{"MultiEdit", Call{Tool: "MultiEdit", Args: P{"file_path": "a.go", "edits": []any{
			P{"old_string": "a", "new_string": "b"}, P{"old_string": "c", "new_string": "d", "replace_all": true}}}},
			[]want{{FileEdit, P{"path": "a.go", "edits": []any{P{"old": "a", "new": "b"}, P{"old": "c", "new": "d", "replace_all": true}}}, nil, "edit"}}},
		{"MultiEdit of one edit is an Edit", Call{Tool: "MultiEdit", Args: P{"file_path": "a.go", "edits": []any{P{"old_string": "a", "new_string": "b"}}}},
			[]want{{FileEdit, P{"path": "a.go", "old": "a", "new": "b"}, nil, "edit"}}},
		{"MultiEdit without new text", Call{Tool: "MultiEdit", Args: P{"file_path": "a.go", "edits": []any{P{"old_string": "a"}}}},
			[]want{{FileChange, P{"path": "a.go"}, P{"edits": []any{P{"old_string": "a"}}}, ""}}},
		{"gemini write_file", Call{Tool: "write_file", Args: P{"file_path": "/w/app/x.py", "content": "y"}, Cwd: "/w/app"},
			[]want{{FileWrite, P{"path": "x.py", "content": "y"}, nil, "write"}}},
		{"gemini replace", Call{Tool: "replace", Args: P{"file_path": "/w/app/x.py", "old_string": "a", "new_string": "b", "expected_replacements": float64(3)}, Cwd: "/w/app/"},
			[]want{{FileEdit, P{"path": "x.py", "old": "a", "new": "b", "replace_all": true}, nil, "edit"}}},
		{"text editor create", Call{Tool: "str_replace_based_edit_tool", Args: P{"command": "create", "path": "a.md", "file_text": "t"}},
			[]want{{FileWrite, P{"path": "a.md", "content": "t"}, nil, "write"}}},
		{"text editor str_replace", Call{Tool: "str_replace_editor", Args: P{"command": "str_replace", "path": "a.md", "old_str": "t", "new_str": "u"}},
			[]want{{FileEdit, P{"path": "a.md", "old": "t", "new": "u"}, nil, "edit"}}},
		{"text editor insert", Call{Tool: "str_replace_editor", Args: P{"command": "insert", "path": "a.md", "insert_line": float64(2), "new_str": "u"}},
			[]want{{FileChange, P{"path": "a.md"}, P{"command": "insert", "insert_line": float64(2), "new_str": "u"}, ""}}},
		{"NotebookEdit", Call{Tool: "NotebookEdit", Args: P{"notebook_path": "n.ipynb", "new_source": "x"}},
			[]want{{FileChange, P{"path": "n.ipynb"}, P{"new_source": "x"}, ""}}},
		{"path outside the working directory", Call{Tool: "Write", Args: P{"file_path": "/etc/hosts", "content": "x"}, Cwd: "/w/app"},
			[]want{{FileWrite, P{"path": "/etc/hosts", "content": "x"}, nil, "write"}}},
		{"working directory at the root", Call{Tool: "Write", Args: P{"file_path": "/etc/hosts", "content": "x"}, Cwd: "/"},
			[]want{{FileWrite, P{"path": "etc/hosts", "content": "x"}, nil, "write"}}},
		{"path beside the working directory", Call{Tool: "Write", Args: P{"file_path": "/w/application/a", "content": "x"}, Cwd: "/w/app"},
			[]want{{FileWrite, P{"path": "/w/application/a", "content": "x"}, nil, "write"}}},
		{"apply_patch custom tool", Call{Tool: "apply_patch", Args: P{"input": patch}}, patchActs},
		{"apply_patch argv", Call{Tool: "shell", Args: P{"command": []any{"apply_patch", patch}}}, patchActs},
		{"apply_patch heredoc", Call{Tool: "shell", Args: P{"command": []any{"bash", "-lc", "apply_patch <<'EOF'\n" + patch + "EOF\n"}}}, patchActs},
		{"apply_patch absolute path", Call{Tool: "apply_patch", Args: P{"input": "*** Begin Patch\n*** Add File: /w/app/n.md\n+n\n*** End Patch\n"}, Cwd: "/w/app"},
			[]want{{FileWrite, P{"path": "n.md", "content": "n\n"}, nil, "write"}}},
		{"apply_patch hunks", Call{Tool: "apply_patch", Args: P{"input": "*** Begin Patch\n*** Update File: m.go\n@@ func A\n a := 1\n-b := 2\n+b := 3\n\n c()\n@@ func B\n-x\n+y\n+z\n*** End of File\n*** End Patch\n"}},
			[]want{{FileEdit, P{"path": "m.go", "edits": []any{P{"old": "a := 1\nb := 2\n\nc()\n", "new": "a := 1\nb := 3\n\nc()\n"}, P{"old": "x\n", "new": "y\nz\n"}}}, nil, "edit"}}},
		{"apply_patch insertion without context", Call{Tool: "apply_patch", Args: P{"input": "*** Begin Patch\n*** Update File: m.go\n@@\n+z\n*** End Patch\n"}},
			[]want{{FileChange, P{"path": "m.go"}, P{"operation": "update", "patch": "@@\n+z\n"}, "update"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.ID = "id"
			acts := Default().Actions(tt.call)
			var got []want
			for _, a := range acts {
				if a.Kind != trace.KindFileMutation {
					t.Errorf("action %s %s, want a %s", a.Kind, a.Name, trace.KindFileMutation)
				}
				in, _ := a.Inputs.(map[string]any)
				mutation := ""
				p, _ := a.Parameters["path"].(string)
				if len(a.SideEffects) == 0 || a.SideEffects[0].Target != p || a.SideEffects[0].Capability != "fs.write" || a.SideEffects[0].Kind != "file_write" {
					t.Errorf("side effects %v, want a file_write of %s", a.SideEffects, p)
				} else {
					mutation = a.SideEffects[0].Mutation
				}
				if !cmp.Equal(a.Capabilities, []string{"fs.write"}) {
					t.Errorf("capabilities %v", a.Capabilities)
				}
				got = append(got, want{a.Name, a.Parameters, in, mutation})
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("Actions(%s %v) (-want +got):\n%s", tt.call.Tool, tt.call.Args, diff)
			}
		})
	}
	if e := Default().Actions(Call{ID: "e", Tool: "Edit", Args: P{"file_path": "a"}}); e[0].Inputs != nil || e[0].Name != FileChange {
		t.Errorf("Edit with only a path = %s with inputs %v, want %s without", e[0].Name, e[0].Inputs, FileChange)
	}
}

// want is what TestFileTools checks of a file action.
type want struct {
	name     string
	params   P
	inputs   P
	mutation string
}

func TestOtherTools(t *testing.T) {
	tests := []struct {
		tool string
		kind trace.Kind
	}{
		{"Read", trace.KindObservation}, {"Grep", trace.KindObservation}, {"Glob", trace.KindObservation},
		{"TodoWrite", trace.KindObservation}, {"update_plan", trace.KindObservation}, {"view_image", trace.KindObservation},
		{"WebSearch", trace.KindObservation}, {"LS", trace.KindObservation},
		{"Task", trace.KindToolCall}, {"mcp__github__create_issue", trace.KindToolCall},
		// Read-only tools are observations.
		{"WebFetch", trace.KindObservation}, {"ToolSearch", trace.KindObservation},
		{"ListMcpResourcesTool", trace.KindObservation}, {"ReadMcpResourceTool", trace.KindObservation},
		{"web_search_call", trace.KindObservation}, {"web_search", trace.KindObservation}, // as the Codex reader names it
		// MCP tools whose names say they read; a write word anywhere,
		// or a name that says nothing, keeps a tool call.
		{"mcp__github__get_issue", trace.KindObservation}, {"mcp__linear__list_projects", trace.KindObservation},
		{"mcp__notion__searchPages", trace.KindObservation}, {"mcp__x_y__calendar_search", trace.KindObservation},
		{"mcp__docs__describe_table", trace.KindObservation}, {"mcp__web__fetch_url", trace.KindObservation},
		{"mcp__jira__query_issues", trace.KindObservation}, {"mcp__db__read_rows", trace.KindObservation},
		{"mcp__db__query", trace.KindToolCall}, {"mcp__git__get_or_create_branch", trace.KindToolCall},
		{"mcp__svc__authenticate", trace.KindToolCall}, {"mcp__gh__list_and_delete_runs", trace.KindToolCall},
		{"get_issue", trace.KindToolCall}, {"mcp__get_issue", trace.KindToolCall},
	}
	for _, tt := range tests {
		args := P{"q": "x"}
		acts := Default().Actions(Call{ID: "i", Tool: tt.tool, Args: args})
		if len(acts) != 1 || acts[0].Kind != tt.kind || acts[0].Name != tt.tool || !cmp.Equal(acts[0].Parameters, args) {
			t.Errorf("Actions(%s) = %+v, want one %s named after the tool with its arguments", tt.tool, acts, tt.kind)
		}
	}
	// Input the shell and file rules cannot use still gives one action.
	for _, c := range []Call{
		{ID: "a", Tool: "Bash"},
		{ID: "b", Tool: "Bash", Args: P{"command": 42}},
		{ID: "c", Tool: "shell", Args: P{"command": []any{"git", 3}}},
		{ID: "d", Tool: "Edit", Args: P{"old_string": "x"}},
		{ID: "e", Tool: "apply_patch", Args: P{"input": "not a patch"}},
	} {
		acts := Default().Actions(c)
		if len(acts) != 1 || acts[0].ID != c.ID {
			t.Errorf("Actions(%+v) = %+v, want one action with the call's id", c, acts)
		}
	}
}

// TestMCPAnnotations checks that a call recorded with the server's
// annotations follows its readOnlyHint whatever the tool's name says, and
// that the user's table still has the last word.
func TestMCPAnnotations(t *testing.T) {
	ann := func(readOnly bool) map[string]any {
		return P{"mcp": P{"server": "s", "annotations": P{"readOnlyHint": readOnly}}}
	}
	tests := []struct {
		tool string
		md   map[string]any
		want trace.Kind
	}{
		{"mcp__s__sync", ann(true), trace.KindObservation},
		{"mcp__s__get_token", ann(false), trace.KindToolCall},
		{"Read", ann(false), trace.KindToolCall},
		{"mcp__s__sync", P{"mcp": P{"server": "s"}}, trace.KindToolCall},
	}
	for _, tt := range tests {
		acts := Default().Actions(Call{ID: "i", Tool: tt.tool, Metadata: tt.md})
		if len(acts) != 1 || acts[0].Kind != tt.want {
			t.Errorf("Actions(%s, %v) kind = %s, want %s", tt.tool, tt.md, acts[0].Kind, tt.want)
		}
	}
	r, err := Default().Extend(Config{Observations: []string{"mcp__s__sync2"}, ToolCalls: []string{"mcp__s__list"}})
	if err != nil {
		t.Fatal(err)
	}
	if a := r.Actions(Call{Tool: "mcp__s__sync2", Metadata: ann(false)}); a[0].Kind != trace.KindObservation {
		t.Errorf("user observation with readOnlyHint false = %s, want observation", a[0].Kind)
	}
	if a := r.Actions(Call{Tool: "mcp__s__list", Metadata: ann(true)}); a[0].Kind != trace.KindToolCall {
		t.Errorf("user tool call with readOnlyHint true = %s, want tool_call", a[0].Kind)
	}
}

func TestExtend(t *testing.T) {
	r, err := Default().Extend(Config{
		Observations: []string{"mcp__db__migrate", "terraform plan"},
		ToolCalls:    []string{"git status"},
		FileTools:    []string{"mcp__fs__write"},
		ShellTools:   []string{"mcp__term__run"},
		Heads:        map[string]int{"mytool": 2},
		ValueFlags:   map[string][]string{"mytool": {"target"}},
		Rename:       map[string]string{"mcp__github__create_pull_request": "gh pr create"},
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(c Call, kind trace.Kind, name string) {
		t.Helper()
		acts := r.Actions(c)
		if len(acts) != 1 || acts[0].Kind != kind || acts[0].Name != name {
			t.Errorf("extended Actions(%v %v) = %v, want one %s %s", c.Tool, c.Args, acts, kind, name)
		}
	}
	check(Call{Tool: "mcp__db__migrate"}, trace.KindObservation, "mcp__db__migrate")
	check(Call{Tool: "mcp__term__run", Args: P{"command": "terraform plan -out=x"}}, trace.KindObservation, "terraform plan")
	check(Call{Tool: "Bash", Args: P{"command": "git status"}}, trace.KindToolCall, "git status")
	check(Call{Tool: "mcp__fs__write", Args: P{"path": "a"}}, trace.KindFileMutation, FileChange)
	check(Call{Tool: "mcp__fs__write", Args: P{"path": "a", "content": "x"}}, trace.KindFileMutation, FileWrite)
	check(Call{Tool: "Bash", Args: P{"command": "mytool deploy app --target prod"}}, trace.KindToolCall, "mytool deploy app")
	check(Call{Tool: "mcp__github__create_pull_request", Args: P{"title": "x"}}, trace.KindToolCall, "gh pr create")
	if p := r.Actions(shell("mytool deploy app --target prod"))[0].Parameters; p["target"] != "prod" {
		t.Errorf("value flag from config: parameters %v", p)
	}
	// The default table is unchanged: Default shares its maps between
	// calls, so any entry Extend wrote into them would show here.
	if a := Default().Actions(shell("git status")); a[0].Kind != trace.KindObservation {
		t.Error("Extend changed the default table's tool calls")
	}
	if a := Default().Actions(shell("mytool deploy app --target prod")); a[0].Name != "mytool" || a[0].Parameters["target"] != true {
		t.Errorf("Extend changed the default table's heads or value flags: %+v", a[0])
	}
	if a := Default().Actions(Call{Tool: "mcp__github__create_pull_request"}); a[0].Name != "mcp__github__create_pull_request" {
		t.Errorf("Extend changed the default table's renames: %+v", a[0])
	}
	for _, tool := range []string{"mcp__db__migrate", "mcp__fs__write", "mcp__term__run"} {
		if a := Default().Actions(Call{Tool: tool, Args: P{"path": "a", "command": "ls"}}); a[0].Kind != trace.KindToolCall || a[0].Name != tool {
			t.Errorf("Extend changed how the default table reads %s: %+v", tool, a[0])
		}
	}

	_, err = Default().Extend(Config{
		Observations: []string{"ok", ""},
		ToolCalls:    []string{"ok"},
		Heads:        map[string]int{"terraform": 9, "a  b": 1},
		ValueFlags:   map[string][]string{"x": {"--var"}},
		Rename:       map[string]string{"t": " "},
	})
	want := []string{
		`normalize.observations[1]: empty name`,
		`normalize.tool_calls[0]: "ok" is also in normalize.observations`,
		`normalize.heads["a  b"]: "a  b": the words of a head are separated by one space`,
		`normalize.heads.terraform: depth 9 out of range 0 to 4`,
		`normalize.value_flags.x[0]: "--var": a flag is written without dashes, such as "var-file"`,
		`normalize.rename.t: " ": the words of a head are separated by one space`,
	}
	if diff := cmp.Diff(strings.Join(want, "\n"), fmt.Sprint(err)); diff != "" {
		t.Errorf("Extend errors (-want +got):\n%s", diff)
	}
}

// TestExtendNil checks that a nil table extends the default one, as a nil
// table reads calls with the default one: a caller with no table of its
// own (no crystallize.toml) and a [normalize] section gets the built-in
// heads and observations plus its additions, not its additions alone.
func TestExtendNil(t *testing.T) {
	var none *Rules
	r, err := none.Extend(Config{Observations: []string{"mcp__db__explain"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		c    Call
		kind trace.Kind
		name string
	}{
		{Call{Tool: "mcp__db__explain"}, trace.KindObservation, "mcp__db__explain"},
		{shell("git status"), trace.KindObservation, "git status"},
		{shell("go test ./..."), trace.KindToolCall, "go test"},
	} {
		if a := r.Actions(tt.c); len(a) != 1 || a[0].Kind != tt.kind || a[0].Name != tt.name {
			t.Errorf("Actions(%v %v) = %+v, want one %s %s", tt.c.Tool, tt.c.Args, a, tt.kind, tt.name)
		}
	}
}

func FuzzActions(f *testing.F) {
	for _, s := range []string{
		`cd /repo && git add -A && git commit -m "x"`, `go test ./... | tail -5`, `bash -lc 'npm ci; npm test'`,
		"cat <<EOF\nx\nEOF", `echo $(( 1 + 2 ))`, `FOO=1 BAR_TOKEN=s go run .`, `a |& b || c; d & e`,
		`git log --format='{%H}' -3`, "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF",
		`"unterminated`, `(cd x; make)`, `x=$(ls) y`, `timeout 5 env A=1 nohup sh -c "sh -c 'ls'"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, c := range []Call{shell(cmd), {ID: "call_1", Tool: "shell", Args: P{"command": []any{"bash", "-lc", cmd}}}} {
			acts := Default().Actions(c)
			if len(acts) == 0 {
				t.Fatalf("Actions(%q) gave no action", cmd)
			}
			seen := map[string]bool{}
			for _, a := range acts {
				if seen[a.ID] || !strings.HasPrefix(a.ID, "call_1") || a.Name == "" {
					t.Fatalf("Actions(%q): bad or repeated id %q or empty name %q", cmd, a.ID, a.Name)
				}
				seen[a.ID] = true
				if tmpl, ok := a.Metadata["argv"].([]any); ok {
					expandTemplate(t, tmpl, a.Parameters)
				}
			}
		}
	})
}

func BenchmarkActions(b *testing.B) {
	calls := []Call{
		shell(`cd /repo && git add go.mod go.sum && git commit -m "Bump golang.org/x/mod to v0.20.0"`),
		shell(`go test ./... 2>&1 | grep -v '^ok' | head -40`),
		shell([]any{"bash", "-lc", "gh pr create --title 'Bump' --body 'x' --base main"}),
		{ID: "e", Tool: "Edit", Args: P{"file_path": "a.go", "old_string": "a", "new_string": "b"}},
		{ID: "r", Tool: "Read", Args: P{"file_path": "a.go"}},
	}
	r := Default()
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range calls {
			r.Actions(c)
		}
	}
}

func TestShellToolArgs(t *testing.T) {
	tests := []struct {
		call      Call
		name, cwd string
	}{
		{Call{Tool: "shell", Args: P{"command": []any{"bash", "-lc", "cd web && npm test"}, "workdir": "/repo"}}, "npm test", "/repo/web"},
		{Call{Tool: "shell", Args: P{"command": []any{"go", "vet", "./..."}, "workdir": "/repo"}}, "go vet", "/repo"},
		{Call{Tool: "exec_command", Args: P{"cmd": "cd /abs && make", "workdir": "/repo"}}, "make", "/abs"},
		{Call{Tool: "run_shell", Args: P{"command": "zsh -lc 'go mod tidy'"}}, "go mod tidy", ""},
		{Call{Tool: "local_shell_call", Args: P{"command": []any{"/bin/sh", "-c", "git status"}}}, "git status", ""},
	}
	// The description is added to what the command says of itself: the
	// argv template the workflow runs is still there.
	desc := Default().Actions(Call{ID: "d", Tool: "Bash", Args: P{"command": "go mod tidy", "description": "Tidy modules"}})
	if desc[0].Metadata["description"] != "Tidy modules" {
		t.Errorf("description not kept: metadata %v", desc[0].Metadata)
	}
	if diff := cmp.Diff(argv("go", "mod", "tidy"), desc[0].Metadata["argv"]); diff != "" {
		t.Errorf("argv template with a description (-want +got):\n%s", diff)
	}
	for _, tt := range tests {
		tt.call.ID = "c"
		acts := Default().Actions(tt.call)
		cwd, _ := acts[0].Metadata["cwd"].(string)
		if len(acts) != 1 || acts[0].Name != tt.name || cwd != tt.cwd {
			t.Errorf("Actions(%v) = %v in %q, want [%s] in %q", tt.call.Args, names(acts), cwd, tt.name, tt.cwd)
		}
	}
}

func TestCredential(t *testing.T) {
	for name, want := range map[string]bool{
		"GH_TOKEN": true, "GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true, "OPENAI_API_KEY": true,
		"PGPASSWORD": true, "NPM_AUTH": true, "npm_config__auth": true, "GITHUBTOKEN": true,
		"GIT_AUTHOR_NAME": false, "GOFLAGS": false, "CGO_ENABLED": false, "PASSTHROUGH": false, "KEYBOARD": false, "PWD": false,
	} {
		if got := credential(name); got != want {
			t.Errorf("credential(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestConfigTOML decodes the example of Config's documentation, as
// crystallize.toml carries it.
func TestConfigTOML(t *testing.T) {
	const doc = `
[normalize]
observations = ["mcp__db__migrate", "terraform plan"]
tool_calls   = ["git branch"]
file_tools   = ["mcp__fs__write_file"]
shell_tools  = ["mcp__term__run"]

[normalize.heads]
terraform = 1
"terraform workspace" = 1

[normalize.value_flags]
terraform = ["var", "var-file"]

[normalize.rename]
"mcp__github__create_pull_request" = "gh pr create"
`
	var file struct {
		Normalize Config `toml:"normalize"`
	}
	md, err := toml.Decode(doc, &file)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Errorf("undecoded keys %v", u)
	}
	r, err := Default().Extend(file.Normalize)
	if err != nil {
		t.Fatal(err)
	}
	acts := r.Actions(Call{ID: "t", Tool: "mcp__term__run", Args: P{"command": "terraform workspace select -var-file prod.tfvars prod"}})
	if len(acts) != 1 || acts[0].Name != "terraform workspace select" || acts[0].Parameters["var_file"] != "prod.tfvars" {
		t.Errorf("Actions = %+v", acts)
	}
}

// TestActionsCached checks that a Rules shared by concurrent decoders
// gives every call the actions a fresh Rules gives it, although the
// second time a script is seen its syntax tree comes from the cache
// (run with -race to check the sharing too).
func TestActionsCached(t *testing.T) {
	calls := []Call{
		shell(`cd /repo && git add go.mod go.sum && git commit -m "Bump golang.org/x/mod to v0.20.0"`),
		shell(`go test ./... 2>&1 | grep -v '^ok' | head -40`),
		shell(`GH_TOKEN=secret gh pr create --title 'Bump' --body 'x'`),
		shell([]any{"bash", "-lc", "gh pr create --title 'Bump' --body 'x' --base main"}),
		shell(`bash -c "sh -c 'go vet ./...'"`),
		shell(`echo "unterminated`),
		shell(`apply_patch <<'EOF'
*** Begin Patch
*** Update File: a.go
@@
-a
+b
*** End Patch
EOF`),
	}
	shared := Default()
	var wg sync.WaitGroup
	got := make([][][]trace.Action, 4)
	for g := range got {
		wg.Go(func() {
			for range 3 {
				got[g] = got[g][:0]
				for _, c := range calls {
					got[g] = append(got[g], shared.Actions(c))
				}
			}
		})
	}
	wg.Wait()
	for i, c := range calls {
		want := Default().Actions(c)
		for g := range got {
			if diff := cmp.Diff(want, got[g][i]); diff != "" {
				t.Errorf("Actions(%v) from a shared Rules (-want +got):\n%s", c.Args, diff)
			}
		}
	}
}

// TestFileEditOutput: a successful edit a built-in redoes keeps no
// agent answer, which differs between agents for the same edit; a failed
// one keeps it, and so does a file.edit.
func TestFileEditOutput(t *testing.T) {
	for _, tt := range []struct {
		call Call
		want any
	}{
		{Call{Tool: "Write", Args: P{"file_path": "a.md", "content": "x"}, Result: "File created successfully at: /w/a.md"}, nil},
		{Call{Tool: "apply_patch", Args: P{"input": "*** Begin Patch\n*** Add File: a.md\n+x\n*** End Patch\n"}, Result: "Success. Updated the following files:\nA a.md\n"}, nil},
		{Call{Tool: "Edit", Args: P{"file_path": "a.md", "old_string": "x", "new_string": "y"}, Result: "String to replace not found in file.", IsError: true}, "String to replace not found in file."},
		{Call{Tool: "NotebookEdit", Args: P{"notebook_path": "n.ipynb", "new_source": "x"}, Result: "Updated cell"}, "Updated cell"},
	} {
		tt.call.ID = "o"
		if got := Default().Actions(tt.call)[0].Output; got != tt.want {
			t.Errorf("Actions(%s %v).Output = %v, want %v", tt.call.Tool, tt.call.Args, got, tt.want)
		}
	}
}

// FuzzPatch: any text given to apply_patch becomes actions without a
// panic, and every file action a built-in redoes carries what it needs:
// fs.write its content, fs.edit non-empty old text for each edit.
func FuzzPatch(f *testing.F) {
	for _, s := range []string{
		"*** Begin Patch\n*** Update File: a.go\n@@ func A\n a\n-b\n+c\n*** End Patch\n",
		"*** Begin Patch\n*** Add File: n.md\n+x\n+\n*** Delete File: o\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: m\n@@\n+z\n@@\n-x\n+y\n*** End of File\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: c\n*** Move to: d\n@@\n-x\n+y\n*** End Patch\n",
		"*** Begin Patch\n*** Update File: e\n\n\r\n-\n+\n", "*** Begin Patch\nno section\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		if !strings.Contains(patch, "*** Begin Patch") {
			patch = "*** Begin Patch\n" + patch
		}
		for _, a := range Default().Actions(Call{ID: "p", Tool: "apply_patch", Args: P{"input": patch}}) {
			switch a.Name {
			case FileWrite:
				if _, ok := a.Parameters["content"].(string); !ok {
					t.Fatalf("fs.write without content: %v", a.Parameters)
				}
			case FileEdit:
				edits, _ := a.Parameters["edits"].([]any)
				if old, ok := a.Parameters["old"].(string); ok {
					edits = append(edits, P{"old": old, "new": a.Parameters["new"]})
				}
				if len(edits) == 0 {
					t.Fatalf("fs.edit without an edit: %v", a.Parameters)
				}
				for _, e := range edits {
					m := e.(P)
					if old, _ := m["old"].(string); old == "" {
						t.Fatalf("fs.edit with empty old text: %v", a.Parameters)
					}
					if _, ok := m["new"].(string); !ok {
						t.Fatalf("fs.edit without new text: %v", a.Parameters)
					}
				}
			case FileChange, "apply_patch":
			default:
				t.Fatalf("apply_patch gave %s %s", a.Kind, a.Name)
			}
		}
	})
}
