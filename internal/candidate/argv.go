package candidate

import (
	"path"
	"strings"
)

// Problem codes about a step's argv template.
const (
	// CodeDivergentArgv: the examples of a step ran different argv
	// templates (or only some recorded one), so the step has none.
	CodeDivergentArgv = "divergent_argv"
	// CodeInvalidArgv: a recorded argv template is not a non-empty list
	// of strings whose placeholders name the action's parameters.
	CodeInvalidArgv = "invalid_argv"
	// CodeUnparsedCommand: the log holds a step's shell command only as
	// text that no argv template reads (a variable, a substitution, a
	// loop), so the step has none.
	CodeUnparsedCommand = "unparsed_command"
)

// ArgvPlaceholders returns the placeholders of one element of an argv
// template, in order, as written between the braces: "module" for
// {module}, "secret:TOKEN" for {secret:TOKEN}. It reads the element by the
// command-template rules the runtime expands it with: "{{" and "}}" are
// literal braces; {name} is a placeholder when name is an ASCII identifier
// ([A-Za-z_][A-Za-z0-9_]*, keywords included); {secret:ID} names a
// secret; an element that is exactly {name...} is a list placeholder
// (see ArgvList) and returns name; any other text in braces is literal.
func ArgvPlaceholders(elem string) []string {
	if name, ok := ArgvList(elem); ok {
		return []string{name}
	}
	var names []string
	for i := 0; i < len(elem); {
		switch {
		case strings.HasPrefix(elem[i:], "{{"), strings.HasPrefix(elem[i:], "}}"):
			i += 2
			continue
		case elem[i] == '{':
			end := strings.IndexByte(elem[i:], '}')
			if end <= 0 {
				break
			}
			key := elem[i+1 : i+end]
			if id, ok := strings.CutPrefix(key, "secret:"); (ok && secretID(id)) || asciiIdent(key) {
				names = append(names, key)
				i += end + 1
				continue
			}
		}
		i++
	}
	return names
}

// ArgvList reports whether elem is a list placeholder, an element that is
// exactly "{name...}" with name an ASCII identifier, and returns name. It
// stands for the elements of the list argument name, one argv element
// each, in order, and for nothing when the list is empty: the variadic
// operands of a command (git add {paths...}), so that a step's template
// is the same however many files one run names. Only a whole element is
// a list: "--file={paths...}" is literal text.
func ArgvList(elem string) (string, bool) {
	name, ok := strings.CutPrefix(elem, "{")
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, "...}")
	if !ok || !asciiIdent(name) {
		return "", false
	}
	return name, true
}

// ArgvProgram returns the program an argv template runs, as capabilities
// name it: the base name of its first element ("git" for "/usr/bin/git").
// The capability a step running it needs is "exec:" + ArgvProgram(argv).
func ArgvProgram(argv []string) string {
	if len(argv) == 0 || argv[0] == "" {
		return ""
	}
	return path.Base(strings.ReplaceAll(argv[0], "\\", "/"))
}

func asciiIdent(s string) bool {
	if s == "" || isDigit(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

// secretID mirrors the runtime's logical secret ids: an identifier that
// may also hold '.' and '-' after its first character.
func secretID(s string) bool {
	if s == "" || isDigit(s[0]) || s[0] == '.' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLower(c) && !isUpper(c) && !isDigit(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}
