package session

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	"go.yaml.in/yaml/v3"

	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Write writes s in canonical form (see the package documentation). It
// first validates s and writes nothing when s cannot be written so that
// Parse reads it back equal; the error is then a trace.ErrorList.
func Write(w io.Writer, s *Session) error {
	data, err := Format(s)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// Format returns s in canonical form, or the problems Validate finds.
func Format(s *Session) ([]byte, error) {
	return format(s, FormatBody(s))
}

// FormatAs is Format for a writer that built s to say the markdown body
// it holds: it returns s in canonical form when body is the body Format
// writes for s (FormatBody), and false, without validating s, when it is
// not. The body is rendered once.
func FormatAs(s *Session, body string) (data []byte, ok bool, err error) {
	if FormatBody(s) != body {
		return nil, false, nil
	}
	data, err = format(s, body)
	return data, true, err
}

// format writes s whose body is body.
func format(s *Session, body string) ([]byte, error) {
	if err := Validate(s); err != nil {
		return nil, err
	}
	fm, err := frontmatter(&s.Meta)
	if err != nil {
		return nil, fmt.Errorf("writing frontmatter: %w", err)
	}
	var b bytes.Buffer
	b.Grow(len(fm) + len(body) + 9)
	b.WriteString("---\n")
	b.WriteString(fm)
	b.WriteString("---\n")
	if body != "" {
		b.WriteString("\n")
		b.WriteString(body)
	}
	return b.Bytes(), nil
}

// FormatBody returns the markdown body Format writes for s, after the
// frontmatter and the blank line that follows it: the title, the
// preamble and the phases, one blank line between blocks, with a final
// newline; "" for a session without any. It does not validate s.
func FormatBody(s *Session) string {
	var w bodyWriter
	w.b.Grow(bodySize(s))
	if s.Title != "" {
		w.part("# ", s.Title)
	}
	w.blocks(s.Blocks)
	for _, p := range s.Phases {
		w.part("## ", heading(p))
		w.blocks(p.Blocks)
	}
	if w.b.Len() == 0 {
		return ""
	}
	w.b.WriteByte('\n')
	return w.b.String()
}

// bodySize is about the length of s's body, to size the buffer once.
func bodySize(s *Session) int {
	n := len(s.Title) + 4
	size := func(blocks []Block) {
		for _, bl := range blocks {
			switch bl := bl.(type) {
			case Prose:
				n += len(bl.Text) + 2
			case ToolCalls:
				for _, c := range bl.Calls {
					n += len(c.Tool) + len(c.Args) + len(c.Result) + 32
					for _, se := range c.SideEffects {
						n += len(se) + 16
					}
				}
			case Callout:
				n += len(bl.Type) + len(bl.Title) + 8
				for _, l := range bl.Body {
					n += len(l) + 3
				}
			}
		}
	}
	size(s.Blocks)
	for _, p := range s.Phases {
		n += len(p.Name) + len(p.Agent) + len(p.Channel) + 8
		size(p.Blocks)
	}
	return n
}

// bodyWriter writes a body's parts (a heading or a block), a blank line
// between two.
type bodyWriter struct{ b strings.Builder }

// start begins a part.
func (w *bodyWriter) start() {
	if w.b.Len() > 0 {
		w.b.WriteString("\n\n")
	}
}

func (w *bodyWriter) part(prefix, text string) {
	w.start()
	w.b.WriteString(prefix)
	w.b.WriteString(text)
}

func (w *bodyWriter) blocks(blocks []Block) {
	for _, bl := range blocks {
		w.start()
		b := &w.b
		switch bl := bl.(type) {
		case Prose:
			b.WriteString(bl.Text)
		case ToolCalls:
			b.WriteString(ToolCallsMarker)
			for _, c := range bl.Calls {
				code := c.Tool
				if c.Args != "" {
					code += " " + c.Args
				}
				b.WriteString("\n- ")
				b.WriteString(renderCode(code))
				b.WriteString(" →")
				if c.Result != "" {
					b.WriteString(" ")
					b.WriteString(c.Result)
				}
				for _, se := range c.SideEffects {
					b.WriteString("\n- " + sideEffectPrefix)
					if se != "" {
						b.WriteString(" ")
						b.WriteString(se)
					}
				}
			}
		case Callout:
			b.WriteString("> [!" + bl.Type + "]" + bl.Fold)
			if bl.Title != "" {
				b.WriteString(" ")
				b.WriteString(bl.Title)
			}
			for _, l := range bl.Body {
				if l == "" {
					b.WriteString("\n>")
				} else {
					b.WriteString("\n> ")
					b.WriteString(l)
				}
			}
		}
	}
}

func heading(p Phase) string {
	h := p.Name
	if p.Agent != "" {
		h += " @" + p.Agent
	}
	if p.Channel != "" {
		h += " #" + p.Channel
	}
	return h
}

// renderCode renders s as a code span (mdtext.CodeSpan), as crystallize
// run writes them.
func renderCode(s string) string { return mdtext.CodeSpan(s) }

// frontmatter renders m as YAML indented by two spaces.
func frontmatter(m *Meta) (string, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, v *yaml.Node) {
		root.Content = append(root.Content, strNode(key), v)
	}
	addStr := func(key, v string) {
		if v != "" {
			add(key, strNode(v))
		}
	}
	// Times are written plain, as the format does; YAML would otherwise
	// quote them, because a plain one resolves to a timestamp.
	addTime := func(key, v string) {
		if v != "" {
			add(key, &yaml.Node{Kind: yaml.ScalarNode, Value: v})
		}
	}
	add("type", strNode("session"))
	addStr("session_id", m.SessionID)
	addTime("started", m.Started)
	addTime("ended", m.Ended)
	addStr("status", m.Status)
	addStr("channel", m.Channel)
	if len(m.Participants) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, p := range m.Participants {
			seq.Content = append(seq.Content, strNode(p))
		}
		add("participants", seq)
	}
	addStr("model", m.Model)
	add("tokens_used", intNode(m.TokensUsed))
	if len(m.Subagents) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, sa := range m.Subagents {
			e := &yaml.Node{Kind: yaml.MappingNode}
			e.Content = append(e.Content, strNode("session"), strNode(sa.Session))
			if sa.Agent != "" {
				e.Content = append(e.Content, strNode("agent"), strNode(sa.Agent))
			}
			if sa.Model != "" {
				e.Content = append(e.Content, strNode("model"), strNode(sa.Model))
			}
			if sa.Tokens != 0 {
				e.Content = append(e.Content, strNode("tokens"), intNode(sa.Tokens))
			}
			seq.Content = append(seq.Content, e)
		}
		add("subagents", seq)
	}
	addStr("resume_point", m.ResumePoint)
	if len(m.Tasks) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, t := range m.Tasks {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				strNode("title"), strNode(t.Title), strNode("status"), strNode(t.Status),
			}})
		}
		add("tasks", seq)
	}
	for _, f := range m.Extra {
		v, err := decodeValue(f.Value)
		if err != nil {
			return "", fmt.Errorf("%s: %w", f.Key, err)
		}
		add(f.Key, v)
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

func strNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
}

