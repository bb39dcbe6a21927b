package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"go.yaml.in/yaml/v3"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// ToolCallsMarker is the paragraph that announces a tool call list.
const ToolCallsMarker = "**Tool calls:**"

// sideEffectPrefix opens a tool call list item that records a side effect
// of the call before it.
const sideEffectPrefix = "side effect:"

// Parse reads a session log. name is the file name errors carry. It returns
// the session and, when the log has problems, a trace.ErrorList of all of
// them, each with its line; the session is then as much as could be read.
// Parse never panics.
func Parse(name string, data []byte) (*Session, error) {
	p := &parse{file: name}
	// CommonMark ends lines with \n, \r\n or \r.
	src := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(src, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // the final newline ends the last line
	}
	for i, l := range lines {
		if !utf8.ValidString(l) {
			p.errorf(i+1, "invalid UTF-8")
			lines[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	s := &Session{}
	body, offset := p.frontmatter(s, lines)
	p.body(s, body, offset)
	p.check(s)
	p.errs.Sort()
	return s, p.errs.Err()
}

// ParseBody reads md, the markdown body of a session log (what follows
// the frontmatter), into s's Title, Blocks and Phases as Parse reads them,
// leaving s.Meta alone. A writer that renders its own markdown (the run
// log crystallize run keeps) fills in the rest of s and writes it with
// Write, so that what it writes is what Parse reads back. Errors carry
// name and the line within md, as a trace.ErrorList.
func ParseBody(name, md string, s *Session) error {
	p := &parse{file: name}
	lines := strings.Split(md, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if !utf8.ValidString(l) {
			p.errorf(i+1, "invalid UTF-8")
			lines[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	s.Title, s.Blocks, s.Phases = "", nil, nil
	p.body(s, lines, 0)
	p.errs.Sort()
	return p.errs.Err()
}

// MaxFileBytes bounds a session log ReadFile reads.
const MaxFileBytes = 16 << 20

// Lint reads the session log in file name (ReadFile) and returns the
// problems Parse finds in it, none for a good log; the error is only for
// a file that cannot be read.
func Lint(name string) (trace.ErrorList, error) {
	data, err := ReadFile(name)
	if err != nil {
		return nil, err
	}
	_, err = Parse(name, data)
	var list trace.ErrorList
	if err != nil && !errors.As(err, &list) {
		return nil, err
	}
	return list, nil
}

// ReadFile reads a session log: a regular file (a FIFO would block the
// read, a device never end it; a symlink is followed to what it names) of
// at most MaxFileBytes.
func ReadFile(name string) ([]byte, error) {
	f, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: more than %d bytes, larger than a session log can be", name, MaxFileBytes)
	}
	return data, nil
}

// openRegular opens name after checking that it is a regular file (a
// stat first, since opening a FIFO blocks), and checks the opened file
// again, in case it was replaced between.
func openRegular(name string) (*os.File, error) {
	st, err := os.Stat(name)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			pe.Op = "open" // what the reader tried, as os.ReadFile says it
		}
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return f, nil
}

// parse is the state of one Parse call.
type parse struct {
	file string
	errs trace.ErrorList
	// resumeLine is the line of resume_point, checked after the body.
	resumeLine int
}

func (p *parse) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, &trace.Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// frontmatter reads the frontmatter at the top of lines into s.Meta and
// returns the body lines and the number of lines before them.
func (p *parse) frontmatter(s *Session, lines []string) ([]string, int) {
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		p.errorf(1, "missing frontmatter: a session log starts with a --- line")
		return lines, 0
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		p.errorf(1, "unterminated frontmatter: no closing --- line")
		return nil, len(lines)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(strings.Join(lines[1:end], "\n")), &doc); err != nil {
		line, msg := yamlError(err)
		p.errorf(line+1, "frontmatter: %s", msg)
		return lines[end+1:], end + 1
	}
	p.meta(&s.Meta, &doc)
	return lines[end+1:], end + 1
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError splits a yaml.v3 error into its line (within the frontmatter,
// 1-based, or 0) and its message.
func yamlError(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, msg
}

// meta decodes the frontmatter document into m, one key at a time, so that
// every problem is reported with its own line.
func (p *parse) meta(m *Meta, doc *yaml.Node) {
	line := func(n *yaml.Node) int { return n.Line + 1 } // the frontmatter starts on line 2
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.errorf(2, "frontmatter is empty")
		return
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.errorf(line(root), "frontmatter is not a mapping")
		return
	}
	seen := map[string]bool{}
	sawType := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		if k.Kind != yaml.ScalarNode || key == "" {
			p.errorf(line(k), "frontmatter key is not a string")
			continue
		}
		if seen[key] {
			p.errorf(line(k), "duplicate key %s", key)
			continue
		}
		seen[key] = true
		str := func() string {
			if v.Kind != yaml.ScalarNode {
				p.errorf(line(v), "%s: want a string", key)
				return ""
			}
			if v.Tag == "!!null" {
				return ""
			}
			return v.Value
		}
		switch key {
		case "type":
			sawType = true
			if t := str(); t != "session" {
				p.errorf(line(v), "type is %q, want session", t)
			}
		case "session_id":
			m.SessionID = str()
		case "started", "ended":
			t := str()
			if t != "" {
				if _, err := time.Parse(time.RFC3339, t); err != nil {
					p.errorf(line(v), "%s: %q is not an RFC 3339 time", key, t)
				}
			}
			if key == "started" {
				m.Started = t
			} else {
				m.Ended = t
			}
		case "status":
			m.Status = str()
			if m.Status != "" && !slices.Contains(Statuses, m.Status) {
				p.errorf(line(v), "status %q is not one of %s", m.Status, strings.Join(Statuses, ", "))
			}
		case "channel":
			m.Channel = str()
		case "model":
			m.Model = str()
		case "resume_point":
			m.ResumePoint = str()
			p.resumeLine = line(v)
		case "tokens_used":
			m.TokensUsed = p.count(v, key)
		case "participants":
			if v.Kind != yaml.SequenceNode {
				p.errorf(line(v), "participants: want a list of agents")
				break
			}
			for j, e := range v.Content {
				if e.Kind != yaml.ScalarNode || e.Value == "" {
					p.errorf(line(e), "participants[%d]: want an agent name", j)
					continue
				}
				m.Participants = append(m.Participants, e.Value)
			}
		case "subagents":
			p.entries(v, key, []string{"session", "agent", "model", "tokens"}, func(j int, f map[string]*yaml.Node) {
				var sa Subagent
				sa.Session = p.scalar(f["session"], fmt.Sprintf("subagents[%d].session", j))
				sa.Agent = p.scalar(f["agent"], fmt.Sprintf("subagents[%d].agent", j))
				sa.Model = p.scalar(f["model"], fmt.Sprintf("subagents[%d].model", j))
				if n := f["tokens"]; n != nil {
					sa.Tokens = p.count(n, fmt.Sprintf("subagents[%d].tokens", j))
				}
				if sa.Session == "" {
					p.errorf(line(v.Content[j]), "subagents[%d]: missing session", j)
				}
				m.Subagents = append(m.Subagents, sa)
			})
		case "tasks":
			p.entries(v, key, []string{"title", "status"}, func(j int, f map[string]*yaml.Node) {
				t := Task{
					Title:  p.scalar(f["title"], fmt.Sprintf("tasks[%d].title", j)),
					Status: p.scalar(f["status"], fmt.Sprintf("tasks[%d].status", j)),
				}
				switch {
				case t.Title == "":
					p.errorf(line(v.Content[j]), "tasks[%d]: missing title", j)
				case t.Status == "":
					p.errorf(line(v.Content[j]), "tasks[%d]: missing status", j)
				case !slices.Contains(TaskStatuses, t.Status):
					p.errorf(line(f["status"]), "tasks[%d]: status %q is not one of %s", j, t.Status, strings.Join(TaskStatuses, ", "))
				}
				m.Tasks = append(m.Tasks, t)
			})
		default:
			val, err := keepValue(v)
			if err != nil {
				p.errorf(line(v), "%s: %v", key, err)
				break
			}
			m.Extra = append(m.Extra, Field{Key: key, Value: val})
		}
	}
	if !sawType {
		p.errorf(line(root), "missing type: session")
	}
	if m.SessionID == "" {
		p.errorf(line(root), "missing session_id")
	}
	if m.Status == "" {
		p.errorf(line(root), "missing status")
	}
}

// scalar returns the string value of n, "" when n is nil or null.
func (p *parse) scalar(n *yaml.Node, path string) string {
	if n == nil || n.Tag == "!!null" {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.errorf(n.Line+1, "%s: want a string", path)
		return ""
	}
	return n.Value
}

// count decodes a non-negative integer.
func (p *parse) count(n *yaml.Node, path string) int64 {
	var v int64
	if n.Kind != yaml.ScalarNode || n.Decode(&v) != nil {
		p.errorf(n.Line+1, "%s: want an integer", path)
		return 0
	}
	if v < 0 {
		p.errorf(n.Line+1, "%s: negative", path)
		return 0
	}
	return v
}

// entries walks a list of mappings whose keys are among keys, calling f with
// each entry's fields.
func (p *parse) entries(v *yaml.Node, key string, keys []string, f func(int, map[string]*yaml.Node)) {
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line+1, "%s: want a list", key)
		return
	}
	for j, e := range v.Content {
		if e.Kind != yaml.MappingNode {
			p.errorf(e.Line+1, "%s[%d]: want a mapping", key, j)
			continue
		}
		fields := map[string]*yaml.Node{}
		for i := 0; i+1 < len(e.Content); i += 2 {
			k := e.Content[i]
			switch {
			case !slices.Contains(keys, k.Value):
				p.errorf(k.Line+1, "%s[%d]: unknown key %s (want %s)", key, j, k.Value, strings.Join(keys, ", "))
			case fields[k.Value] != nil:
				p.errorf(k.Line+1, "%s[%d]: duplicate key %s", key, j, k.Value)
			default:
				fields[k.Value] = e.Content[i+1]
			}
		}
		f(j, fields)
	}
}

// keepValue renders a value for Field.Value and checks that Write can
// give it back: one that uses anchors, aliases or tags may not.
func keepValue(n *yaml.Node) (string, error) {
	val, err := encodeValue(n)
	if err != nil {
		return "", err
	}
	back, err := decodeValue(val)
	if err == nil {
		var again string
		if again, err = encodeValue(back); err == nil && again != val {
			err = errors.New("value does not read back the same")
		}
	}
	if err != nil {
		return "", fmt.Errorf("value cannot be kept: %v", err)
	}
	return val, nil
}

// encodeValue renders a frontmatter value the format does not define as
// Field.Value: YAML without its final newline, indented by two spaces.
func encodeValue(n *yaml.Node) (string, error) {
	c := *n
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&c); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// atxRE matches an ATX heading line.
var atxRE = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]|$)`)

// calloutTypeRE matches a callout type.
var calloutTypeRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// calloutRE matches the first line of a callout, after "> ".
var calloutRE = regexp.MustCompile(`^\[!([A-Za-z0-9_-]+)\]([+-]?)(.*)$`)

// listMarkerRE matches a list item's marker and the spaces after it.
var listMarkerRE = regexp.MustCompile(`^ {0,3}(?:[-*+]|[0-9]{1,9}[.)])[ \t]*`)

// body reads the markdown body: lines are the body lines, offset the number
// of lines before them in the file.
func (p *parse) body(s *Session, lines []string, offset int) {
	lines = p.limitNesting(lines, offset)
	src := []byte(strings.Join(lines, "\n") + "\n")
	starts := make([]int, len(lines)+1) // byte offset of each line
	for i, pos := 0, 0; i < len(lines); i++ {
		starts[i] = pos
		pos += len(lines[i]) + 1
	}
	starts[len(lines)] = len(src)
	lineOf := func(pos int) int {
		i, found := slices.BinarySearch(starts, pos)
		if !found {
			i--
		}
		return max(i, 0)
	}
	doc := parseMarkdown(src)

	// Top-level blocks and their first lines. A block runs to the line
	// before the next one's first line, less trailing blank lines: at the
	// top level, only blank lines separate blocks (and link reference
	// definitions, which have no node and stay with the block before).
	type top struct {
		n          ast.Node
		start, end int
	}
	var tops []top
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		pos := nodePos(n)
		if pos < 0 {
			continue
		}
		l := lineOf(pos)
		if len(tops) > 0 && l <= tops[len(tops)-1].start {
			continue
		}
		tops = append(tops, top{n: n, start: l})
	}
	for i := range tops {
		end := len(lines)
		if i+1 < len(tops) {
			end = tops[i+1].start
		}
		tops[i].end = trimBlank(lines, tops[i].start, end)
	}

	b := &builder{p: p, s: s, lines: lines, offset: offset, pending: -1}
	b.cur = &s.Blocks
	if len(tops) == 0 {
		b.prose(0, trimBlank(lines, 0, len(lines)))
	} else {
		b.prose(0, trimBlank(lines, 0, tops[0].start))
	}
	for i := 0; i < len(tops); i++ {
		t := tops[i]
		switch n := t.n.(type) {
		case *ast.Heading:
			ext := headingEnd(n, lines, t.start)
			if w := lastWord(headingText(n, src)); w != "" && strings.Trim(w, "#") == "" && n.Level <= 2 {
				p.errorf(b.line(t.start), "heading text ends with %q, which reads as a closing sequence", w)
			}
			switch {
			case n.Level == 1 && i == 0 && b.pending < 0 && headingText(n, src) != "":
				s.Title = headingText(n, src)
			case n.Level == 2:
				b.flush()
				b.phase(headingText(n, src), t.start)
			default:
				b.prose(t.start, t.end)
				continue
			}
			b.prose(ext, t.end)
		case *ast.Paragraph:
			if n.Lines().Len() != 1 || strings.TrimSpace(lines[t.start]) != ToolCallsMarker {
				b.prose(t.start, t.end)
				continue
			}
			if t.end > t.start+1 || i+1 == len(tops) {
				p.errorf(b.line(t.start), "tool calls marker without a list")
				b.prose(t.start, t.end)
				continue
			}
			list, ok := tops[i+1].n.(*ast.List)
			if !ok {
				p.errorf(b.line(t.start), "tool calls marker without a list")
				b.prose(t.start, t.end)
				continue
			}
			i++
			b.flush()
			b.toolCalls(list, tops[i].start, tops[i].end, lineOf)
		case *ast.Blockquote:
			first := quoteLine(lines[t.start])
			m := calloutRE.FindStringSubmatch(first)
			if m == nil {
				b.prose(t.start, t.end)
				continue
			}
			b.flush()
			end := t.start + 1
			for end < t.end && strings.TrimSpace(lines[end]) != "" {
				end++
			}
			c := Callout{Type: m[1], Fold: m[2], Title: strings.TrimPrefix(m[3], " ")}
			for _, l := range lines[t.start+1 : end] {
				c.Body = append(c.Body, quoteLine(l))
			}
			b.callout(c, t.start)
			b.prose(end, t.end)
		default:
			b.prose(t.start, t.end)
		}
	}
	b.flush()
}

// Nesting limits. The CommonMark parser walks every open container for
// every line, and a line that opens a block quote per ">" re-reads the
// rest of itself per level: 200 KB of ">" took 26 s, and 2,000 nested
// list items 18 s. Session logs nest a few levels; a body line deeper than
// these limits is reported and not read, so parsing stays linear in the
// size of the log.
const (
	// maxMarkers bounds the block quote and list markers a line opens.
	maxMarkers = 32
	// maxIndent bounds a line's indentation in columns (a tab advances
	// to the next multiple of 4), which bounds how deep lists nest.
	maxIndent = 256
)

// limitNesting returns lines with every line that nests deeper than the
// limits replaced by an empty one, each reported. lines is not changed.
func (p *parse) limitNesting(lines []string, offset int) []string {
	var out []string
	for i, l := range lines {
		markers, indent := nesting(l)
		if markers <= maxMarkers && indent <= maxIndent {
			continue
		}
		if out == nil {
			out = slices.Clone(lines)
		}
		p.errorf(offset+i+1, "the line nests deeper than a session log can (%d block quote or list markers, %d columns of indentation; at most %d and %d); it is not read", markers, indent, maxMarkers, maxIndent)
		out[i] = ""
	}
	if out == nil {
		return lines
	}
	return out
}

// nesting measures the container prefix of a line: the block quote and
// list markers it opens, and the widest indentation within it. It looks
// only at the prefix, so it is linear in the line.
func nesting(l string) (markers, indent int) {
	col := 0
	for i := 0; i < len(l); {
		switch c := l[i]; {
		case c == ' ':
			col++
			i++
		case c == '\t':
			col += 4 - col%4
			i++
		case c == '>':
			markers++
			col = 0
			i++
		case (c == '-' || c == '*' || c == '+') && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t'):
			markers++
			col = 0
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(l) && j-i < 9 && l[j] >= '0' && l[j] <= '9' {
				j++
			}
			if j < len(l) && (l[j] == '.' || l[j] == ')') && (j+1 == len(l) || l[j+1] == ' ' || l[j+1] == '\t') {
				markers++
				col = 0
				i = j + 1
				continue
			}
			return markers, max(indent, col)
		default:
			return markers, max(indent, col)
		}
		indent = max(indent, col)
	}
	return markers, indent
}

// nodePos returns the byte offset where n starts, or -1.
func nodePos(n ast.Node) int {
	if pos := n.Pos(); pos >= 0 {
		return pos
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() != ast.TypeBlock {
			continue
		}
		if pos := nodePos(c); pos >= 0 {
			return pos
		}
	}
	return -1
}

// trimBlank returns end moved back over blank lines, not before start.
func trimBlank(lines []string, start, end int) int {
	for end > start && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return end
}

// headingEnd returns the line after heading n, which starts on line start:
// one line for an ATX heading, the text lines and the underline for a
// setext one.
func headingEnd(n *ast.Heading, lines []string, start int) int {
	if atxRE.MatchString(lines[start]) {
		return start + 1
	}
	return min(start+n.Lines().Len()+1, len(lines))
}

// headingText is the heading's content, without markers, closing sequence
// or surrounding space; the lines of a setext heading are joined by spaces.
func headingText(n *ast.Heading, src []byte) string {
	var parts []string
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		parts = append(parts, strings.TrimSpace(string(seg.Value(src))))
	}
	return strings.TrimSpace(strings.Join(parts, " "))
}

// quoteLine strips a block quote line's marker: up to three spaces, ">"
// and one optional space. A lazy continuation line is returned as it is.
func quoteLine(l string) string {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) > 3 || !strings.HasPrefix(t, ">") {
		return l
	}
	return strings.TrimPrefix(t[1:], " ")
}

// builder assembles the session from the body's blocks.
type builder struct {
	p      *parse
	s      *Session
	lines  []string
	offset int
	cur    *[]Block // the preamble or the current phase's blocks
	// pending is the first line of prose not yet added, or -1; pendEnd
	// is the line after its last.
	pending, pendEnd int
}

// line converts a body line index to a file line number.
func (b *builder) line(i int) int { return b.offset + i + 1 }

// prose adds lines [start, end) to the pending prose, skipping leading
// blank lines; consecutive prose merges with the blank lines between.
func (b *builder) prose(start, end int) {
	for start < end && strings.TrimSpace(b.lines[start]) == "" {
		start++
	}
	if start >= end {
		return
	}
	if b.pending < 0 {
		b.pending = start
	}
	b.pendEnd = end
}

func (b *builder) flush() {
	if b.pending < 0 {
		return
	}
	*b.cur = append(*b.cur, Prose{Text: strings.Join(b.lines[b.pending:b.pendEnd], "\n")})
	b.pending = -1
}

// phase opens a phase from its heading text.
func (b *builder) phase(heading string, at int) {
	ph := Phase{}
	rest := heading
	for {
		i := strings.LastIndexAny(rest, " \t")
		w := rest[i+1:]
		if len(w) < 2 || (w[0] != '@' && w[0] != '#') {
			break
		}
		switch {
		case w[0] == '@' && ph.Agent == "":
			ph.Agent = w[1:]
		case w[0] == '#' && ph.Channel == "":
			ph.Channel = w[1:]
		case w[0] == '@':
			b.p.errorf(b.line(at), "phase heading names two agents")
		default:
			b.p.errorf(b.line(at), "phase heading names two channels")
		}
		if i < 0 {
			rest = ""
			break
		}
		rest = strings.TrimRight(rest[:i], " \t")
	}
	ph.Name = rest
	if w := lastWord(rest); w != "" && rest != heading && strings.Trim(w, "#") == "" {
		b.p.errorf(b.line(at), "heading text ends with %q, which reads as a closing sequence", w)
	}
	if ph.Name == "" {
		b.p.errorf(b.line(at), "phase heading without a name")
	}
	b.s.Phases = append(b.s.Phases, ph)
	b.cur = &b.s.Phases[len(b.s.Phases)-1].Blocks
}

// toolCalls reads a tool call list on lines [start, end).
func (b *builder) toolCalls(list *ast.List, start, end int, lineOf func(int) int) {
	var items []int
	for it := list.FirstChild(); it != nil; it = it.NextSibling() {
		if pos := nodePos(it); pos >= 0 {
			items = append(items, lineOf(pos))
		}
	}
	if len(items) == 0 || items[0] != start {
		items = append([]int{start}, items...)
	}
	var tc ToolCalls
	for k, a := range items {
		z := end
		if k+1 < len(items) {
			z = items[k+1]
		}
		z = trimBlank(b.lines, a, z)
		if z > a+1 {
			b.p.errorf(b.line(a), "tool call spans several lines")
			continue
		}
		item := listMarkerRE.ReplaceAllString(b.lines[a], "")
		if se, ok := strings.CutPrefix(item, sideEffectPrefix); ok {
			if len(tc.Calls) == 0 {
				b.p.errorf(b.line(a), "side effect before any tool call")
				continue
			}
			c := &tc.Calls[len(tc.Calls)-1]
			c.SideEffects = append(c.SideEffects, strings.TrimPrefix(se, " "))
			continue
		}
		call, msg := parseToolCall(item)
		if msg != "" {
			b.p.errorf(b.line(a), "%s", msg)
			continue
		}
		tc.Calls = append(tc.Calls, call)
	}
	*b.cur = append(*b.cur, tc)
}

// parseToolCall reads "`tool args` → result"; on failure it returns the
// problem.
func parseToolCall(item string) (ToolCall, string) {
	const shape = "tool call is not `tool args` → result"
	if !strings.HasPrefix(item, "`") {
		return ToolCall{}, shape
	}
	content, rest, ok := codeSpan(item)
	if !ok {
		return ToolCall{}, "tool call with an unclosed code span"
	}
	tool, args, _ := strings.Cut(content, " ")
	if tool == "" {
		return ToolCall{}, "tool call without a tool name"
	}
	rest = strings.TrimLeft(rest, " \t")
	result, ok := strings.CutPrefix(rest, "→")
	if !ok {
		return ToolCall{}, "tool call without result arrow"
	}
	return ToolCall{Tool: tool, Args: args, Result: strings.TrimPrefix(result, " ")}, ""
}

