package normalize

import (
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// maxShellDepth bounds how many shells may wrap one another
// (bash -c "sh -c '…'"); deeper scripts are left unparsed.
const maxShellDepth = 8

// part is one command of a shell script, before it becomes an action.
type part struct {
	raw      string   // the part's text in the script, credentials blanked
	argv     []string // its words; nil when unparsed
	prog     string   // the program's base name, when known
	unparsed bool
	prefix   []string // the literal words before the first that is not
	words    int      // how many words the command has
	cd       bool     // a cd, which becomes cwd metadata rather than a step
	patch    string   // the body of an apply_patch heredoc
	cwd      string
	env      map[string]any
	redirs   []string
	writes   []string
	filters  []string
}

// walker collects the parts of one script.
type walker struct {
	rules *Rules
	src   string
	depth int
	cwd   string
	env   map[string]any // assignments and exports seen so far
	blank [][2]int       // byte ranges of credential values in src
	parts []part
}

// shellActions converts a shell tool's call.
func (r *Rules) shellActions(c Call) []trace.Action {
	cwd, _ := c.Args["workdir"].(string)
	if cwd == "" {
		cwd, _ = c.Args["cwd"].(string)
	}
	cmd, ok := c.Args["command"]
	if !ok {
		cmd = c.Args["cmd"]
	}
	var parts []part
	switch cmd := cmd.(type) {
	case string:
		parts = r.parseScript(cmd, cwd, nil, 0)
	case []any:
		argv := make([]string, 0, len(cmd))
		for _, w := range cmd {
			s, ok := w.(string)
			if !ok {
				return nil
			}
			argv = append(argv, s)
		}
		parts = r.argvParts(argv, cwd)
	case []string:
		parts = r.argvParts(cmd, cwd)
	}
	var acts []trace.Action
	for _, p := range parts {
		acts = append(acts, r.partActions(p)...)
	}
	// Claude Code asks the model to say what a command is for; it names
	// the step better than the command does.
	if desc, _ := c.Args["description"].(string); desc != "" {
		for i := range acts {
			if acts[i].Metadata == nil {
				acts[i].Metadata = map[string]any{}
			}
			acts[i].Metadata["description"] = desc
		}
	}
	return acts
}

// argvParts handles a command recorded as an argv list, as Codex does: a
// shell wrapper's script is parsed, apply_patch's argument is a patch, any
// other argv is one command as it is.
func (r *Rules) argvParts(argv []string, cwd string) []part {
	if len(argv) == 0 {
		return nil
	}
	if script, ok := shellScript(argv); ok {
		return r.parseScript(script, cwd, nil, 1)
	}
	raw := quoteArgv(argv)
	prog, _ := programName(argv[0])
	if prog == "apply_patch" && len(argv) == 2 {
		return []part{{raw: raw, prog: "apply_patch", argv: argv, patch: argv[1], cwd: cwd}}
	}
	return []part{{raw: raw, argv: argv, prog: prog, cwd: cwd}}
}

// shellScript returns the script of "bash -lc SCRIPT" and its kin: a
// shell, options, one of them containing c, then the script; or of
// "powershell -Command SCRIPT" (see powershellScript).
func shellScript(argv []string) (string, bool) {
	if script, ok := powershellScript(argv); ok {
		return script, true
	}
	if len(argv) < 3 {
		return "", false
	}
	if prog, _ := programName(argv[0]); !shellWrappers[prog] {
		return "", false
	}
	for i := 1; i < len(argv)-1; i++ {
		w := argv[i]
		if !strings.HasPrefix(w, "-") || strings.HasPrefix(w, "--") {
			return "", false
		}
		if strings.Contains(w, "c") {
			// Words after the script are $0, $1, … of the script; a
			// wrapper with them is not unwrapped, since the script
			// depends on them.
			if i+2 != len(argv) {
				return "", false
			}
			return argv[i+1], true
		}
	}
	return "", false
}

func quoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, w := range argv {
		s, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			s = w
		}
		q[i] = s
	}
	return strings.Join(q, " ")
}

