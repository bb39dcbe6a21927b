package main

import (
	"path"
	"strings"
)

// splitScript splits a shell script into its simple commands, each as a
// list of words: it cuts at newlines, ";", "&", "&&", "||" and "|" outside
// quotes, and removes one level of quoting. It is deliberately small:
// it understands single and double quotes and backslashes, and keeps
// "$(…)" and here-documents inside the word that holds them (a commit
// message written as -m "$(cat <<'EOF' … EOF)" stays one argument). It
// never fails; an unterminated quote runs to the end of the script.
func splitScript(script string) [][]string {
	var (
		cmds  [][]string
		words []string
		word  strings.Builder
		inW   bool // a word has started (possibly empty: "")
	)
	endWord := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\\' && i+1 < len(rs):
			if rs[i+1] == '\n' { // line continuation
				i++
				continue
			}
			word.WriteRune(rs[i+1])
			inW = true
			i++
		case c == '\'':
			inW = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				word.WriteRune(rs[i])
			}
		case c == '"':
			inW = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]) {
					i++
				}
				word.WriteRune(rs[i])
			}
		case c == '$' && i+1 < len(rs) && rs[i+1] == '(':
			// Keep a command substitution inside its word, up to the
			// matching parenthesis.
			depth := 0
			for ; i < len(rs); i++ {
				word.WriteRune(rs[i])
				if rs[i] == '(' {
					depth++
				} else if rs[i] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			inW = true
		case c == '&' && (i > 0 && (rs[i-1] == '>' || rs[i-1] == '<') || i+1 < len(rs) && rs[i+1] == '>'):
			// 2>&1 and &> redirect; they separate nothing.
			word.WriteRune(c)
			inW = true
		case c == '\n' || c == ';' || c == '&' || c == '|':
			endCmd()
		case c == ' ' || c == '\t' || c == '\r':
			endWord()
		case c == '#' && !inW:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			endCmd()
		case c == '(' || c == ')' || (c == '{' || c == '}') && !inW:
			endCmd() // subshells and groups: their commands still count
		default:
			word.WriteRune(c)
			inW = true
		}
	}
	endCmd()
	return cmds
}

// wrappers are programs that run the command that follows them; the head
// of "sudo git push" is the head of "git push".
var wrappers = map[string]int{ // program → how many arguments it takes before the command
	"sudo": 0, "time": 0, "nohup": 0, "command": 0, "exec": 0, "env": 0, "timeout": 1, "caffeinate": 0,
}

// runners run a named program: "uv run pytest" is pytest, "npx vitest"
// is vitest run by npx.
var runners = map[string]bool{"uv": true, "poetry": true, "pipenv": true, "pdm": true, "hatch": true, "rye": true}

