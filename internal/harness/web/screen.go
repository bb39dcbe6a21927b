package web

// The screen is the page's accessibility tree as Chromium computes it
// for assistive technology: roles, accessible names, values and states.
// Reading it, rather than the DOM or pixels, makes a check say what a
// user is told ("a button named Sign in"), not how the markup builds it.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// node is a node of the screen: an accessibility node that is not
// ignored, with the ignored and purely structural nodes between it and
// its children removed.
type node struct {
	Role, Name, Value string
	// States are the node's boolean and level properties that a user is
	// told of ("checked", "disabled", "level=2"), in a fixed order.
	States   []string
	Backend  cdp.BackendNodeID
	Children []*node
}

// Screen is a snapshot of the accessibility tree.
type Screen struct {
	Root *node
}

// shownStates are the properties a screen line shows, in this order.
var shownStates = []string{"level", "checked", "pressed", "selected", "expanded", "disabled", "required", "invalid"}

// structural roles carry no meaning of their own: their children take
// their place on the screen.
var structural = map[string]bool{"generic": true, "none": true, "presentation": true, "LineBreak": true, "": true}

func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var x any
	if json.Unmarshal(v.Value, &x) != nil {
		return ""
	}
	switch x := x.(type) {
	case string:
		return strings.Join(strings.Fields(x), " ")
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// snapshot reads the page's full accessibility tree.
func snapshot(ctx context.Context) (*Screen, error) {
	res, err := chromedp.Call(ctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return nil, fmt.Errorf("reading the accessibility tree: %w", err)
	}
	byID := map[accessibility.NodeID]*accessibility.Node{}
	var root *accessibility.Node
	for _, n := range res.Nodes {
		byID[n.NodeID] = n
		if root == nil && n.ParentID == "" {
			root = n
		}
	}
	if root == nil {
		return nil, fmt.Errorf("reading the accessibility tree: no root node")
	}
	var build func(n *accessibility.Node, depth int) []*node
	build = func(n *accessibility.Node, depth int) []*node {
		var kids []*node
		if depth < 256 {
			for _, id := range n.ChildIDs {
				if c := byID[id]; c != nil {
					kids = append(kids, build(c, depth+1)...)
				}
			}
		}
		role := axString(n.Role)
		// An inline text box is a line of layout of its text, which the
		// screen already shows; a list marker is the bullet of its item.
		if n.Ignored || role == "InlineTextBox" || role == "ListMarker" || (structural[role] && axString(n.Name) == "") {
			return kids
		}
		out := &node{Role: role, Name: axString(n.Name), Value: axString(n.Value), Backend: n.BackendDOMNodeID, Children: kids}
		props := map[string]string{}
		for _, p := range n.Properties {
			props[string(p.Name)] = axString(p.Value)
		}
		for _, s := range shownStates {
			switch v := props[s]; {
			case s == "level" && v != "":
				out.States = append(out.States, "level="+v)
			case v == "true" || v == "mixed":
				out.States = append(out.States, s+map[bool]string{true: "", false: "=mixed"}[v == "true"])
			}
		}
		// A text run that repeats its parent's name or value says it twice.
		if len(kids) == 1 && kids[0].Role == "StaticText" && (kids[0].Name == out.Name || kids[0].Name == out.Value) && len(kids[0].Children) == 0 {
			out.Children = nil
		}
		return []*node{out}
	}
	nodes := build(root, 0)
	if len(nodes) != 1 {
		return &Screen{Root: &node{Role: "RootWebArea", Children: nodes}}, nil
	}
	return &Screen{Root: nodes[0]}, nil
}

// Text renders the screen one node a line, indented by depth:
//
//   - heading "Welcome, Ada" level=1
//   - textbox "Email" value="ada@example.com" required
func (s *Screen) Text() string {
	var b strings.Builder
	var walk func(n *node, depth int)
	walk = func(n *node, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		role := n.Role
		if role == "StaticText" {
			role = "text"
		}
		b.WriteString("- " + role)
		if n.Name != "" {
			fmt.Fprintf(&b, " %q", n.Name)
		}
		if n.Value != "" {
			fmt.Fprintf(&b, " value=%q", n.Value)
		}
		for _, st := range n.States {
			b.WriteString(" " + st)
		}
		b.WriteByte('\n')
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(s.Root, 0)
	return b.String()
}

// all lists the screen's nodes in document order.
func (s *Screen) all() []*node {
	var list []*node
	var walk func(n *node)
	walk = func(n *node) {
		list = append(list, n)
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(s.Root)
	return list
}

// matches reports whether n is what t names.
func (t Target) matches(n *node) bool {
	if t.Role != "" && !strings.EqualFold(t.Role, n.Role) && !(t.Role == "text" && n.Role == "StaticText") {
		return false
	}
	if t.Name != "" && strings.Join(strings.Fields(t.Name), " ") != n.Name {
		return false
	}
	if t.NameContains != "" && !strings.Contains(n.Name, t.NameContains) {
		return false
	}
	if t.Value != "" && t.Value != n.Value {
		return false
	}
	return true
}

// find returns the nodes that match t.
func (s *Screen) find(t Target) []*node {
	var list []*node
	for _, n := range s.all() {
		if t.matches(n) {
			list = append(list, n)
		}
	}
	return list
}

// pick is the one node t names: its Nth match, or its only one.
func (s *Screen) pick(t Target) (*node, error) {
	list := s.find(t)
	switch {
	case t.Nth != nil && *t.Nth < len(list):
		return list[*t.Nth], nil
	case t.Nth != nil:
		return nil, fmt.Errorf("%s: %d nodes match, no #%d", t, len(list), *t.Nth)
	case len(list) == 1:
		return list[0], nil
	case len(list) == 0:
		return nil, fmt.Errorf("%s: no such node on the screen", t)
	default:
		return nil, fmt.Errorf("%s: %d nodes match; name it more precisely or add nth", t, len(list))
	}
}