// parseScript splits a shell script into parts. A script that does not
// parse is one unparsed part named after its first plain word.
func (r *Rules) parseScript(src, cwd string, env map[string]any, depth int) []part {
	f, err := r.scripts.parse(src)
	if err != nil || depth > maxShellDepth {
		return []part{{raw: src, prog: guessProg(src), unparsed: true, cwd: cwd}}
	}
	w := &walker{rules: r, src: src, depth: depth, cwd: cwd, env: env}
	for _, s := range f.Stmts {
		w.stmt(s)
	}
	// A cd is a step only when it is all the script does.
	parts := slices.DeleteFunc(slices.Clone(w.parts), func(p part) bool { return p.cd })
	if len(parts) == 0 && len(w.parts) > 0 {
		parts = w.parts[len(w.parts)-1:]
	}
	return parts
}

// scriptCache holds the syntax trees of the shell scripts parsed last,
// by their text. Agents run the same commands again and again (git
// status, go test ./..., the build), and parsing a command cost more than
// everything else normalizing its call does. The trees are only read
// after they are parsed, so one may be used by several decoders at once.
//
// The cache is bounded like the string tables of trace.Parser: when it
// holds maxCachedScripts scripts it is emptied, and the frequent commands
// come back within a few sessions. Long scripts (heredocs, multi-line
// programs) rarely repeat and are not kept.
type scriptCache struct {
	mu      sync.Mutex
	scripts map[string]parsedScript
}

type parsedScript struct {
	file *syntax.File
	err  error
}

const (
	maxCachedScripts   = 4096
	maxCachedScriptLen = 512
)

// parse returns the syntax tree of src, from the cache when it is there.
// A nil cache parses every time.
func (c *scriptCache) parse(src string) (*syntax.File, error) {
	if c == nil || len(src) > maxCachedScriptLen {
		return parseShell(src)
	}
	c.mu.Lock()
	ps, ok := c.scripts[src]
	c.mu.Unlock()
	if ok {
		return ps.file, ps.err
	}
	f, err := parseShell(src)
	c.mu.Lock()
	if c.scripts == nil || len(c.scripts) >= maxCachedScripts {
		c.scripts = make(map[string]parsedScript)
	}
	c.scripts[src] = parsedScript{f, err}
	c.mu.Unlock()
	return f, err
}

// shellParsers holds the shell parsers of parseShell. A syntax.Parser is
// a large value with buffers that a parse grows; making one per command
// cost more than parsing a short command. Parse resets it, and the File it
// returns does not share memory with it, so one may be reused as soon as
// Parse returns, also while the File is in use (a nested bash -c).
var shellParsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// parseShell parses src as a bash script.
func parseShell(src string) (*syntax.File, error) {
	p := shellParsers.Get().(*syntax.Parser)
	defer shellParsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}

// guessProg names the program of a command the parser rejected: its
// first word, if that is a plain name or path.
func guessProg(src string) string {
	s := strings.TrimLeft(src, " \t\n")
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._/-+", r))
	})
	if end < 0 {
		end = len(s)
	}
	if end < len(s) && !strings.ContainsRune(" \t\n;&|", rune(s[end])) {
		return ""
	}
	prog := path.Base(s[:end])
	if shellKeywords[prog] {
		return ""
	}
	if prog == "." || prog == "/" || !isSubcommand(prog) && !strings.ContainsAny(prog[:1], "_") {
		return ""
	}
	return prog
}

var shellKeywords = wordSet(`if then else elif fi for while until do done case esac function select in time coproc`)

// text returns the script between two offsets with credential values
// blanked.
func (w *walker) text(start, end uint) string {
	if int(end) > len(w.src) || start > end {
		return w.src
	}
	var b strings.Builder
	at := int(start)
	for _, r := range w.blank {
		if r[0] < at || r[1] > int(end) {
			continue
		}
		b.WriteString(w.src[at:r[0]])
		b.WriteString("[redacted]")
		at = r[1]
	}
	b.WriteString(w.src[at:end])
	return b.String()
}