func intNode(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(v)}
}

// decodeValue parses a Field.Value back into a node.
func decodeValue(v string) (*yaml.Node, error) {
	if v == "" {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}, nil // "key:" with no value
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 {
		return nil, fmt.Errorf("not one YAML value")
	}
	return doc.Content[0], nil
}

// known are the frontmatter keys Meta has fields for.
var known = []string{"type", "session_id", "started", "ended", "status", "channel", "participants", "model", "tokens_used", "subagents", "resume_point", "tasks"}

// Validate reports why s cannot be written so that Parse reads it back
// equal, as a trace.ErrorList whose paths name the fields (meta.status,
// phases[1].blocks[0]), or nil. Besides what Parse requires of a document,
// it requires single-line fields to be single lines without surrounding
// space, and prose to be markdown that stays prose where it stands: no
// phase heading, callout or tool calls marker, nothing left open (a fenced
// code block without its end) and, after a tool call list, nothing that
// would continue the list.
func Validate(s *Session) error {
	v := &validator{}
	m := &s.Meta
	v.text("meta.session_id", m.SessionID, true)
	v.text("meta.channel", m.Channel, false)
	v.text("meta.model", m.Model, false)
	v.text("meta.resume_point", m.ResumePoint, false)
	if !slices.Contains(Statuses, m.Status) {
		v.errorf("meta.status", "status %q is not one of %s", m.Status, strings.Join(Statuses, ", "))
	}
	for _, f := range []struct{ path, t string }{{"meta.started", m.Started}, {"meta.ended", m.Ended}} {
		if f.t == "" {
			continue
		}
		if _, err := time.Parse(time.RFC3339, f.t); err != nil || strings.TrimSpace(f.t) != f.t {
			v.errorf(f.path, "%q is not an RFC 3339 time", f.t)
		}
	}
	if m.TokensUsed < 0 {
		v.errorf("meta.tokens_used", "negative")
	}
	for i, p := range m.Participants {
		v.text(fmt.Sprintf("meta.participants[%d]", i), p, true)
	}
	for i, sa := range m.Subagents {
		path := fmt.Sprintf("meta.subagents[%d]", i)
		v.text(path+".session", sa.Session, true)
		v.text(path+".agent", sa.Agent, false)
		v.text(path+".model", sa.Model, false)
		if sa.Tokens < 0 {
			v.errorf(path+".tokens", "negative")
		}
	}
	for i, t := range m.Tasks {
		path := fmt.Sprintf("meta.tasks[%d]", i)
		v.text(path+".title", t.Title, true)
		if !slices.Contains(TaskStatuses, t.Status) {
			v.errorf(path+".status", "status %q is not one of %s", t.Status, strings.Join(TaskStatuses, ", "))
		}
	}
	seen := map[string]bool{}
	for i, f := range m.Extra {
		path := fmt.Sprintf("meta.extra[%d]", i)
		switch {
		case f.Key == "" || !utf8.ValidString(f.Key):
			v.errorf(path, "empty or invalid key")
		case slices.Contains(known, f.Key):
			v.errorf(path, "key %s is a field of Meta", f.Key)
		case seen[f.Key]:
			v.errorf(path, "duplicate key %s", f.Key)
		}
		seen[f.Key] = true
		n, err := decodeValue(f.Value)
		if err != nil {
			v.errorf(path, "value: %v", err)
			continue
		}
		if c, err := encodeValue(n); err != nil || c != f.Value {
			v.errorf(path, "value %q is not in canonical form (want %q)", f.Value, c)
		}
	}
	if r := m.ResumePoint; r != "" && r != NoResumePoint && s.FindPhase(r) < 0 {
		v.errorf("meta.resume_point", "resume_point %q names no phase", r)
	}
	if s.Title != "" {
		v.heading("title", s.Title)
	}
	v.blocks("blocks", s.Blocks, s.Title == "", len(s.Phases) == 0)
	for i, p := range s.Phases {
		path := "phases[" + strconv.Itoa(i) + "]"
		v.heading(path+".name", p.Name)
		if w := lastWord(p.Name); isTag(w) {
			v.errorf(path+".name", "name ends with %q, which would read as an agent or channel", w)
		}
		for _, tag := range []struct{ key, val string }{{"agent", p.Agent}, {"channel", p.Channel}} {
			if tag.val != "" && (strings.IndexFunc(tag.val, unicode.IsSpace) >= 0 || strings.Trim(tag.val, "#") == "" || !utf8.ValidString(tag.val)) {
				v.errorf(path+"."+tag.key, "%q is not one word", tag.val)
			}
		}
		v.blocks(path+".blocks", p.Blocks, false, i == len(s.Phases)-1)
	}
	return v.errs.Err()
}

