package review

import (
	"testing"
)

// TestGraph checks the graph's classes, approval boundaries and data-flow
// edges, and that its text alternative says all three.
func TestGraph(t *testing.T) {
	m, c, _, _ := bigCandidate(40, 1)
	c.Steps[4].Kind = "human_approval"
	g := buildGraph(m, c)
	if len(g.Nodes) != 40 {
		t.Fatalf("nodes = %d, want 40", len(g.Nodes))
	}
	classes := map[string]int{}
	for _, n := range g.Nodes {
		classes[n.Class]++
		if n.Alt == "" || n.Y+n.H > g.Height {
			t.Errorf("node %d: alt %q, bottom %d outside height %d", n.Step, n.Alt, n.Y+n.H, g.Height)
		}
	}
	if classes[ClassModel] != 4 || classes[ClassHuman] != 1 || classes[ClassDeterministic] != 35 {
		t.Errorf("classes = %v, want 35 deterministic, 4 model (every tenth step), 1 human", classes)
	}
	if len(g.Boundaries) != 1 || g.Boundaries[0].Step != 20 || !g.Boundaries[0].Required {
		t.Errorf("boundaries = %+v, want the required one before step 20", g.Boundaries)
	}
	if len(g.Edges) != 5 || g.Edges[0].From != 6 || g.Edges[0].To != 7 {
		t.Errorf("edges = %+v, want 5, the first from step 6 to 7", g.Edges)
	}
	want := "40 steps: 35 deterministic, 4 needing a model, 1 needing a person; 1 approval boundaries; 5 data-flow edges"
	if g.Summary != want {
		t.Errorf("summary = %q, want %q", g.Summary, want)
	}
}