// stmtText is the text of a statement without its terminating ";" or
// "&" but with the bodies of its heredocs, which follow the line the
// statement is on.
func (w *walker) stmtText(s *syntax.Stmt) string {
	end := s.End().Offset()
	if s.Semicolon.IsValid() && s.Semicolon.Offset() < end && s.Semicolon.Offset() >= s.Pos().Offset() {
		end = s.Semicolon.Offset()
	}
	for _, r := range s.Redirs {
		if r.Hdoc == nil || r.Hdoc.End().Offset() <= end {
			continue
		}
		// The body ends before the line holding the delimiter.
		e := int(r.Hdoc.End().Offset())
		if e > len(w.src) {
			e = len(w.src)
		}
		if nl := strings.IndexByte(w.src[e:], '\n'); nl >= 0 {
			e += nl
		} else {
			e = len(w.src)
		}
		end = uint(e)
	}
	return strings.TrimRight(w.text(s.Pos().Offset(), end), " \t\n")
}

func (w *walker) unparsed(s *syntax.Stmt, prog string) {
	w.parts = append(w.parts, part{raw: w.stmtText(s), prog: prog, unparsed: true, cwd: w.cwd, env: w.envCopy()})
}

func (w *walker) envCopy() map[string]any {
	if len(w.env) == 0 {
		return nil
	}
	m := make(map[string]any, len(w.env))
	for k, v := range w.env {
		m[k] = v
	}
	return m
}

func (w *walker) stmt(s *syntax.Stmt) {
	switch x := s.Cmd.(type) {
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.AndStmt, syntax.OrStmt:
			w.stmt(x.X)
			w.stmt(x.Y)
		default:
			w.pipeline(x)
		}
	case *syntax.CallExpr:
		w.call(s, x)
	case *syntax.TimeClause:
		if x.Stmt != nil {
			w.stmt(x.Stmt)
		}
	case *syntax.DeclClause:
		if x.Variant.Value != "export" {
			w.unparsed(s, "")
			return
		}
		for _, a := range x.Args {
			w.assign(a)
		}
	default:
		w.unparsed(s, "")
	}
}

// pipeline adds the stages of a pipeline: the first always, a later one
// as the previous part's filter when it only shapes text.
func (w *walker) pipeline(x *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(x.X)
	flatten(x.Y)
	for i, s := range stages {
		if i > 0 && len(w.parts) > 0 && w.isFilter(s) {
			p := &w.parts[len(w.parts)-1]
			p.filters = append(p.filters, w.stmtText(s))
			continue
		}
		w.stmt(s)
	}
}

// isFilter reports whether a pipeline stage is a plain filter command
// that writes no file.
func (w *walker) isFilter(s *syntax.Stmt) bool {
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Args) == 0 || len(ce.Assigns) > 0 {
		return false
	}
	for _, r := range s.Redirs {
		if r.Op != syntax.DplOut {
			return false
		}
	}
	argv, ok := words(ce.Args)
	if !ok {
		return false
	}
	prog, _ := programName(argv[0])
	if readOnlyCmdlet(prog) {
		// Select-String, Where-Object, Format-Table: PowerShell's
		// filters.
		return true
	}
	if !w.rules.filters[prog] {
		return false
	}
	if prog == "sed" || prog == "sort" || prog == "awk" {
		return w.rules.readOnly(w.rules.parseArgv(argv))
	}
	return true
}

func (w *walker) assign(a *syntax.Assign) {
	if a.Name == nil {
		return
	}
	if w.env == nil {
		w.env = map[string]any{}
	}
	name := a.Name.Value
	v, ok := wordLiteral(a.Value)
	switch {
	case credential(name):
		if a.Value != nil {
			w.blank = append(w.blank, [2]int{int(a.Value.Pos().Offset()), int(a.Value.End().Offset())})
		}
		w.env[name] = nil
	case ok && a.Array == nil && a.Index == nil:
		w.env[name] = v
	default:
		w.env[name] = nil
	}
}

