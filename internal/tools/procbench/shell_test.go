package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func heads(evs []Event) []string {
	var out []string
	for _, e := range evs {
		s := e.String()
		if e.Operand {
			s += " +"
		}
		out = append(out, s)
	}
	return out
}

func TestScriptEvents(t *testing.T) {
	tests := []struct {
		script string
		want   []string
	}{
		{"git status", []string{"git status"}},
		{"cd /src/app && git add -A && git commit -m 'fix: a; b' && git push origin main",
			[]string{"git add", "git commit +", "git push +"}},
		// A commit message in a here-document stays one argument, however
		// many lines and separators it holds.
		{"git commit -m \"$(cat <<'EOF'\nfix the parser; add tests\n\nCo-Authored-By: x\nEOF\n)\" && git push",
			[]string{"git commit +", "git push"}},
		{"git -C /src/app --no-pager commit -q", []string{"git commit"}},
		{"FOO=1 sudo -E npm run test -- --watch=false", []string{"npm run test"}},
		{"timeout 60 go test ./...  2>&1 | tail -20", []string{"go test +", "tail"}},
		{"python -m pytest tests/ -x", []string{"pytest +"}},
		{"uv run pytest -q", []string{"pytest"}},
		{`"C:\Program Files\Git\bin\git.exe" push > out.txt 2>&1`, []string{"git push"}},
		{"gh pr create --fill", []string{"gh pr create"}},
		{"go mod tidy; go get example.com/m@v1.2.0", []string{"go mod tidy", "go get +"}},
		{"npm install\nnpm install left-pad", []string{"npm install", "npm install +"}},
		{"git tag -l", []string{"git tag"}},
		{"git tag v1.2.0 && git push origin v1.2.0", []string{"git tag +", "git push +"}},
		{"# just a comment\nexport A=1", nil},
		{"(cd sub && make test)", []string{"make test"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, heads(scriptEvents(tt.script))); diff != "" {
			t.Errorf("scriptEvents(%q) (-want +got):\n%s", tt.script, diff)
		}
	}
}

func TestArgvEvents(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
	}{
		{[]string{"bash", "-lc", "git add . && git commit -m x"}, []string{"git add +", "git commit +"}},
		{[]string{"/bin/zsh", "-lc", "cargo test"}, []string{"cargo test"}},
		{[]string{"powershell.exe", "-Command", "git push"}, []string{"git push"}},
		{[]string{"git", "commit", "-m", "{message}"}, []string{"git commit +"}},
		{[]string{"go", "test", "./..."}, []string{"go test +"}},
		{nil, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, heads(argvEvents(tt.argv))); diff != "" {
			t.Errorf("argvEvents(%q) (-want +got):\n%s", tt.argv, diff)
		}
	}
}
