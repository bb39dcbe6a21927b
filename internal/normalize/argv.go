package normalize

import (
	"slices"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/redact"
)

// command is an argv taken apart by the table: its head, its parameters
// and the template that gives the argv back.
type command struct {
	prog     string // the program's base name
	head     string
	params   map[string]any
	tmpl     []string
	flags    map[string]bool // flags as written, without dashes; a cluster's letters each
	operands int
	// list is the key of the list parameter the last operand went to;
	// variadic and variadicKey are the name the head gives its variadic
	// operands ("module@version") and the key of their list.
	list, variadic, variadicKey string
	// windows is true when argv[0] was a Windows name of prog
	// (C:\...\git.exe, npm.cmd), which the template replaces by prog.
	windows bool
	// longNames maps the head's short flags to the long names its
	// documentation gives them, for parameter names: git commit -m is
	// the message parameter, not m.
	longNames map[string]string
}

// parseArgv takes argv apart. It needs no shell: argv is already the
// words the program receives. argv must not be empty.
func (r *Rules) parseArgv(argv []string) command {
	prog, windows := programName(argv[0])
	c := command{
		prog:    prog,
		params:  map[string]any{},
		flags:   map[string]bool{},
		windows: windows,
	}
	if windows {
		c.tmpl = append(c.tmpl, literal(prog))
	} else {
		c.tmpl = append(c.tmpl, literal(argv[0]))
	}
	headWords := []string{c.prog}
	i := 1
	if moduleRunners[c.prog] && len(argv) > 2 && argv[1] == "-m" && isSubcommand(argv[2]) {
		headWords = append(headWords, "-m", argv[2])
		c.tmpl = append(c.tmpl, "-m", literal(argv[2]))
		i = 3
	}
	// Subcommands, with the program's own value flags allowed before
	// them (git -C DIR status).
	for {
		depth := r.heads[strings.Join(headWords, " ")]
		if depth <= 0 || i >= len(argv) {
			break
		}
		took := 0
		for took < depth && i < len(argv) {
			w := argv[i]
			if strings.HasPrefix(w, "-") && len(headWords) == 1 {
				if n := r.globalFlag(&c, c.prog, argv, i); n > 0 {
					i += n
					continue
				}
			}
			if !isSubcommand(w) {
				break
			}
			headWords = append(headWords, w)
			c.tmpl = append(c.tmpl, literal(w))
			i++
			took++
		}
		if took < depth {
			break
		}
	}
	c.head = strings.Join(headWords, " ")
	c.longNames = shortFlagNames[c.head]
	flags := r.flagTable(c.head, c.prog)
	names := r.operandNames[c.head]
	if names == nil && len(headWords) == 1 {
		names = r.operandNames[c.prog]
	}
	dashLong := singleDashLong[c.prog]
	list := "args"
	if r.pathOperands[c.head] || c.head == c.prog && r.pathOperands[c.prog] {
		list = "paths"
	}
	endOpts := false
	for ; i < len(argv); i++ {
		w := argv[i]
		if endOpts || w == "-" || !strings.HasPrefix(w, "-") {
			c.operand(w, names, list)
			continue
		}
		if selectorFlags[c.head][w] {
			c.operand(w, nil, list)
			continue
		}
		if w == "--" {
			endOpts = true
			c.tmpl = append(c.tmpl, "--")
			continue
		}
		i += c.flag(argv, i, flags, dashLong)
	}
	c.oneVariadic()
	return c
}

// globalFlag reads a flag of the program itself placed before its
// subcommand (git -C DIR, git -c k=v, git --no-pager) and returns how
// many words it took, or 0 when w is no such flag.
func (r *Rules) globalFlag(c *command, prog string, argv []string, i int) int {
	name, _, hasValue := strings.Cut(strings.TrimLeft(argv[i], "-"), "=")
	if !hasValue && !r.valueFlags[prog][name] && !strings.HasPrefix(argv[i], "--") {
		return 0
	}
	return 1 + c.flag(argv, i, r.valueFlags[prog], singleDashLong[prog])
}

// flagTable is the value flags of a head: its own entry, else its
// program's.
func (r *Rules) flagTable(head, prog string) map[string]bool {
	if f, ok := r.valueFlags[head]; ok {
		return f
	}
	return r.valueFlags[prog]
}