// credential reports whether an environment variable's name says its
// value is a secret: one of its "_"-separated words is a credential word
// (GH_TOKEN, AWS_SECRET_ACCESS_KEY, NPM_AUTH), or ends in one that is
// seldom a suffix of anything else (PGPASSWORD, GITHUBTOKEN). GIT_AUTHOR_NAME
// is not one.
func credential(name string) bool {
	for _, w := range strings.Split(strings.ToUpper(name), "_") {
		if credentialWords[w] {
			return true
		}
		for _, suffix := range credentialSuffixes {
			if strings.HasSuffix(w, suffix) {
				return true
			}
		}
	}
	return false
}

func (w *walker) call(s *syntax.Stmt, ce *syntax.CallExpr) {
	outer := w.env
	if len(ce.Args) > 0 && len(ce.Assigns) > 0 {
		// Assignments before a command apply to it alone.
		w.env = w.envCopy()
	}
	for _, a := range ce.Assigns {
		w.assign(a)
	}
	if len(ce.Args) == 0 {
		if len(s.Redirs) > 0 {
			w.unparsed(s, "")
		}
		return
	}
	defer func() {
		if len(ce.Assigns) > 0 {
			w.env = outer
		}
	}()
	argv, ok := words(ce.Args)
	p := part{raw: w.stmtText(s), argv: argv, cwd: w.cwd, env: w.envCopy(), words: len(ce.Args)}
	// The literal words before the first that is not: enough, most
	// often, to name an unparsed command by its head.
	for _, a := range ce.Args {
		lit, ok := wordLiteral(a)
		if !ok {
			break
		}
		p.prefix = append(p.prefix, lit)
	}
	prog := ""
	if len(p.prefix) > 0 {
		prog, _ = programName(p.prefix[0])
	}
	p.prog = prog
	// A redirection the walker cannot read, or a heredoc (whose body is
	// input the argv template cannot carry), leaves the part unparsed; its
	// file writes are still side effects.
	plain := ok
	stdin, heredocs := "", 0
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			heredocs++
			if body, ok := heredoc(r.Hdoc); ok && prog == "apply_patch" {
				p.patch = body
			} else if body, ok := literalHeredoc(r); ok && r.N == nil && heredocs == 1 {
				stdin = body
			} else {
				plain = false
			}
			continue
		case syntax.WordHdoc:
			plain = false
			continue
		}
		target, ok := wordLiteral(r.Word)
		if !ok {
			plain = false
			continue
		}
		n := ""
		if r.N != nil {
			n = r.N.Value
		}
		p.redirs = append(p.redirs, n+r.Op.String()+target)
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			if target != "/dev/null" && target != "/dev/stdout" && target != "/dev/stderr" {
				p.writes = append(p.writes, target)
			}
		}
	}
	if plain && heredocs > 0 && p.patch == "" {
		// A heredoc is input the argv template cannot carry, unless the
		// command reads it as the text a flag of its own could give.
		p.argv, plain = w.rules.stdinText(argv, stdin)
	}
	if !plain {
		p.argv, p.unparsed, p.patch = nil, true, ""
		w.parts = append(w.parts, p)
		return
	}
	if script, ok := shellScript(argv); ok && len(p.redirs) == 0 {
		w.parts = append(w.parts, w.rules.parseScript(script, w.cwd, w.envCopy(), w.depth+1)...)
		return
	}
	if prog == "cd" && len(argv) <= 2 && len(p.redirs) == 0 {
		dir := "~"
		if len(argv) == 2 {
			dir = argv[1]
		}
		if w.cwd != "" && !strings.HasPrefix(dir, "/") && !strings.HasPrefix(dir, "~") && dir != "-" {
			dir = path.Join(w.cwd, dir)
		}
		w.cwd = dir
		p.cd = true
	}
	w.parts = append(w.parts, p)
}

// heredoc returns the body of a heredoc that expands nothing.
func heredoc(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(lit.Value)
	}
	return b.String(), true
}

