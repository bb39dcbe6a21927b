package review

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// bigCandidate is a candidate of steps steps mined from examples traces,
// each listed in the shadow report (one in fifty failing with a receipt
// drift), with the manifest and fixtures a bundle of it would have.
func bigCandidate(steps, examples int) (*bundle.Manifest, *candidate.Candidate, []byte, map[string]*trace.Trace) {
	c := &candidate.Candidate{ID: "candidate_0123456789abcdef", Name: "big"}
	var src bytes.Buffer
	fmt.Fprintf(&src, "def big(ctx, version):\n")
	for s := 1; s <= steps; s++ {
		st := candidate.Step{Index: s, Kind: trace.KindToolCall, Name: fmt.Sprintf("tool.step%02d", s), Segment: candidate.Deterministic,
			Arguments:   []candidate.Argument{{Key: "version", Kind: candidate.ArgParameter, Parameter: "version"}},
			SideEffects: []trace.SideEffect{{Kind: "file_write", Target: fmt.Sprintf("out/%d", s)}}}
		if s%10 == 0 {
			st.Segment = candidate.Fuzzy
		}
		if s > 1 && s%7 == 0 {
			c.Bindings = append(c.Bindings, candidate.Binding{Step: s, Path: "parameters.ref", FromStep: s - 1, FromField: "output", FromPath: "$.ref"})
		}
		c.Steps = append(c.Steps, st)
		fmt.Fprintf(&src, "    # step %d · tool_call tool.step%02d\n    ctx.tool(\"tool.step%02d\", version = version)\n", s, s, s)
	}
	c.ApprovalPoints = []candidate.ApprovalPoint{{Step: steps / 2, Boundary: "publish", Required: true}}
	c.Parameters = []candidate.Parameter{{Name: "version", Key: "version", Type: "string", Examples: []any{"1.0.0", "1.0.1", "1.0.2", "1.0.3", "1.0.4"}}}
	rep := &candidate.ShadowReport{Pass: false, ComparedTraces: examples}
	fixtures := map[string]*trace.Trace{}
	for e := range examples {
		id := fmt.Sprintf("run_%04d", e)
		t := &trace.Trace{ID: id}
		st := candidate.ShadowTrace{TraceID: id, Role: candidate.RoleSource, Status: candidate.StatusPass, Fitness: 1, ReplayOracle: &candidate.OracleReport{Passed: true}}
		for s := 1; s <= steps; s++ {
			t.Actions = append(t.Actions, trace.Action{ID: fmt.Sprintf("a%d", s), Kind: trace.KindToolCall, Name: fmt.Sprintf("tool.step%02d", s), Parameters: map[string]any{"version": fmt.Sprintf("1.0.%d", e)}})
			st.Alignment = append(st.Alignment, candidate.Move{Kind: candidate.MoveSync, Step: s, ActionIndex: s - 1, ActionID: fmt.Sprintf("a%d", s)})
		}
		if e%50 == 7 {
			st.Status = candidate.StatusFail
			st.ReplayOracle = &candidate.OracleReport{Divergence: &candidate.Divergence{Path: "/effect_receipts/0/sha256", Left: "x", Right: "y", Message: "values differ"}}
		}
		fixtures[id] = t
		rep.Traces = append(rep.Traces, st)
		c.Examples = append(c.Examples, candidate.Example{TraceID: id})
	}
	m := &bundle.Manifest{CandidateID: c.ID, Kind: bundle.KindCandidate, Shadow: rep,
		Workflow: bundle.WorkflowRef{Path: "workflow.star", Name: "big", SHA256: "00"}}
	m.Promotion.Criteria.Status = bundle.StatusNeedsApproval
	return m, c, src.Bytes(), fixtures
}

// BenchmarkPage measures building and rendering the page of a 40-step
// candidate with 1,000 examples, every one listed in the shadow report:
// the matrix builds only the page of rows it shows.
func BenchmarkPage(b *testing.B) {
	m, c, src, fixtures := bigCandidate(40, 1000)
	b.ResetTimer()
	for b.Loop() {
		p := Build(m, c, src, fixtures)
		if err := renderPage(io.Discard, view{Page: p, Token: "t"}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPageBudget holds the page of a 40-step, 1,000-example candidate to
// its budget of a second, with room for a slow machine: a matrix that
// rendered every cell would take several.
func TestPageBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	m, c, src, fixtures := bigCandidate(40, 1000)
	start := time.Now()
	p := Build(m, c, src, fixtures)
	var buf bytes.Buffer
	if err := renderPage(&buf, view{Page: p, Token: "t"}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took > time.Second {
		t.Errorf("page of 40 steps × 1,000 examples took %v, want under 1s", took)
	}
	if len(p.Matrix.Rows) != RowsPerPage || p.Matrix.Pages != 20 || p.Matrix.Failing != 20 || p.Matrix.Rows[0].Receipts.State != CellDivergent {
		t.Errorf("matrix rows %d pages %d failing %d; want a page of %d, failing first", len(p.Matrix.Rows), p.Matrix.Pages, p.Matrix.Failing, RowsPerPage)
	}
	t.Logf("page: %v, %d bytes", took, buf.Len())
}