type validator struct{ errs trace.ErrorList }

func (v *validator) errorf(path, format string, args ...any) {
	v.errs = append(v.errs, &trace.Error{Path: path, Msg: fmt.Sprintf(format, args...)})
}

// text checks a single-line field.
func (v *validator) text(path, s string, required bool) {
	if lineOK(s, required) {
		return
	}
	switch {
	case s == "" && required:
		v.errorf(path, "empty")
	case !utf8.ValidString(s):
		v.errorf(path, "invalid UTF-8")
	case strings.ContainsAny(s, "\n\r"):
		v.errorf(path, "not one line")
	}
}

// heading checks a title or phase name: one line, no surrounding space,
// and no closing sequence of "#" that a heading would drop.
func (v *validator) heading(path, s string) {
	v.text(path, s, true)
	if strings.TrimSpace(s) != s {
		v.errorf(path, "surrounding space")
	}
	if w := lastWord(s); w != "" && strings.Trim(w, "#") == "" {
		v.errorf(path, "ends with %q, which a heading drops", w)
	}
}

// lineOK reports whether text passes, without building the path
// an error would name: a run's log holds thousands of fields.
func lineOK(s string, required bool) bool {
	return (s != "" || !required) && utf8.ValidString(s) && !strings.ContainsAny(s, "\n\r")
}

