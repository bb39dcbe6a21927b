package normalize

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/trace"
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
		// A stage that is no simple command (a subshell) is no filter: it
		// is shell of its own.
		{"a subshell after a pipe", `go test ./... | (cd x; cat)`,
			[]act{{"go test", []string{"exec:go"}, "go test ./...", nil}, {"shell", []string{"shell.exec"}, "(cd x; cat)", nil}}},
		// A redirection with no command still truncates its file.
		{"a redirection alone", `> log.txt`, []act{{"shell", []string{"shell.exec"}, "> log.txt", nil}}},
		{"an assignment with a redirection", `X=1 > log.txt`, []act{{"shell", []string{"shell.exec"}, "X=1 > log.txt", nil}}},
		// A read-only head whose operand the shell computes still only
		// reads.
		{"a read with an expansion", `ls "$DIR"`, []act{{"ls", []string{"exec:ls"}, `ls "$DIR"`, nil}}},
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

// TestShellWalkDetails checks what the walk records beside names: the
// working directory a shell tool gives as cwd; the kind of a command it
// cannot take apart, read-only when its head only reads; the words a
// backslash escapes, with the characters around them; a heredoc in
// backquotes, which is not the literal $(cat <<'EOF') is; and the
// environment env sets, a credential's value left out.
func TestShellWalkDetails(t *testing.T) {
	if a := Default().Actions(Call{Tool: "shell", Args: P{"command": "go vet ./...", "cwd": "/repo"}}); a[0].Metadata["cwd"] != "/repo" {
		t.Errorf("shell tool with cwd: metadata %v, want cwd /repo", a[0].Metadata)
	}
	if a := Default().Actions(shell(`ls "$DIR"`)); a[0].Kind != trace.KindObservation || a[0].Metadata["unparsed"] != true {
		t.Errorf(`ls "$DIR": %s %v, want an unparsed observation`, a[0].Kind, a[0].Metadata)
	}
	if a := Default().Actions(shell(`echo a\ b "c\$d"`)); !cmp.Equal(a[0].Parameters["args"], L("a b", "c$d")) {
		t.Errorf(`echo a\ b "c\$d": parameters %v, want args [a b, c$d]`, a[0].Parameters)
	}
	if a := Default().Actions(shell("git commit -m \"`cat <<'EOF'\nmsg\nEOF\n`\"")); a[0].Metadata["unparsed"] != true {
		t.Errorf("a heredoc in backquotes: %+v, want unparsed", a[0])
	}
	a := Default().Actions(shell(`env GH_TOKEN=abc GOFLAGS=-x go test`))
	if diff := cmp.Diff(P{"GH_TOKEN": nil, "GOFLAGS": "-x"}, a[0].Metadata["env"]); diff != "" {
		t.Errorf("env wrapper environment (-want +got):\n%s", diff)
	}
}

// TestNameWords checks how a tool name is cut into the words the
// read-only rule reads: at "_", "-", "." and where lower case turns upper.
func TestNameWords(t *testing.T) {
	for name, want := range map[string][]string{
		"getIssue_comments": {"get", "issue", "comments"},
		"list-issues":       {"list", "issues"},
		"repo.get":          {"repo", "get"},
	} {
		if got := nameWords(name); !cmp.Equal(got, want) {
			t.Errorf("nameWords(%q) = %q, want %q", name, got, want)
		}
	}
}
