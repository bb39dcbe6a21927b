package plan

import (
	"strconv"
	"strings"
)

// Mermaid renders a parsed plan as a Mermaid flowchart for review:
// "flowchart TD", one node per line in file order, then the edges in file
// order with their branch as the edge label. The shape says the kind:
//
//	verify {{ }}   human_gate (( ))   join ([ ])
//	deterministic_command [/ /]       every other kind [ ]
//
// Each label reads "id · kind", then the purpose on a second line.
// Labels are always quoted, and the characters that Mermaid would read as
// syntax (quotes, brackets, braces, parentheses, pipes, angle brackets,
// "#", "&", ";" and backticks) are written as Mermaid entity codes, so no
// purpose can end a label early or inject a node, an edge or HTML;
// newlines become <br/>.
//
// Mermaid node ids are "n_" + the plan id when it is an identifier, else
// "n" + the node's position: both forms cannot collide with each other,
// and the prefix keeps Mermaid keywords such as "end" from being read as
// syntax.
func Mermaid(p *Plan) string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	if p == nil {
		return b.String()
	}
	ids := make(map[string]string, len(p.Nodes))
	for i, n := range p.Nodes {
		ids[n.ID] = mermaidID(n.ID, i)
	}
	for _, n := range p.Nodes {
		label := escapeLabel(n.ID) + " · " + n.Kind
		if n.Purpose != "" {
			label += "<br/>" + escapeLabel(n.Purpose)
		}
		open, closing := shape(n.Kind)
		b.WriteString("    " + ids[n.ID] + open + `"` + label + `"` + closing + "\n")
	}
	for _, e := range p.Edges {
		from, to := ids[e.From], ids[e.To]
		if from == "" || to == "" {
			continue // Parse refuses such a plan; a hand-built one loses the edge, not the chart
		}
		if e.Branch != "" {
			b.WriteString("    " + from + ` -->|"` + escapeLabel(e.Branch) + `"| ` + to + "\n")
		} else {
			b.WriteString("    " + from + " --> " + to + "\n")
		}
	}
	if id := ids[p.Entry]; id != "" {
		b.WriteString("    classDef entry stroke-width:3px\n")
		b.WriteString("    class " + id + " entry\n")
	}
	return b.String()
}

func shape(kind string) (open, closing string) {
	switch kind {
	case "verify":
		return "{{", "}}"
	case "human_gate":
		return "((", "))"
	case "join":
		return "([", "])"
	case "deterministic_command":
		return "[/", "/]"
	}
	return "[", "]"
}

func mermaidID(id string, i int) string {
	if isIdent(id) {
		return "n_" + id
	}
	return "n" + strconv.Itoa(i)
}

// labelEscapes maps each character Mermaid could read as syntax inside a
// quoted label to its entity code. "#" itself is escaped first in effect
// (a single pass over the input), so text that already looks like an
// entity stays literal.
var labelEscapes = strings.NewReplacer(
	`#`, "#35;",
	`"`, "#quot;",
	`&`, "#amp;",
	`<`, "#lt;",
	`>`, "#gt;",
	`[`, "#91;",
	`]`, "#93;",
	`{`, "#123;",
	`}`, "#125;",
	`(`, "#40;",
	`)`, "#41;",
	`|`, "#124;",
	`;`, "#59;",
	"`", "#96;",
	"\r\n", "<br/>",
	"\n", "<br/>",
	"\r", "<br/>",
)

// escapeLabel makes s safe inside a quoted Mermaid label. Other control
// characters become spaces: they have no visible form and could confuse
// a renderer.
func escapeLabel(s string) string {
	s = labelEscapes.Replace(s)
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
