package codegen

import (
	"strings"
	"unicode/utf8"
)

// lineWidth is the column budget of generated code. An expression that fits
// is written on one line; one that does not is broken one element per
// line, outermost bracket first, in the style of black and buildifier.
// Atoms (a long string literal) are never broken, so a line can still
// exceed it.
const lineWidth = 100

// indentUnit is one level of indentation.
const indentUnit = "    "

// A node is an expression laid out for printing: either an atom, written
// as is, or a bracketed list of child nodes ("ctx.tool(" … ")", "{" … "}",
// "[" … "]"). Dictionary entries, keyword arguments and assignments are
// children with a prefix ("key": , name = , **).
//
// The layout is deliberately simple, not a general pretty-printer: it
// needs only bracketed sequences, and choosing per node between flat and
// one-element-per-line output keeps diffs of regenerated workflows small.
type node struct {
	prefix string
	atom   string
	open   string
	items  []*node
	close  string
	// width is the flat width in runes, prefix included, computed once by
	// the constructors so layout is linear in the output size.
	width int
}

// atom returns a node written as s.
func atom(s string) *node {
	return &node{atom: s, width: utf8.RuneCountInString(s)}
}

// group returns a bracketed node over items.
func group(open string, items []*node, close string) *node {
	n := &node{open: open, items: items, close: close}
	n.width = utf8.RuneCountInString(open) + utf8.RuneCountInString(close)
	for i, it := range items {
		if i > 0 {
			n.width += len(", ")
		}
		n.width += it.width
	}
	return n
}

// withPrefix sets n's prefix and returns n.
func (n *node) withPrefix(p string) *node {
	n.prefix = p
	n.width += utf8.RuneCountInString(p)
	return n
}

// composite reports whether n is a bracketed node.
func (n *node) composite() bool { return n.open != "" }

// flat writes n on one line.
func (n *node) flat(b *strings.Builder) {
	b.WriteString(n.prefix)
	if !n.composite() {
		b.WriteString(n.atom)
		return
	}
	b.WriteString(n.open)
	for i, it := range n.items {
		if i > 0 {
			b.WriteString(", ")
		}
		it.flat(b)
	}
	b.WriteString(n.close)
}

// write writes n starting at column col of a line indented by depth
// levels; trail is the width of what follows n on its last line (a comma).
// A node that does not fit is broken: each child on its own line, one
// level deeper, with a trailing comma, and the closing bracket back at
// the node's indentation.
func (n *node) write(b *strings.Builder, depth, col, trail int) {
	if !n.composite() || len(n.items) == 0 || col+n.width+trail <= lineWidth {
		n.flat(b)
		return
	}
	b.WriteString(n.prefix)
	b.WriteString(n.open)
	b.WriteByte('\n')
	inner := strings.Repeat(indentUnit, depth+1)
	for _, it := range n.items {
		b.WriteString(inner)
		it.write(b, depth+1, len(inner), len(","))
		b.WriteString(",\n")
	}
	b.WriteString(strings.Repeat(indentUnit, depth))
	b.WriteString(n.close)
}

// statement writes n as a statement indented by depth levels, with its
// newline.
func statement(b *strings.Builder, depth int, n *node) {
	indent := strings.Repeat(indentUnit, depth)
	b.WriteString(indent)
	n.write(b, depth, len(indent), 0)
	b.WriteByte('\n')
}
