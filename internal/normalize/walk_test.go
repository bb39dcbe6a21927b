package normalize

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShellWalk checks how a shell script is cut into actions: which
// statements become which actions, what each action's command text is,
// and which capabilities it claims. The capabilities are what approval
// and review gates read, so an action that writes a file or runs
// arbitrary shell must say so.
func TestShellWalk(t *testing.T) {
	type act struct {
		Name    string
		Caps    []string
		Command string
		Filters []any
	}
	tests := []struct {
		name string
		cmd  string
		want []act
	}{
		// A command the parser rejects is named by its first word,
		// whatever letters, digits and punctuation a file name has.
		{"unparsable, named by its program", `./scripts/Deploy_v2.sh --env "unterminated`,
			[]act{{"Deploy_v2.sh", []string{"exec:Deploy_v2.sh"}, `./scripts/Deploy_v2.sh --env "unterminated`, nil}}},
		// Each part's command is its own statement, without the ";"
		// that separates it from the next.
		{"statements separated by ;", `go vet ./...; go test ./...`,
			[]act{{"go vet", []string{"exec:go"}, "go vet ./...", nil}, {"go test", []string{"exec:go"}, "go test ./...", nil}}},
		// A heredoc's body belongs to its command, up to the line
		// that ends it, and not to the command after it.
		{"a heredoc and a command after it", "cat > f.txt <<EOF\nhello\nEOF\necho done",
			[]act{{"cat", []string{"exec:cat", "fs.write"}, "cat > f.txt <<EOF\nhello\nEOF", nil}, {"echo", []string{"exec:echo"}, "echo done", nil}}},
		{"a heredoc at the end of the script", "cat > f.txt <<EOF\nhello\nEOF",
			[]act{{"cat", []string{"exec:cat", "fs.write"}, "cat > f.txt <<EOF\nhello\nEOF", nil}}},
		// A heredoc's body follows the line its command is on, so the
		// command's text is that whole line and the body, and ends
		// with the line that closes the body.
		{"a heredoc whose command shares its line", "cat > a <<EOF; echo next\nbody\nEOF\nls",
			[]act{
				{"cat", []string{"exec:cat", "fs.write"}, "cat > a <<EOF; echo next\nbody\nEOF", nil},
				{"echo", []string{"exec:echo"}, "echo next", nil},
				{"ls", []string{"exec:ls"}, "ls", nil},
			}},
		{"a heredoc whose command shares its line, at the end", "cat > a <<EOF; echo next\nbody\nEOF",
			[]act{{"cat", []string{"exec:cat", "fs.write"}, "cat > a <<EOF; echo next\nbody\nEOF", nil}, {"echo", []string{"exec:echo"}, "echo next", nil}}},
		// time only measures the command it prefixes.
		{"time", `time go test ./...`, []act{{"go test", []string{"exec:go"}, "go test ./...", nil}}},
		// A declaration other than export may do anything (declare -n,
		// readonly of a function): it is shell, and the parts around it
		// are still read.
		{"declare is shell", `declare -r X=1; make`,
			[]act{{"shell", []string{"shell.exec"}, "declare -r X=1", nil}, {"make", []string{"exec:make"}, "make", nil}}},
		{"a compound command is shell", `if true; then make; fi`,
			[]act{{"shell", []string{"shell.exec"}, "if true; then make; fi", nil}}},
		// Every later stage of a pipeline that only shapes text is a
		// filter of the first, with | or |&.
		{"three stages", `go test ./... | grep FAIL | head -5`,
			[]act{{"go test", []string{"exec:go"}, "go test ./...", []any{"grep FAIL", "head -5"}}}},
		{"|&", `go build ./... |& tail -3`,
			[]act{{"go build", []string{"exec:go"}, "go build ./...", []any{"tail -3"}}}},
		// A redirection to a file is a write.
		{"output redirection", `echo x > VERSION`,
			[]act{{"echo", []string{"exec:echo", "fs.write"}, "echo x > VERSION", nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []act
			for _, a := range Default().Actions(shell(tt.cmd)) {
				command, _ := a.Metadata["command"].(string)
				filters, _ := a.Metadata["filters"].([]any)
				got = append(got, act{a.Name, a.Capabilities, command, filters})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Actions(%q) (-want +got):\n%s", tt.cmd, diff)
			}
		})
	}
}
