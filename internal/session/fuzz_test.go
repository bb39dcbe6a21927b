package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// FuzzParse feeds Parse arbitrary documents, seeded with the examples and
// the golden inputs. Parse must not panic, and a document it reads without
// problems must be writable and read back equal.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*.md")
	examples, _ := filepath.Glob("../../examples/sessions/*.md")
	for _, name := range append(files, examples...) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(head + "\n## P\n\n**Tool calls:**\n- `a` →\n\n> [!x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("f.md", data)
		if s == nil {
			t.Fatal("Parse returned no session")
		}
		if err != nil {
			return
		}
		out, err := Format(s)
		if err != nil {
			t.Fatalf("Format(Parse(x)) = %v\nx:\n%s", err, data)
		}
		s2, err := Parse("f.md", out)
		if err != nil {
			t.Fatalf("Parse(Format(Parse(x))) = %v\nx:\n%s\nout:\n%s", err, data, out)
		}
		if diff := cmp.Diff(s, s2, equate); diff != "" {
			t.Fatalf("Parse(Format(Parse(x))) (-first +second):\n%s\nx:\n%s\nout:\n%s", diff, data, out)
		}
	})
}

// FuzzSession builds session values from fuzzed strings and checks that
// Parse(Format(s)) == s. The builder keeps to values Validate accepts
// (one-line fields, one-word agents, prose that is a paragraph), and the
// test fails when Validate rejects one, so that it cannot pass by
// rejecting everything.
func FuzzSession(f *testing.F) {
	f.Add("Research Phase", "grep", "\"session\" crates/", "12 matches", "a `tick`", uint32(0), "", uint16(0))
	f.Add("", "@a #b", "x→y", "  ", "```", uint32(0xffffffff), ">", uint16(0xffff))
	f.Add("# h", "> [!note]", "- item", "**Tool calls:**", "[[id]]", uint32(0x5a5a5a5a), "", uint16(0))
	// Lines at the nesting limit Validate and Parse enforce, and just
	// past it: block quotes, each kind of list marker, tabs, and
	// indentation up to and beyond maxIndent columns.
	for _, n := range []struct {
		nest  string
		depth uint16
	}{
		{">", maxMarkers}, {">", maxMarkers + 1}, {"-", maxMarkers}, {"-*+1", maxMarkers + 1},
		{">-", maxMarkers - 1}, {"1>", maxMarkers + 2}, {">\t-", maxMarkers},
		{">", 1 + maxIndent<<6}, {">", 1 + (maxIndent+1)<<6}, {"-", 2 + (maxIndent-3)<<6},
	} {
		for _, shape := range []uint32{1 << 17, 1<<17 | 1<<18} {
			f.Add("Research Phase", "grep", "\"session\" crates/", "12 matches", "a `tick`", shape|1<<13, n.nest, n.depth)
		}
	}
	f.Fuzz(func(t *testing.T, a, b, c, d, e string, shape uint32, nest string, depth uint16) {
		bit := func(i int) bool { return shape&(1<<i) != 0 }
		s := &Session{Meta: Meta{
			SessionID:  orDefault(oneLine(a), "s"),
			Status:     Statuses[int(shape%uint32(len(Statuses)))],
			Channel:    oneLine(b),
			Model:      oneLine(c),
			TokensUsed: int64(shape >> 8),
		}}
		if p := oneLine(d); p != "" {
			s.Meta.Participants = []string{p}
		}
		if bit(3) {
			s.Meta.Subagents = []Subagent{{Session: orDefault(oneLine(e), "n"), Agent: oneLine(a), Tokens: int64(shape & 0xff)}}
		}
		if bit(4) {
			s.Meta.Tasks = []Task{{Title: orDefault(oneLine(b), "t"), Status: TaskStatuses[int(shape>>5)%len(TaskStatuses)]}}
		}
		if bit(7) {
			v, err := encodeValue(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: oneLine(e)})
			if err != nil {
				t.Fatal(err)
			}
			s.Meta.Extra = []Field{{Key: "x_" + word(a), Value: v}}
		}
		if bit(8) {
			s.Title = fuzzHeading(a)
		}
		call := ToolCall{Tool: orDefault(word(b), "t"), Args: oneLine(c), Result: oneLine(d)}
		if bit(9) {
			call.SideEffects = []string{oneLine(e)}
		}
		callout := Callout{Type: orDefault(strings.Map(func(r rune) rune {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-') {
				return r
			}
			return -1
		}, e), "note"), Title: oneLine(a), Body: []string{"x"}}
		for _, l := range strings.Split(b, "\n") {
			callout.Body = append(callout.Body, oneLine(l))
		}
		if callout.Is(CalloutSubagent) {
			callout.Title = "@" + orDefault(word(a), "a")
			callout.Body = []string{"mode: inline", oneLine(b)}
		}
		prose := Prose{"p" + oneLine(c)}
		if bit(10) {
			prose.Text += "\n\np" + oneLine(d)
		}
		blocks := []Block{ToolCalls{Calls: []ToolCall{call}}, callout, prose}
		if bit(11) {
			blocks = []Block{prose, callout, ToolCalls{Calls: []ToolCall{call, call}}}
		}
		if bit(12) {
			s.Blocks = blocks
		}
		n := int(shape>>13) % 3
		for i := range n {
			s.Phases = append(s.Phases, Phase{Name: fuzzHeading(b), Agent: word(c), Channel: word(d), Blocks: blocks[i:]})
		}
		if bit(16) && n > 0 {
			s.Meta.ResumePoint = "phase-1"
		}
		// A phase of its own holds a nested line as prose, or as the
		// body of a callout (bit 18), where the callout's own "> " adds
		// a marker.
		var deep bool
		if bit(17) {
			line := nestedLine(nest, depth)
			var bl Block = Prose{line}
			deep = tooDeep(line)
			if bit(18) {
				bl = Callout{Type: "note", Body: []string{line}}
				deep = tooDeep("> " + line)
			}
			s.Phases = append(s.Phases, Phase{Name: "nested", Blocks: []Block{bl}})
		}
		if deep {
			// Validate refuses the line, naming where it is, and Parse
			// of the document holding it reports it and reads the rest.
			_, err := Format(s)
			if err == nil || !strings.Contains(err.Error(), "nests deeper") || !strings.Contains(err.Error(), fmt.Sprintf("phases[%d]", len(s.Phases)-1)) {
				t.Fatalf("Format of a line nested past the limit = %v, want the nesting refused at phases[%d]", err, len(s.Phases)-1)
			}
			last := &s.Phases[len(s.Phases)-1]
			held := last.Blocks[0]
			last.Blocks = []Block{Prose{"placeholder"}}
			data, err := Format(s)
			if err != nil {
				t.Fatalf("Format() = %v\nvalue: %#v", err, s)
			}
			var text string
			switch bl := held.(type) {
			case Prose:
				text = bl.Text
			case Callout:
				text = "> [!note]\n> " + bl.Body[0]
			}
			data = bytes.Replace(data, []byte("placeholder"), []byte(text), 1)
			got, err := Parse("s.md", data)
			if got == nil || err == nil || !strings.Contains(err.Error(), "nests deeper") {
				t.Fatalf("Parse of a line nested past the limit = %v, want it reported\n%s", err, data)
			}
			return
		}
		data, err := Format(s)
		if err != nil {
			t.Fatalf("Format() = %v\nvalue: %#v", err, s)
		}
		got, err := Parse("s.md", data)
		if err != nil {
			t.Fatalf("Parse(Format(s)) = %v\n%s", err, data)
		}
		if diff := cmp.Diff(s, got, equate); diff != "" {
			t.Fatalf("Parse(Format(s)) (-want +got):\n%s\n%s", diff, data)
		}
	})
}