func lastWord(s string) string {
	return s[strings.LastIndexFunc(s, unicode.IsSpace)+1:]
}

func isTag(w string) bool { return len(w) >= 2 && (w[0] == '@' || w[0] == '#') }

// blocks checks a block sequence; first when it opens a body without a
// title, last when nothing follows it in the document.
func (v *validator) blocks(path string, blocks []Block, first, last bool) {
	var prev Block
	for i, bl := range blocks {
		at := func() string { return path + "[" + strconv.Itoa(i) + "]" }
		switch bl := bl.(type) {
		case Prose:
			if _, ok := prev.(Prose); ok {
				v.errorf(at(), "prose after prose: Parse would merge them")
			}
			_, afterCalls := prev.(ToolCalls)
			if !plainProse(bl.Text) {
				v.prose(at(), bl.Text, first && i == 0, afterCalls, last && i == len(blocks)-1)
			}
		case ToolCalls:
			if len(bl.Calls) == 0 {
				v.errorf(at(), "tool call list without calls")
			}
			for j, c := range bl.Calls {
				if lineOK(c.Tool, true) && strings.IndexFunc(c.Tool, unicode.IsSpace) < 0 && lineOK(c.Args, false) && lineOK(c.Result, false) &&
					!slices.ContainsFunc(c.SideEffects, func(se string) bool { return !lineOK(se, false) }) {
					continue
				}
				cp := fmt.Sprintf("%s.calls[%d]", at(), j)
				v.text(cp+".tool", c.Tool, true)
				if strings.IndexFunc(c.Tool, unicode.IsSpace) >= 0 {
					v.errorf(cp+".tool", "%q is not one word", c.Tool)
				}
				v.text(cp+".args", c.Args, false)
				v.text(cp+".result", c.Result, false)
				for k, se := range c.SideEffects {
					v.text(fmt.Sprintf("%s.side_effects[%d]", cp, k), se, false)
				}
			}
		case Callout:
			if !calloutTypeRE.MatchString(bl.Type) {
				v.errorf(at()+".type", "%q is not a callout type", bl.Type)
			}
			if bl.Fold != "" && bl.Fold != "+" && bl.Fold != "-" {
				v.errorf(at()+".fold", "%q is not +, - or empty", bl.Fold)
			}
			v.text(at()+".title", bl.Title, false)
			for j, l := range bl.Body {
				if !lineOK(l, false) {
					v.text(fmt.Sprintf("%s.body[%d]", at(), j), l, false)
				}
				if l != "" && !asciiLetter(l[0]) {
					v.nesting(fmt.Sprintf("%s.body[%d]", at(), j), "> "+l)
				}
			}
			for _, msg := range bl.problems() {
				v.errorf(at(), "%s", msg)
			}
		default:
			v.errorf(at(), "unknown block type %T", bl)
		}
		prev = bl
	}
}

// nesting checks that line, as written, nests no deeper than Parse
// reads (see limitNesting).
func (v *validator) nesting(path, line string) {
	if markers, indent := nesting(line); markers > maxMarkers || indent > maxIndent {
		v.errorf(path, "a line nests deeper than a session log can (%d block quote or list markers, %d columns of indentation; at most %d and %d)", markers, indent, maxMarkers, maxIndent)
	}
}

