package redact

import (
	"regexp"
	"strings"
)

// Home replaces a user's home directory in every output: "/home/alice/src"
// is written "~/src". The user name says who ran the agent and on which
// machine; it is not part of any procedure, and "~/src/repo" still reads
// (and, expanded by the runtime, runs) as the same path for whoever runs
// the workflow next.
const Home = "~"

// homePath matches the home directory of a named user in the spellings
// agents' logs hold it:
//
//   - /home/NAME, /var/home/NAME and /Users/NAME;
//   - C:\Users\NAME, with forward slashes or with the doubled backslashes
//     of a string quoted inside a string;
//   - Claude Code's project directory names, the working directory with
//     every separator turned into "-": -home-NAME-src-repo,
//     -Users-NAME-src-repo, C--Users-NAME-src. They start a path segment
//     (the string, or after a slash, a quote or white space), so that a
//     flag such as --home-dir is not one. A user name holding "-" is cut
//     at its first "-" there: the name cannot be told from the path.
//
// A home directory without a user name (/root, ~) names nobody and stays.
var (
	homePath = regexp.MustCompile(`(?:/var)?/home/[^/\\"'\s]+` +
		`|/Users/[^/\\"'\s]+` +
		`|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)[^/\\"'\s]+`)
	projectDir = regexp.MustCompile(`(^|[/\\\s"'=:])(?:[A-Za-z]-)?-(?:home|Users)-[^-/\\"'\s]+`)
)

// HomeDirs returns s with every user home directory in it replaced by
// Home, and the number of replacements.
func HomeDirs(s string) (string, int) {
	// Every spelling holds "home" or "Users": most strings (ids,
	// signatures, numbers) skip the regular expressions.
	if !strings.Contains(s, "home") && !strings.Contains(s, "Users") {
		return s, 0
	}
	n := 0
	s = homePath.ReplaceAllStringFunc(s, func(string) string {
		n++
		return Home
	})
	if n == 0 && !strings.Contains(s, "-home-") && !strings.Contains(s, "-Users-") {
		return s, 0
	}
	if m := projectDir.FindAllStringSubmatchIndex(s, -1); m != nil {
		var b strings.Builder
		last := 0
		for _, loc := range m {
			// loc[3] ends the byte that opened the segment, which stays.
			b.WriteString(s[last:loc[3]])
			b.WriteString(Home)
			last = loc[1]
			n++
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	return s, n
}

// Homes replaces the user home directories in every string of v, a value
// as encoding/json decodes it (object keys are left alone: they name
// fields, and renaming one could merge two), and returns the number of
// strings changed. Maps and slices are changed in place; the result is v
// unless v itself is a string.
func Homes(v any) (any, int) {
	n := 0
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if out, k := HomeDirs(x); k > 0 {
				n++
				return out
			}
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return v
	}
	return walk(v), n
}

// Text returns s as it may leave the machine: every secret in it
// redacted as Value redacts a string, and every user home directory
// replaced by Home; and the number of replacements. It is what every
// output that is not a JSON document (a file name, a path or a message in
// a summary) goes through.
func Text(s string) (string, int) {
	s, n := redactString(s)
	s, h := HomeDirs(s)
	return s, n + h
}