// codeSpan reads the code span at the start of s as CommonMark does: a run
// of n backticks up to the next run of exactly n, with one space stripped
// from both ends when both are spaces and the content is not all spaces.
func codeSpan(s string) (content, rest string, ok bool) {
	n := len(s) - len(strings.TrimLeft(s, "`"))
	for i := n; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			c := s[n:i]
			if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
				c = c[1 : len(c)-1]
			}
			return c, s[j:], true
		}
		i = j
	}
	return "", "", false
}

// callout adds a callout and reports its problems.
func (b *builder) callout(c Callout, at int) {
	for _, msg := range c.problems() {
		b.p.errorf(b.line(at), "%s", msg)
	}
	*b.cur = append(*b.cur, c)
}

// problems checks what c's type requires: a subagent's delegation, and
// some text in the other types of the format.
func (c Callout) problems() []string {
	switch {
	case c.Is(CalloutSubagent):
		_, problems := c.Delegation()
		return problems
	case c.Is(CalloutDecision), c.Is(CalloutError), c.Is(CalloutUser), c.Is(CalloutDecisionNeeded),
		c.Is(CalloutApprovalRequired), c.Is(CalloutTaskComplete):
		if c.Text() == "" {
			return []string{"empty " + strings.ToLower(c.Type) + " callout"}
		}
	}
	return nil
}

// parseMarkdown parses src as CommonMark. Building a goldmark parser
// costs more than parsing a short block (the writer checks every prose
// block of a run's log on its own), so parsers are reused. A parser keeps
// state while it parses but starts each Parse afresh, as goldmark's own
// Convert relies on; the pool gives each goroutine its own.
func parseMarkdown(src []byte) ast.Node {
	p := markdownParsers.Get().(parser.Parser)
	defer markdownParsers.Put(p)
	return p.Parse(text.NewReader(src))
}

var markdownParsers = sync.Pool{New: func() any {
	return parser.NewParser(
		parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...),
	)
}}

// check validates what needs the whole session: the resume point.
func (p *parse) check(s *Session) {
	r := s.Meta.ResumePoint
	if r != "" && r != NoResumePoint && s.FindPhase(r) < 0 {
		p.errorf(p.resumeLine, "resume_point %q names no phase", r)
	}
}