// flag reads the flag argv[i] and returns how many words after it it
// took as its value (0 or 1).
func (c *command) flag(argv []string, i int, values map[string]bool, dashLong bool) int {
	w := argv[i]
	long := strings.HasPrefix(w, "--")
	body := strings.TrimLeft(w, "-")
	dashes := w[:len(w)-len(body)]
	if name, value, ok := strings.Cut(body, "="); ok && name != "" {
		c.flags[name] = true
		key := c.key(credentialName(name, w))
		c.params[key] = value
		c.tmpl = append(c.tmpl, literal(dashes+name+"=")+"{"+key+"}")
		return 0
	}
	hasNext := i+1 < len(argv)
	switch {
	case body == "":
		c.tmpl = append(c.tmpl, literal(w))
		return 0
	case !long && isDigits(body):
		// head -5, git log -3: a count.
		key := c.key("n")
		c.params[key] = body
		c.tmpl = append(c.tmpl, "-{"+key+"}")
		return 0
	case hasNext && (values[body] || (long || len(body) == 1) && redact.SensitiveKey(body) && !strings.HasPrefix(argv[i+1], "-")):
		// A flag the table does not know to take a value but whose
		// name says it holds a credential (vault login --token X)
		// takes the next word: read as a boolean, the credential would
		// be a literal operand of the workflow.
		c.flags[body] = true
		key := c.key(credentialName(body, w+" "+argv[i+1]))
		c.params[key] = argv[i+1]
		c.tmpl = append(c.tmpl, literal(w), "{"+key+"}")
		return 1
	case long || len(body) == 1 || dashLong || values[body]:
		c.flags[body] = true
		c.params[c.key(body)] = true
		c.tmpl = append(c.tmpl, literal(w))
		return 0
	case values[body[:1]] && !isLetters(body[1:]) || !long && credentialName(body[:1], w) != body[:1]:
		// -n5, -j4: a short flag with its value attached; also a
		// credential attached to a flag the table does not know to
		// take a value (mysql -pPASSWORD).
		c.flags[body[:1]] = true
		key := c.key(credentialName(body[:1], w))
		c.params[key] = body[1:]
		c.tmpl = append(c.tmpl, literal("-"+body[:1])+"{"+key+"}")
		return 0
	case isLetters(body):
		// A cluster of short flags (-la, -am MSG); the last may take
		// the next word as its value.
		for j := 0; j < len(body); j++ {
			c.flags[body[j:j+1]] = true
		}
		last := body[len(body)-1:]
		for j := 0; j < len(body)-1; j++ {
			c.params[c.key(body[j:j+1])] = true
		}
		c.tmpl = append(c.tmpl, literal(w))
		if values[last] && hasNext {
			key := c.key(last)
			c.params[key] = argv[i+1]
			c.tmpl = append(c.tmpl, "{"+key+"}")
			return 1
		}
		c.params[c.key(last)] = true
		return 0
	default:
		c.flags[body] = true
		c.params[c.key(body)] = true
		c.tmpl = append(c.tmpl, literal(w))
		return 0
	}
}

// credentialName is the name of the parameter for the value of flag
// name, where text is the flag's word, with its value attached or after
// a blank (-pPASSWORD, --user=u:pw, -u u:pw): name with "_password" when
// the redactor finds a credential in text and name does not already say
// so (SensitiveKey), else name. Apart from its flag, the value (u:pw,
// PASSWORD) is not recognisably a credential; under such a name the
// redactor and the miner treat it as the secret it is.
//
// A value of more than one line is text someone wrote (a commit message,
// a pull request's body), never a credential as a whole, even when it
// holds one: Claude Code ends its commit messages with a session link the
// redactor takes for a credential. Named as one, every commit message of
// such a history would be a secret, and those commits a step of another
// signature than the ones without the link. The secret in it is redacted
// where it stands, as every string of a trace is.
func credentialName(name, text string) string {
	if redact.SensitiveKey(name) || strings.ContainsAny(text, "\n\r") {
		return name
	}
	if _, secret := redact.Secret(text); !secret {
		return name
	}
	return name + "_password"
}