// words returns the literal values of ws, or false when one of them
// depends on the shell's state (an expansion or a substitution).
func words(ws []*syntax.Word) ([]string, bool) {
	out := make([]string, len(ws))
	for i, w := range ws {
		s, ok := wordLiteral(w)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// wordLiteral is the value of a word made only of literal text and
// quotes, with quotes and escapes removed as the shell removes them.
func wordLiteral(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			unescape(&b, p.Value, false)
		case *syntax.SglQuoted:
			if !p.Dollar {
				b.WriteString(p.Value)
				continue
			}
			// $'…' holds C-style escapes, decoded as bash does.
			v, _, err := expand.Format(nil, p.Value, nil)
			if err != nil {
				return "", false
			}
			v, _, _ = strings.Cut(v, "\x00")
			b.WriteString(v)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					unescape(&b, q.Value, true)
				case *syntax.CmdSubst:
					body, ok := catHeredoc(q)
					if !ok {
						return "", false
					}
					b.WriteString(body)
				default:
					return "", false
				}
			}
		case *syntax.CmdSubst:
			// Unquoted, the result would be split into fields.
			return "", false
		default:
			return "", false
		}
	}
	return b.String(), true
}

// catHeredoc returns the text of "$(cat <<'EOF' … EOF)", the way agents
// pass a multi-line commit message or PR body: a heredoc that expands
// nothing, printed by cat, is a literal string, less the trailing newlines
// that command substitution removes.
func catHeredoc(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 || cs.Backquotes {
		return "", false
	}
	s := cs.Stmts[0]
	ce, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(ce.Assigns) > 0 || len(ce.Args) != 1 || len(s.Redirs) != 1 || s.Negated || s.Background {
		return "", false
	}
	if prog, ok := wordLiteral(ce.Args[0]); !ok || prog != "cat" {
		return "", false
	}
	r := s.Redirs[0]
	if r.Op != syntax.Hdoc || r.N != nil {
		return "", false
	}
	return literalHeredoc(r)
}

// literalHeredoc returns the text a heredoc gives its command when that
// text is its body as written, less the trailing newlines (a commit
// message or a pull request's body loses them either way): a body that
// expands nothing, after a quoted delimiter or with none of the
// characters an unquoted one would expand.
func literalHeredoc(r *syntax.Redirect) (string, bool) {
	if r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc || r.Word == nil {
		return "", false
	}
	body, ok := heredoc(r.Hdoc)
	if !ok {
		return "", false
	}
	quoted := false
	for _, p := range r.Word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.Contains(p.Value, "\\")
		}
	}
	// An unquoted delimiter makes the body subject to expansion and
	// escapes; without any of their characters it reads the same.
	if !quoted && strings.ContainsAny(body, "\\$`") {
		return "", false
	}
	return strings.TrimRight(body, "\n"), true
}

// unescape writes s with the shell's backslash escapes removed: outside
// quotes a backslash quotes any character, inside double quotes only
// $, `, ", \ and a newline; an escaped newline disappears.
func unescape(b *strings.Builder, s string, dquoted bool) {
	if !strings.Contains(s, "\\") {
		b.WriteString(s)
		return
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			n := s[i+1]
			if !dquoted || strings.IndexByte("$`\"\\\n", n) >= 0 {
				i++
				if n != '\n' {
					b.WriteByte(n)
				}
				continue
			}
		}
		b.WriteByte(c)
	}
}