// nestedLine builds a line of prose that nests: (depth&63)%40 container
// markers (maxMarkers is 32), each of the kind of the next byte of nest
// ('>' a block quote, '-', '*', '+' a bullet, a digit an ordered item, a
// tab an indentation; anything else a block quote), then (depth>>6)%300
// columns of indentation (maxIndent is 256) and a word.
func nestedLine(nest string, depth uint16) string {
	var b strings.Builder
	for i := range int(depth&63) % 40 {
		var c byte = '>'
		if nest != "" {
			c = nest[i%len(nest)]
		}
		switch {
		case c == '-' || c == '*' || c == '+':
			b.WriteByte(c)
			b.WriteByte(' ')
		case c >= '0' && c <= '9':
			b.WriteString("1. ")
		case c == '\t':
			b.WriteByte('\t')
		default:
			b.WriteString("> ")
		}
	}
	b.WriteString(strings.Repeat(" ", int(depth>>6)%300))
	b.WriteString("p" + word(nest))
	return b.String()
}

// tooDeep reports whether line nests past what Parse reads.
func tooDeep(line string) bool {
	markers, indent := nesting(line)
	return markers > maxMarkers || indent > maxIndent
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// oneLine makes s valid UTF-8 on one line.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "?")
	return strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
}

// word makes s one word that is not all "#".
func word(s string) string {
	s = strings.Join(strings.FieldsFunc(oneLine(s), unicode.IsSpace), "")
	if strings.Trim(s, "#") == "" {
		return ""
	}
	return s
}

// fuzzHeading makes s a heading text: one line, no surrounding space, not
// ending in a tag or a closing sequence.
func fuzzHeading(s string) string {
	s = strings.TrimSpace(oneLine(s))
	for s != "" {
		w := lastWord(s)
		if !isTag(w) && strings.Trim(w, "#") != "" {
			break
		}
		s = strings.TrimSpace(s[:len(s)-len(w)])
	}
	return orDefault(s, "h")
}

// FuzzParseRoute feeds ParseRoute arbitrary TOML, seeded with routes of
// every rule kind. It must not panic, and every problem it reports names
// the file.
func FuzzParseRoute(f *testing.F) {
	for _, s := range []string{
		"",
		"[[tiers]]\nname = \"fast\"\nmodel = \"haiku\"\n[[tiers]]\nname = \"strong\"\nmodel = \"opus\"\n",
		"[[tiers]]\nname = \"strong\"\nmodel = \"claude-opus\"\n[[rules]]\ntier = \"strong\"\ncallout = \"error\"\n[[rules]]\ntier = \"strong\"\ntool = \"kubectl\"\n",
		"[[rules]]\ntier = \"missing\"\n",
		"[[tiers]]\nname = \"a\"\n[[tiers]]\nname = \"a\"\n",
		"[[tiers]]\nname = \"a\"\nmodel = \"m\"\n[[rules]]\ntier = \"a\"\ntool = \"[\"\n",
		"tiers = 3\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRoute("route.toml", data)
		if err != nil {
			if !strings.Contains(err.Error(), "route.toml") {
				t.Errorf("ParseRoute error does not name the file: %v", err)
			}
			return
		}
		if r == nil {
			t.Error("ParseRoute returned neither a route nor an error")
		}
	})
}