// operand records the operand w: under its name from names when the head
// names its operands, else as one more element of the list parameter list
// (args or paths, or the plural of the head's variadic name: packages).
// Operands in a row share one list, whose placeholder
// {name...} stands for all of them; an operand after a flag that follows
// the list starts a second list (list_2), so that the template still gives
// back the argv in its order.
func (c *command) operand(w string, names []string, list string) {
	c.operands++
	n := c.operands
	if n <= len(names) && !strings.HasSuffix(names[n-1], "...") {
		c.named(w, names[n-1])
		return
	}
	if len(names) > 0 && strings.HasSuffix(names[len(names)-1], "...") {
		list = plural(strings.TrimSuffix(names[len(names)-1], "..."))
	}
	if c.list != "" && c.tmpl[len(c.tmpl)-1] == "{"+c.list+"...}" {
		c.params[c.list] = append(c.params[c.list].([]any), w)
		return
	}
	key := c.key(list)
	c.params[key] = []any{w}
	c.tmpl = append(c.tmpl, "{"+key+"...}")
	c.list = key
	if v := names; c.variadic == "" && len(v) > 0 && strings.HasSuffix(v[len(v)-1], "...") && strings.ContainsAny(v[len(v)-1], "@=") {
		c.variadic, c.variadicKey = strings.TrimSuffix(names[len(names)-1], "..."), key
	}
}

// named records the operand w under name, splitting it at the separator a
// name of the form "a@b" or "a==b" gives.
func (c *command) named(w, name string) {
	for _, sep := range []string{"@", "=="} {
		a, b, ok := strings.Cut(name, sep)
		if !ok {
			continue
		}
		// Split at the last separator that is not the first byte, so that
		// a scoped npm package (@types/node@20) keeps its "@".
		if at := strings.LastIndex(w, sep); at > 0 {
			ka := c.key(a)
			kb := c.key(b)
			c.params[ka] = w[:at]
			c.params[kb] = w[at+len(sep):]
			c.tmpl = append(c.tmpl, "{"+ka+"}"+literal(sep)+"{"+kb+"}")
			return
		}
		name = a
		break
	}
	key := c.key(name)
	c.params[key] = w
	c.tmpl = append(c.tmpl, "{"+key+"}")
}

// oneVariadic undoes the list of a head whose variadic operands are split
// in two ("module@version...") when there is exactly one of them:
// "go get golang.org/x/net@v0.33.0" is the parameters module and version,
// as a person would name them, not a list of one. Operands of any other
// name stay a list however many there are (make's targets), so that the
// step's parameter keys do not depend on their count.
func (c *command) oneVariadic() {
	if c.variadic == "" {
		return
	}
	elems, _ := c.params[c.variadicKey].([]any)
	if len(elems) != 1 || c.params[c.variadicKey+"_2"] != nil {
		return
	}
	at := slices.Index(c.tmpl, "{"+c.variadicKey+"...}")
	if at < 0 {
		return
	}
	delete(c.params, c.variadicKey)
	tail := slices.Clone(c.tmpl[at+1:])
	c.tmpl = c.tmpl[:at]
	c.named(elems[0].(string), c.variadic)
	c.tmpl = append(c.tmpl, tail...)
}

// plural names the list of a head's variadic operands after the name of
// one: module → modules.
func plural(name string) string {
	name, _, _ = strings.Cut(name, "@")
	name, _, _ = strings.Cut(name, "==")
	return name + "s"
}

// key turns a flag or operand name into a parameter key that the argv
// template can name: dashes and dots become "_", anything else that is not
// a letter, digit or "_" is dropped, and a key already taken gets _2, _3….
func (c *command) key(name string) string {
	if long, ok := c.longNames[name]; ok {
		name = long
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		ch := name[i]
		switch {
		case ch == '-' || ch == '.' || ch == '_':
			b.WriteByte('_')
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
			b.WriteByte(ch)
		}
	}
	k := strings.Trim(b.String(), "_")
	if k == "" {
		k = "flag"
	}
	if k[0] >= '0' && k[0] <= '9' {
		k = "n" + k
	}
	if _, taken := c.params[k]; !taken {
		return k
	}
	for n := 2; ; n++ {
		kn := k + "_" + strconv.Itoa(n)
		if _, taken := c.params[kn]; !taken {
			return kn
		}
	}
}

// literal escapes s for an argv template, where braces are placeholders:
// "{" and "}" are doubled.
func literal(s string) string {
	if !strings.ContainsAny(s, "{}") {
		return s
	}
	return braces.Replace(s)
}