// partActions converts one part of a script.
func (r *Rules) partActions(p part) []trace.Action {
	if p.patch != "" {
		return patchActions(p.patch, p.raw, p.cwd)
	}
	md := map[string]any{"command": p.raw}
	if p.cwd != "" {
		md["cwd"] = p.cwd
	}
	if len(p.env) > 0 {
		md["env"] = p.env
	}
	if len(p.redirs) > 0 {
		md["redirects"] = strs(p.redirs)
	}
	if len(p.filters) > 0 {
		md["filters"] = strs(p.filters)
	}
	a := trace.Action{Kind: trace.KindToolCall, Metadata: md}
	if p.unparsed || len(p.argv) == 0 {
		md["unparsed"] = true
		switch {
		case len(p.prefix) > 0:
			// Named by the head of its literal words; the words that
			// are not literal count as operands, so that a read-only
			// head that writes given an operand (git branch NAME) is not
			// taken for an observation.
			cmd := r.parseArgv(p.prefix)
			cmd.operands += p.words - len(p.prefix)
			a.Name = cmd.head
			a.Capabilities = []string{"exec:" + cmd.prog}
			if r.readOnly(cmd) && len(p.writes) == 0 {
				a.Kind = trace.KindObservation
			}
		case p.prog != "":
			a.Name = p.prog
			a.Capabilities = []string{"exec:" + p.prog}
		default:
			a.Name = "shell"
			a.Capabilities = []string{"shell.exec"}
		}
		addWrites(&a, p.writes)
		return []trace.Action{a}
	}
	// Wrappers (timeout 60, env A=1, nohup) stay in the template; the
	// head is the wrapped command's.
	var prefix, wrapped []string
	argv := p.argv
	for len(argv) > 1 {
		wrapper, _ := programName(argv[0])
		n, ok := wrappers[wrapper]
		if !ok || len(argv) <= n+1 || strings.HasPrefix(argv[1], "-") {
			break
		}
		k := 1 + n
		words := argv[:k]
		if wrapper == "env" {
			words = slices.Clone(words)
			for k < len(argv)-1 && strings.Contains(argv[k], "=") && !strings.HasPrefix(argv[k], "=") {
				name, v, _ := strings.Cut(argv[k], "=")
				if p.env == nil {
					p.env = map[string]any{}
				}
				if credential(name) {
					// As for NAME=value before a command: the value is
					// not recorded, in the template or the command
					// text; a workflow passes a credential from its
					// configuration.
					p.env[name] = nil
					md["command"] = blankAssignment(md["command"].(string), name, v)
				} else {
					p.env[name] = v
					words = append(words, argv[k])
				}
				md["env"] = p.env
				k++
			}
		}
		prefix = append(prefix, words...)
		md["wrapper"] = wrapper
		wrapped = append(wrapped, wrapper)
		argv = argv[k:]
	}
	cmd := r.parseArgv(argv)
	tmpl := make([]any, 0, len(prefix)+len(cmd.tmpl))
	for _, w := range prefix {
		tmpl = append(tmpl, literal(w))
	}
	for _, w := range cmd.tmpl {
		tmpl = append(tmpl, w)
	}
	a.Name = cmd.head
	a.Parameters = cmd.params
	md["argv"] = tmpl
	if cmd.windows {
		// The template runs the program by its name; the path and
		// extension it was recorded with are kept for the reader.
		md["program"] = argv[0]
	}
	a.Capabilities = []string{"exec:" + cmd.prog}
	// The program run is the first wrapper; it needs its grant too.
	for _, w := range wrapped {
		if c := "exec:" + w; !slices.Contains(a.Capabilities, c) {
			a.Capabilities = append(a.Capabilities, c)
		}
	}
	sort.Strings(a.Capabilities)
	if r.readOnly(cmd) && len(p.writes) == 0 {
		a.Kind = trace.KindObservation
	}
	addWrites(&a, p.writes)
	return []trace.Action{a}
}

func addWrites(a *trace.Action, writes []string) {
	if len(writes) == 0 {
		return
	}
	for _, t := range writes {
		a.SideEffects = append(a.SideEffects, trace.SideEffect{Kind: "file_write", Target: t, Capability: "fs.write"})
	}
	a.Capabilities = append(a.Capabilities, "fs.write")
	sort.Strings(a.Capabilities)
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// blankAssignment is raw with the value of the assignment name=v, as a
// shell script spells it (bare, or in single or double quotes), written
// [redacted], as the walker blanks an assignment before a command.
func blankAssignment(raw, name, v string) string {
	if v == "" {
		return raw
	}
	for _, form := range []string{name + "='" + v + "'", name + `="` + v + `"`, name + "=" + v} {
		raw = strings.ReplaceAll(raw, form, name+"=[redacted]")
	}
	return raw
}