// isAssignment reports whether w is an environment assignment FOO=bar
// that prefixes a command.
func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for _, r := range w[:i] {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// programName is the program a word names: its base name, without a
// Windows .exe, in lower case (Windows paths and PowerShell spell git
// as C:\Program Files\Git\bin\git.exe).
func programName(w string) string {
	w = strings.ReplaceAll(w, `\`, "/")
	w = strings.ToLower(path.Base(w))
	return strings.TrimSuffix(w, ".exe")
}

// commandHead names one simple command by its program and, for programs
// whose first argument is a subcommand, that subcommand: "git push",
// "gh pr create", "go mod tidy", "npm run test", "pytest". It also says
// whether the command names an operand after its head (a package, a
// file, a tag), which tells "npm install left-pad" from "npm install".
// It returns "" for an empty command, a bare assignment and "cd".
func commandHead(words []string) (head string, operand bool) {
	words = dropRedirections(words)
	for len(words) > 0 {
		w := words[0]
		if isAssignment(w) {
			words = words[1:]
			continue
		}
		p := programName(w)
		if n, ok := wrappers[p]; ok && len(words) > 1 {
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || isAssignment(words[0])) {
				words = words[1:]
			}
			if n > 0 && len(words) > n {
				words = words[n:]
			}
			continue
		}
		if runners[p] && len(words) > 2 && words[1] == "run" {
			words = words[2:]
			continue
		}
		break
	}
	if len(words) == 0 {
		return "", false
	}
	prog := programName(words[0])
	rest := words[1:]
	switch prog {
	case "cd", "pushd", "popd", "true", "false", "set", "export", "source", ".":
		return "", false
	case "python", "python3", "py":
		if len(rest) >= 2 && rest[0] == "-m" {
			return commandHead(rest[1:])
		}
		return prog, nonFlag(rest)
	case "git":
		// Global options come before the subcommand; -C and -c take a value.
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			if (rest[0] == "-C" || rest[0] == "-c") && len(rest) > 1 {
				rest = rest[2:]
				continue
			}
			rest = rest[1:]
		}
		return sub(prog, rest, 1)
	case "gh":
		return sub(prog, rest, 2)
	case "go":
		if len(rest) > 0 && rest[0] == "mod" {
			return sub(prog, rest, 2)
		}
		return sub(prog, rest, 1)
	case "npm", "pnpm", "yarn", "bun":
		if len(rest) > 0 && (rest[0] == "run" || rest[0] == "run-script") {
			return sub(prog, append([]string{"run"}, rest[1:]...), 2)
		}
		return sub(prog, rest, 1)
	case "npx", "bunx", "pnpx":
		return sub(prog, rest, 1)
	case "cargo", "pip", "pip3", "uv", "poetry", "docker", "kubectl", "make", "terraform", "helm", "brew", "apt", "apt-get", "dotnet", "mvn", "gradle", "./gradlew", "gradlew", "composer", "bundle", "rake", "mix", "swift", "flutter", "dart", "deno", "pdm":
		return sub(prog, rest, 1)
	}
	return prog, nonFlag(rest)
}

// dropRedirections removes redirections ("2>&1", "> out.txt", "<in")
// from a command's words: they name no operand of the command.
func dropRedirections(words []string) []string {
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := strings.TrimLeft(words[i], "0123456789&")
		if !strings.HasPrefix(w, ">") && !strings.HasPrefix(w, "<") {
			out = append(out, words[i])
			continue
		}
		if strings.Trim(w, "<>&") == "" && !strings.Contains(w, "&") {
			i++ // the operator stands alone: its target is the next word
		}
	}
	return out
}

// sub names prog with up to n leading subcommand words of rest (words
// that do not start with "-"), and says whether an operand follows.
func sub(prog string, rest []string, n int) (string, bool) {
	head := prog
	for n > 0 && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		head += " " + rest[0]
		rest = rest[1:]
		n--
	}
	return head, nonFlag(rest)
}

// nonFlag reports whether words hold an argument that is not an option.
// A flag's value counts as one: the detector does not know which flags
// take a value, and needs the operand only to tell "git tag v1" from
// "git tag -l" and "npm install pkg" from "npm install".
func nonFlag(words []string) bool {
	for _, w := range words {
		if w != "" && !strings.HasPrefix(w, "-") {
			return true
		}
	}
	return false
}

// scriptEvents turns a shell script into one event per simple command
// that has a head.
func scriptEvents(script string) []Event {
	var evs []Event
	for _, words := range splitScript(script) {
		if h, op := commandHead(words); h != "" {
			evs = append(evs, Event{Head: h, Operand: op})
		}
	}
	return evs
}

// argvEvents turns a recorded argv into events: a shell invoked with -c
// or -lc (Codex's ["bash", "-lc", "…"]) or PowerShell's -Command runs a
// script, anything else is one command.
func argvEvents(argv []string) []Event {
	if len(argv) == 0 {
		return nil
	}
	switch programName(argv[0]) {
	case "bash", "sh", "zsh", "powershell", "pwsh", "cmd":
		for i := 1; i < len(argv)-1; i++ {
			switch strings.ToLower(argv[i]) {
			case "-c", "-lc", "-ic", "-command", "/c":
				return scriptEvents(strings.Join(argv[i+1:], " "))
			}
		}
	}
	if h, op := commandHead(argv); h != "" {
		return []Event{{Head: h, Operand: op}}
	}
	return nil
}
