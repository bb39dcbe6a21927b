package redact

import (
	"regexp"
	"slices"
	"strings"
)

// Home replaces a user's home directory in every output: "/home/alice/src"
// is written "~/src". The user name says who ran the agent and on which
// machine; it is not part of any procedure, and "~/src/repo" still reads
// (and, expanded by the runtime, runs) as the same path for whoever runs
// the workflow next.
const Home = "~"

// userName is the user name in a home directory: up to a separator, a
// quote, white space or the punctuation that closes a path in prose or
// code ("(see /home/alice)", "/home/alice: no such file").
const userName = `[^/\\"'\s)\],;:}>|` + "`" + `]+`

// homePath matches the home directory of a named user in the spellings
// agents' logs hold it:
//
//   - /home/NAME, /var/home/NAME and /Users/NAME;
//   - C:\Users\NAME, with forward slashes or with the doubled backslashes
//     of a string quoted inside a string, and as Git Bash and WSL write it
//     (/c/Users/NAME, /mnt/c/Users/NAME);
//   - Claude Code's project directory names, the working directory with
//     every separator turned into "-": -home-NAME-src-repo,
//     -Users-NAME-src-repo, C--Users-NAME-src. They start a path segment
//     (the string, or after a slash, a quote or white space), so that a
//     flag such as --home-dir is not one. A user name holding "-" is cut
//     at its first "-" there: the name cannot be told from the path.
//
// Each starts a path: it is the start of the string or follows a byte
// that cannot end a host name or a path segment, so that a URL's
// https://example.com/home/about is not a home directory.
//
// A home directory without a user name (/root, ~) names nobody and stays.
var (
	homePath = regexp.MustCompile(`(^|[^A-Za-z0-9._-])(?:(?:/var)?/home/` + userName +
		`|(?:/mnt)?(?:/[A-Za-z])?/Users/` + userName +
		`|[A-Za-z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)` + userName + `)`)
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
	s, n := replaceAfterPrefix(homePath, s)
	if !strings.Contains(s, "-home-") && !strings.Contains(s, "-Users-") {
		return s, n
	}
	s, k := replaceAfterPrefix(projectDir, s)
	return s, n + k
}

// replaceAfterPrefix replaces every match of re in s by Home, keeping the
// match's first group (the byte that opened the path), and returns the
// number of replacements.
func replaceAfterPrefix(re *regexp.Regexp, s string) (string, int) {
	m := re.FindAllStringSubmatchIndex(s, -1)
	if m == nil {
		return s, 0
	}
	var b strings.Builder
	last := 0
	for _, loc := range m {
		b.WriteString(s[last:loc[3]])
		b.WriteString(Home)
		last = loc[1]
	}
	b.WriteString(s[last:])
	return b.String(), len(m)
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

// genericAccounts are account names that say nothing of who ran an agent
// (build machines, containers, defaults), and are common words a trace
// uses otherwise ("npm run dev", "the user"): Users leaves them alone.
var genericAccounts = map[string]bool{
	"admin": true, "administrator": true, "app": true, "build": true, "builder": true,
	"circleci": true, "default": true, "dev": true, "developer": true, "ec2-user": true,
	"guest": true, "jenkins": true, "node": true, "public": true, "root": true,
	"runner": true, "shared": true, "test": true, "ubuntu": true, "user": true,
	"vagrant": true, "www-data": true,
}

// Users replaces the user home directories in every string of v as Homes
// does, and then every other mention of those users' names as a whole
// word ("alice" in ls -l output, in a git author, in whoami's answer) by
// Home, and returns the number of strings changed. It is for documents
// that copy what an agent saw (trace files, fixtures): a report or a
// workflow keeps bare words, which there are values a procedure needs (a
// repository owner, a database user), and only loses the paths.
//
// Names shorter than three bytes and generic account names
// (genericAccounts) are not replaced as words. Maps and slices are changed
// in place, as Homes changes them.
func Users(v any) (any, int) {
	var names []string
	seen := map[string]bool{}
	collect := func(s string) {
		if !strings.Contains(s, "home") && !strings.Contains(s, "Users") {
			return
		}
		for _, m := range homePath.FindAllString(s, -1) {
			name := m[strings.LastIndexAny(m, `/\`)+1:]
			addName(name, seen, &names)
		}
		for _, m := range projectDir.FindAllString(s, -1) {
			addName(m[strings.LastIndexByte(m, '-')+1:], seen, &names)
		}
	}
	mapStrings(v, func(s string) string { collect(s); return s })
	if len(names) == 0 {
		return Homes(v)
	}
	// Longest first, so that a name containing another is replaced whole.
	slices.SortFunc(names, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	n := 0
	v = mapStrings(v, func(s string) string {
		out, _ := HomeDirs(s)
		for _, name := range names {
			out = replaceWord(out, name)
		}
		if out != s {
			n++
		}
		return out
	})
	return v, n
}

// addName adds a user name found in a home directory to names, unless it
// is generic, too short to tell, or a placeholder ($USER, ~).
func addName(name string, seen map[string]bool, names *[]string) {
	if len(name) < 3 || seen[name] || genericAccounts[strings.ToLower(name)] || strings.ContainsAny(name, "$%{}~*?<>") {
		return
	}
	seen[name] = true
	*names = append(*names, name)
}

// replaceWord replaces every occurrence of word in s that is not part of
// a longer word (letters, digits and "_" around it) by Home.
func replaceWord(s, word string) string {
	if !strings.Contains(s, word) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, word)
		if i < 0 {
			break
		}
		end := i + len(word)
		if (i > 0 && isWordByte(s[i-1])) || (end < len(s) && isWordByte(s[end])) {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		b.WriteString(s[:i])
		b.WriteString(Home)
		s = s[end:]
	}
	b.WriteString(s)
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// mapStrings replaces every string value of v (not object keys) by
// f of it, in place, and returns v (or f(v) for a string).
func mapStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		for k, e := range x {
			x[k] = mapStrings(e, f)
		}
	case []any:
		for i, e := range x {
			x[i] = mapStrings(e, f)
		}
	}
	return v
}