// plainProse reports whether md is, by the shape of its lines alone,
// prose that reads back as itself wherever it stands, so that it needs
// no parse: paragraphs whose every line starts with an ASCII letter
// (which no CommonMark block but a paragraph can start with, and which
// no line can turn into a heading), separated by blank lines, and
// thematic breaks ("---") with a blank line on each side. It is how a
// run's log, thousands of one-line paragraphs, is validated in time
// proportional to its length rather than a parse per block; anything
// else it leaves to prose.
func plainProse(md string) bool {
	if md == "" || !utf8.ValidString(md) {
		return false
	}
	prevBlank := false
	for i, rest := 0, md; ; i++ {
		line, more, found := strings.Cut(rest, "\n")
		switch {
		case line == "":
			if i == 0 || !found {
				return false
			}
		case line == "---":
			if !prevBlank || found && !strings.HasPrefix(more, "\n") {
				return false
			}
		case !asciiLetter(line[0]) || strings.ContainsRune(line, '\r'):
			return false
		}
		prevBlank = line == ""
		if !found {
			return true
		}
		rest = more
	}
}

func asciiLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// prose checks that text reads back as the same prose block where it
// stands: first when it opens a body without a title, afterCalls when a
// tool call list comes before it, last when it ends the document (and may
// leave a block open).
func (v *validator) prose(path, md string, first, afterCalls, last bool) {
	switch {
	case !utf8.ValidString(md):
		v.errorf(path, "invalid UTF-8")
		return
	case strings.Contains(md, "\r"):
		v.errorf(path, "carriage return")
		return
	case strings.TrimSpace(md) == "":
		v.errorf(path, "empty prose")
		return
	}
	lines := strings.Split(md, "\n")
	if strings.TrimSpace(lines[0]) == "" || strings.TrimSpace(lines[len(lines)-1]) == "" {
		v.errorf(path, "leading or trailing blank line")
		return
	}
	for _, l := range lines {
		v.nesting(path, l)
	}
	if afterCalls && (strings.HasPrefix(lines[0], "  ") || strings.HasPrefix(strings.TrimLeft(lines[0], " "), "\t")) {
		v.errorf(path, "indented prose after a tool call list would continue the list")
	}
	src := []byte(md + "\n\nz\n")
	doc := parseMarkdown(src)
	end := doc.LastChild()
	// end is the paragraph z, which the loop below leaves out; when md
	// swallowed it, every node is md's.
	if p, ok := end.(*ast.Paragraph); !ok || nodePos(p) != len(md)+2 {
		end = nil
		if !last {
			v.errorf(path, "prose leaves a block open, which would swallow what follows")
		}
	}
	for n := doc.FirstChild(); n != nil && n != end; n = n.NextSibling() {
		pos := nodePos(n)
		if n == doc.FirstChild() && afterCalls {
			// A list with the writer's "-" bullet would continue the
			// tool call list; another bullet or an ordered list starts
			// a new one.
			if l, ok := n.(*ast.List); ok && l.Marker == '-' || pos > len(lines[0]) {
				v.errorf(path, "prose after a tool call list would continue the list")
			}
		}
		if pos < 0 || pos >= len(md) {
			continue
		}
		line := md[pos:]
		line, _, _ = strings.Cut(line, "\n")
		switch n := n.(type) {
		case *ast.Heading:
			switch {
			case n.Level == 2:
				v.errorf(path, "prose holds a phase heading")
			case n.Level == 1 && first && pos == 0 && headingText(n, src) != "":
				v.errorf(path, "prose opening the body with a heading would read as the title")
			}
		case *ast.Paragraph:
			if n.Lines().Len() == 1 && strings.TrimSpace(line) == ToolCallsMarker {
				v.errorf(path, "prose holds a tool calls marker")
			}
		case *ast.Blockquote:
			if calloutRE.MatchString(quoteLine(line)) {
				v.errorf(path, "prose holds a callout")
			}
		}
	}
}

// StringValue is s as a Field.Value: a YAML string, quoted only where a
// plain scalar would read back as something else (true, 12, a timestamp).
func StringValue(s string) string {
	v, err := encodeValue(strNode(s))
	if err != nil {
		// A string scalar always encodes; the fallback quotes it.
		return strconv.Quote(s)
	}
	return v
}