// braces doubles the braces of a literal. Building a Replacer costs far
// more than replacing with it, and one is safe for concurrent use.
var braces = strings.NewReplacer("{", "{{", "}", "}}")

// isSubcommand reports whether w can be a subcommand word: a letter, then
// letters, digits, ".", "_", ":" or "-".
func isSubcommand(w string) bool {
	if w == "" || !isLetter(w[0]) {
		return false
	}
	for i := 1; i < len(w); i++ {
		ch := w[i]
		if !isLetter(ch) && (ch < '0' || ch > '9') && ch != '.' && ch != '_' && ch != ':' && ch != '-' {
			return false
		}
	}
	return true
}

func isLetter(ch byte) bool { return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' }

func isLetters(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// readOnly reports whether c only reads: its head or program is an
// observation, and it does not use the flags or operands that make a
// read-only program write (sed -i, find -delete, git branch NAME).
func (r *Rules) readOnly(c command) bool {
	if r.toolCalls[c.head] || r.toolCalls[c.prog] {
		return false
	}
	if c.head == c.prog && readOnlyCmdlet(c.prog) {
		return true
	}
	if c.head == c.prog && isProbe(c) {
		return true
	}
	if !r.observations[c.head] && !(c.head == c.prog && r.observations[c.prog]) {
		return false
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if c.flags[n] {
				return true
			}
		}
		return false
	}
	switch c.head {
	case "sed":
		for f := range c.flags {
			if f == "in-place" || strings.HasPrefix(f, "i") || (isLetters(f) && strings.Contains(f, "i")) {
				return false
			}
		}
	case "find":
		return !has("delete", "exec", "execdir", "ok", "okdir", "fprint", "fprint0", "fprintf", "fls")
	case "sort":
		return !has("o", "output")
	case "awk":
		return !has("i")
	case "git branch":
		return c.operands == 0 && !has("d", "D", "m", "M", "c", "C", "delete", "move", "copy", "u", "set-upstream-to", "unset-upstream", "f", "force")
	case "git remote":
		return c.operands == 0
	case "git tag":
		return c.operands == 0
	}
	return true
}

// probeFlags are the flags that, given alone, make a program print its
// version or its usage and exit: node --version, npm -v, python3 -V,
// gh --help, terraform -h.
var probeFlags = wordSet(`version help v V h`)

// isProbe reports whether c runs its program with one of probeFlags and
// nothing else, which prints and changes nothing whatever the program.
// Agents probe their tools this way, and a probe taken for a tool call
// is mined as a procedure of its own (node --version, npm --version).
func isProbe(c command) bool {
	if c.operands != 0 || len(c.flags) != 1 || len(c.tmpl) != 2 {
		return false
	}
	for f := range c.flags {
		return probeFlags[f]
	}
	return false
}

// stdinText gives argv with the heredoc text standing for its input: when
// the command reads that input as the text of a flag (git commit -F -,
// gh pr create --body-file -), the pair becomes the flag that takes the
// text inline (git commit -m TEXT), which is the same command by the
// tool's documentation. Agents write a commit message both ways; read as
// the same flag, both are one step with one argv template, and the
// template runs without a heredoc. ok is false when argv reads no such
// flag from standard input, once: the heredoc is then input the template
// cannot carry.
func (r *Rules) stdinText(argv []string, text string) (out []string, ok bool) {
	cmd := r.parseArgv(argv)
	flags, known := stdinTextFlags[cmd.head]
	if !known {
		return nil, false
	}
	at, width := -1, 0
	for i := len(strings.Fields(cmd.head)); i < len(argv); i++ {
		w := argv[i]
		if w == "--" {
			break
		}
		n := 0
		switch {
		case slices.Contains(flags.file, w) && i+1 < len(argv) && argv[i+1] == "-":
			n = 2
		case strings.HasPrefix(w, "--") && strings.HasSuffix(w, "=-") && slices.Contains(flags.file, strings.TrimSuffix(w, "=-")):
			n = 1
		}
		if n == 0 {
			continue
		}
		if at >= 0 {
			return nil, false
		}
		at, width = i, n
		i += n - 1
	}
	if at < 0 {
		return nil, false
	}
	out = slices.Concat(argv[:at], []string{flags.inline, text}, argv[at+width:])
	return out, true
}
