package runrecord

import (
	"slices"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/mdtext"
	"github.com/crystallize-dev/crystallize/internal/session"
)

// Phase is one "##" section of session.md. Lines are its markdown, the
// lines after the heading as session.md and the journal hold them;
// Blocks are the same content as the session format's values, kept as
// each line is added (the methods below), so that the log is built
// without parsing the markdown it writes. Loose says that Lines hold
// what Blocks do not (a phase restored from a journal): the log is then
// read back from the lines.
type Phase struct {
	Title  string
	Lines  []string
	Blocks []session.Block
	Loose  bool
}

// The methods below add to a phase of the log: each appends the lines
// session.md holds and the session block they read as. Consecutive
// paragraphs are one block (session.Parse merges prose), so a paragraph
// after prose joins it.

// Paragraph adds text, markdown, as its own paragraph.
func (p *Phase) Paragraph(text string) {
	p.Lines = append(p.Lines, "", text)
	p.Blocks = appendProse(p.Blocks, text)
}

func appendProse(blocks []session.Block, text string) []session.Block {
	if n := len(blocks); n > 0 {
		if prev, ok := blocks[n-1].(session.Prose); ok {
			blocks[n-1] = session.Prose{Text: prev.Text + "\n\n" + text}
			return blocks
		}
	}
	return append(blocks, session.Prose{Text: text})
}

// ToolCall adds a "**Tool calls:**" list of one call.
func (p *Phase) ToolCall(c session.ToolCall) {
	code := c.Tool
	if c.Args != "" {
		code += " " + c.Args
	}
	p.Lines = append(p.Lines, "", session.ToolCallsMarker, "- "+mdtext.CodeSpan(code)+" → "+c.Result)
	for _, se := range c.SideEffects {
		p.Lines = append(p.Lines, "- side effect: "+se)
	}
	p.Blocks = append(p.Blocks, session.ToolCalls{Calls: []session.ToolCall{c}})
}

// Callout adds a callout of type typ: "> [!typ] title", then each line
// of body after "> ".
func (p *Phase) Callout(typ, title string, body ...string) {
	first := "> [!" + typ + "]"
	if title != "" {
		first += " " + title
	}
	p.Lines = append(p.Lines, "", first)
	for _, l := range body {
		p.Lines = append(p.Lines, "> "+l)
	}
	p.Blocks = append(p.Blocks, session.Callout{Type: typ, Title: title, Body: body})
}

// Message adds a callout of type typ whose body is lines, a message of
// the workflow: an empty line is written ">".
func (p *Phase) Message(typ string, lines []string) {
	p.Lines = append(p.Lines, "", "> [!"+typ+"]")
	for _, l := range lines {
		p.Lines = append(p.Lines, strings.TrimRight("> "+l, " "))
	}
	p.Blocks = append(p.Blocks, session.Callout{Type: typ, Body: lines})
}

// Retitle turns p's first callout of type from without a title into one
// of type to with title: what a pending step asks, once known.
func (p *Phase) Retitle(from, to, title string) {
	old := "> [!" + from + "]"
	i := slices.Index(p.Lines, old)
	if i < 0 {
		return
	}
	p.Lines[i] = "> [!" + to + "] " + title
	for j, b := range p.Blocks {
		if c, ok := b.(session.Callout); ok && c.Type == from && c.Fold == "" && c.Title == "" {
			c.Type, c.Title = to, title
			p.Blocks[j] = c
			return
		}
	}
	p.Loose = true
}

// NoteAfterCalls adds line to p as a paragraph right after its tool call
// list, before the receipt, or at its end when it has none: a detail of
// the call (the HTTP request, the MCP server and tool) that the session
// format's tool call items, a call and its side effects, cannot hold.
func (p *Phase) NoteAfterCalls(line string) {
	at := slices.Index(p.Lines, session.ToolCallsMarker)
	if at < 0 {
		p.Paragraph(line)
		return
	}
	end := at + 1
	for end < len(p.Lines) && p.Lines[end] != "" {
		end++
	}
	p.Lines = slices.Insert(p.Lines, end, "", line)
	calls := slices.IndexFunc(p.Blocks, func(b session.Block) bool { _, ok := b.(session.ToolCalls); return ok })
	if calls < 0 {
		p.Loose = true
		return
	}
	if next, ok := elem(p.Blocks, calls+1).(session.Prose); ok {
		p.Blocks[calls+1] = session.Prose{Text: line + "\n\n" + next.Text}
		return
	}
	p.Blocks = slices.Insert(p.Blocks, calls+1, session.Block(session.Prose{Text: line}))
}

func elem(blocks []session.Block, i int) session.Block {
	if i < len(blocks) {
		return blocks[i]
	}
	return nil
}
