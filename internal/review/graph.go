package review

import (
	"fmt"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// The graph is laid out here, in Go, as numbers and strings; the page
// template draws it as inline SVG, so every label goes through the
// template's escaping like the rest of the page. Steps stand in one
// column in their order; data-flow edges (a later step's argument bound
// to an earlier step's result) arc on the right; an approval boundary is
// a dashed rule above the step that waits for it.

// Layout constants of the graph, in SVG user units.
const (
	nodeX      = 16
	nodeW      = 420
	nodeH      = 44
	nodeGap    = 28
	boundaryH  = 22
	graphPadY  = 12
	edgeMargin = 24
)

// Step classes: what executes a step when the workflow runs.
const (
	ClassDeterministic = "deterministic"
	ClassModel         = "model"
	ClassHuman         = "human"
)

// Graph is the laid-out procedure graph.
type Graph struct {
	Width, Height int
	Nodes         []Node
	Edges         []Edge
	Boundaries    []Boundary
	// Summary is the text alternative of the whole graph.
	Summary string
}

// Node is one step.
type Node struct {
	Step       int
	X, Y, W, H int
	// TextY is the baseline of the label, SubY of the second line.
	TextY, SubY int
	// Class is ClassDeterministic, ClassModel or ClassHuman.
	Class string
	Label string
	// Sub is the second line: the step's side effects or capabilities.
	Sub string
	// Alt is the node's text alternative.
	Alt string
}

// Edge is a data-flow edge from one step's result to a later step's
// argument.
type Edge struct {
	From, To int
	// D is the SVG path; LabelX, LabelY place Label.
	D              string
	Label          string
	LabelX, LabelY int
}

// Boundary is an approval boundary before a step.
type Boundary struct {
	Step        int
	Y, X1, X2   int
	TextY       int
	Label       string
	Required    bool
	Description string
}

// stepClass says what executes step s.
func stepClass(kind trace.Kind, seg candidate.Segment) string {
	switch {
	case kind == trace.KindHumanApproval:
		return ClassHuman
	case seg == candidate.Fuzzy || kind == trace.KindModelCall:
		return ClassModel
	}
	return ClassDeterministic
}

// buildGraph lays out the candidate's steps, or the manifest's step
// summary when report.json could not be read.
func buildGraph(m *bundle.Manifest, c *candidate.Candidate) Graph {
	type step struct {
		index      int
		kind       trace.Kind
		name, sub  string
		class      string
		approval   *candidate.ApprovalPoint
		sideEffect []string
	}
	var steps []step
	if c != nil {
		approvals := map[int]*candidate.ApprovalPoint{}
		for i := range c.ApprovalPoints {
			approvals[c.ApprovalPoints[i].Step] = &c.ApprovalPoints[i]
		}
		for _, s := range c.Steps {
			st := step{index: s.Index, kind: s.Kind, name: s.Name, class: stepClass(s.Kind, s.Segment), approval: approvals[s.Index]}
			for _, se := range s.SideEffects {
				st.sideEffect = append(st.sideEffect, se.Kind+" "+se.Target)
			}
			if len(st.sideEffect) > 0 {
				st.sub = "side effects: " + strings.Join(st.sideEffect, ", ")
			} else if len(s.Capabilities) > 0 {
				st.sub = "needs " + strings.Join(s.Capabilities, ", ")
			} else {
				st.sub = "no side effect"
			}
			if st.approval == nil && s.Approval != nil && s.Approval.Required {
				st.approval = &candidate.ApprovalPoint{Step: s.Index, Boundary: s.Approval.Boundary, Prompt: s.Approval.Prompt, Required: true}
			}
			steps = append(steps, st)
		}
	} else {
		for _, r := range m.DeterministicSteps {
			steps = append(steps, step{index: r.Index, kind: r.Kind, name: r.Name, class: stepClass(r.Kind, candidate.Deterministic), sub: "needs " + strings.Join(r.Capabilities, ", ")})
		}
		for _, r := range m.FuzzySteps {
			steps = append(steps, step{index: r.Index, kind: r.Kind, name: r.Name, class: stepClass(r.Kind, candidate.Fuzzy), sub: "needs a model"})
		}
	}
	g := Graph{}
	y := graphPadY
	pos := map[int]int{} // step → node centre y
	for _, s := range steps {
		if s.approval != nil {
			label := "approval boundary"
			if s.approval.Boundary != "" {
				label += " " + s.approval.Boundary
			}
			desc := label + " before step " + fmt.Sprint(s.index)
			if s.approval.Prompt != "" {
				desc += ": " + s.approval.Prompt
			}
			g.Boundaries = append(g.Boundaries, Boundary{Step: s.index, Y: y + boundaryH/2, X1: nodeX - 8, X2: nodeX + nodeW + 8, TextY: y + boundaryH/2 - 4, Label: label, Required: s.approval.Required, Description: desc})
			y += boundaryH
		}
		n := Node{Step: s.index, X: nodeX, Y: y, W: nodeW, H: nodeH, TextY: y + 18, SubY: y + 36, Class: s.class,
			Label: fmt.Sprintf("%d · %s %s", s.index, s.kind, s.name), Sub: s.sub}
		n.Alt = fmt.Sprintf("step %d, %s, %s %s, %s", s.index, classWords(s.class), s.kind, s.name, s.sub)
		g.Nodes = append(g.Nodes, n)
		pos[s.index] = y + nodeH/2
		y += nodeH + nodeGap
	}
	right := nodeX + nodeW
	if c != nil {
		seen := map[[2]int]bool{}
		lane := 0
		for _, b := range c.Bindings {
			y1, ok1 := pos[b.FromStep]
			y2, ok2 := pos[b.Step]
			if !ok1 || !ok2 || seen[[2]int{b.FromStep, b.Step}] {
				continue
			}
			seen[[2]int{b.FromStep, b.Step}] = true
			lane++
			x := right + edgeMargin*lane
			g.Edges = append(g.Edges, Edge{From: b.FromStep, To: b.Step,
				D:     fmt.Sprintf("M %d %d C %d %d, %d %d, %d %d", right, y1, x, y1, x, y2, right+6, y2),
				Label: fmt.Sprintf("%s %s → %s", b.FromField, b.FromPath, b.Path), LabelX: x + 4, LabelY: (y1+y2)/2 + 4})
		}
	}
	g.Width = right + edgeMargin*(len(g.Edges)+1) + 160
	g.Height = y - nodeGap + graphPadY
	if g.Height < 60 {
		g.Height = 60
	}
	counts := map[string]int{}
	for _, n := range g.Nodes {
		counts[n.Class]++
	}
	g.Summary = fmt.Sprintf("%d steps: %d deterministic, %d needing a model, %d needing a person; %d approval boundaries; %d data-flow edges",
		len(g.Nodes), counts[ClassDeterministic], counts[ClassModel], counts[ClassHuman], len(g.Boundaries), len(g.Edges))
	return g
}

func classWords(class string) string {
	switch class {
	case ClassModel:
		return "needs a model"
	case ClassHuman:
		return "needs a person"
	}
	return "deterministic"
}
