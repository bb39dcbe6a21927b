package review

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Cell states of the alignment matrix.
const (
	CellMatched   = "matched"
	CellMissing   = "missing"
	CellExtra     = "extra"
	CellDivergent = "divergent"
	// CellUnmatched is every cell of a held-out trace that does not
	// contain the procedure, CellNone a receipts cell of a trace the
	// replay oracle did not compare.
	CellUnmatched = "unmatched"
	CellNone      = "none"
)

// RowsPerPage is how many traces one page of the matrix shows. A
// candidate mined from a thousand runs has a thousand rows; the page
// shows the traces that failed first, then pages through the rest, and
// the static export samples them.
const RowsPerPage = 50

// Matrix is the alignment of every shadow-compared trace with the
// candidate's steps, one row per trace, one column per step and a last
// column for the replay oracle's receipts.
type Matrix struct {
	// Steps are the column headings.
	Steps []MatrixStep
	Rows  []Row
	// Total is the number of listed traces, Failing how many failed or
	// did not match; NotListed the passing source examples shadow
	// replay counted but did not list.
	Total, Failing, NotListed int
	// Page is the page shown (0-based) and Pages how many there are;
	// Sampled is set when Rows are a sample rather than a page.
	Page, Pages int
	Sampled     bool
}

// MatrixStep is a column: a candidate step, with what the step expects
// (for a cell's detail).
type MatrixStep struct {
	Step     int
	Label    string
	Expected string
}

// Row is one trace.
type Row struct {
	TraceID, Role, Status string
	Fitness               string
	FirstDivergentStep    int
	// FirstPath is the JSON path of the first divergence found on the
	// trace (a step's detail or the receipts'), "" when none.
	FirstPath   string
	Interleaved int
	Cells       []Cell
	Receipts    Cell
}

// Cell is one step of one trace.
type Cell struct {
	ID    string
	State string
	// Action is the redacted trace action aligned with the step, as
	// indented JSON; Expected the step's expectation. Extra lists the
	// actions the trace had after this step that the candidate does not
	// (log moves), Retries the failed attempts folded into this step.
	Action   string
	ActionID string
	// Note says what a receipts cell compared.
	Note     string
	Expected string
	Extra    []string
	// Between lists the trace's actions between this step's action and
	// the next step's that a gapped candidate tolerates (observations,
	// failed attempts, edits of a retry), at most maxBetween of them.
	Between []string
	Retries int
	Details []candidate.Problem
	Path    string
	// Left and Right are a receipt divergence's two values.
	Left, Right string
}

// Title is the cell's accessible summary.
func (c Cell) Title() string {
	s := c.State
	if c.Path != "" {
		s += " at " + c.Path
	}
	if len(c.Extra) > 0 {
		s += fmt.Sprintf(", %d extra action(s)", len(c.Extra))
	}
	if c.Retries > 0 {
		s += fmt.Sprintf(", %d failed attempt(s) folded in", c.Retries)
	}
	return s
}

// Symbol is the cell's short mark, which never carries meaning alone:
// the state is also its class and its title.
func (c Cell) Symbol() string {
	switch c.State {
	case CellMatched:
		return "✓"
	case CellMissing:
		return "∅"
	case CellExtra:
		return "+"
	case CellDivergent:
		return "≠"
	case CellUnmatched:
		return "—"
	}
	return "·"
}

// buildMatrix builds page 0 of the matrix; Page.WithMatrixPage picks
// another.
func buildMatrix(m *bundle.Manifest, c *candidate.Candidate, fixtures map[string]*trace.Trace) Matrix {
	return matrixWindow(m, c, fixtures, 0, false)
}

// order lists the indexes of the shadow traces, failing and unmatched
// ones first, each group in the report's order.
func order(traces []candidate.ShadowTrace) []int {
	var bad, good []int
	for i, t := range traces {
		if t.Status == candidate.StatusPass {
			good = append(good, i)
		} else {
			bad = append(bad, i)
		}
	}
	return append(bad, good...)
}

// matrixWindow builds the rows of one page, or, with sample, the failing
// rows and an evenly spaced sample of the passing ones, RowsPerPage in
// all at most. Only the rows shown are built: a cell's detail renders the
// trace's action, and a thousand-trace candidate would otherwise render
// forty thousand.
func matrixWindow(m *bundle.Manifest, c *candidate.Candidate, fixtures map[string]*trace.Trace, page int, sample bool) Matrix {
	mx := Matrix{}
	var steps []candidate.Step
	if c != nil {
		steps = c.Steps
	}
	for _, s := range steps {
		mx.Steps = append(mx.Steps, MatrixStep{Step: s.Index, Label: fmt.Sprintf("%d %s", s.Index, s.Name), Expected: indent(expectation(s))})
	}
	if m.Shadow == nil {
		return mx
	}
	traces := m.Shadow.Traces
	mx.Total = len(traces)
	mx.NotListed = m.Shadow.PassedNotListed
	idx := order(traces)
	for _, i := range idx {
		if traces[i].Status != candidate.StatusPass {
			mx.Failing++
		}
	}
	mx.Pages = (len(idx) + RowsPerPage - 1) / RowsPerPage
	var shown []int
	switch {
	case sample && len(idx) > RowsPerPage:
		mx.Sampled = true
		shown = append(shown, idx[:min(mx.Failing, RowsPerPage)]...)
		rest := idx[mx.Failing:]
		if k := RowsPerPage - len(shown); k > 0 && len(rest) > 0 {
			for j := range k {
				shown = append(shown, rest[j*len(rest)/k])
			}
		}
	default:
		page = max(0, min(page, mx.Pages-1))
		mx.Page = page
		lo := page * RowsPerPage
		shown = idx[lo:min(lo+RowsPerPage, len(idx))]
	}
	retries := map[string][]int{}
	if c != nil {
		for _, ex := range c.Examples {
			if len(ex.Retries) > 0 {
				retries[ex.TraceID] = ex.Retries
			}
		}
	}
	for _, i := range shown {
		r := buildRow(i, traces[i], mx.Steps, fixtures[traces[i].TraceID])
		if rs := retries[traces[i].TraceID]; traces[i].Role == candidate.RoleSource && len(rs) > 0 {
			for k := range r.Cells {
				if k < len(rs) {
					r.Cells[k].Retries = rs[k]
				}
			}
		}
		mx.Rows = append(mx.Rows, r)
	}
	return mx
}

// expectation is what a step expects of the action aligned with it.
func expectation(s candidate.Step) any {
	e := map[string]any{"kind": s.Kind, "name": s.Name, "segment": s.Segment}
	if len(s.Arguments) > 0 {
		e["arguments"] = s.Arguments
	}
	if len(s.SideEffects) > 0 {
		e["side_effects"] = s.SideEffects
	}
	if s.Approval != nil {
		e["approval"] = s.Approval
	}
	if s.ExpectedOutput != nil {
		e["expected_output"] = s.ExpectedOutput
	}
	return e
}

func buildRow(i int, st candidate.ShadowTrace, steps []MatrixStep, t *trace.Trace) Row {
	r := Row{TraceID: st.TraceID, Role: st.Role, Status: st.Status, Fitness: strconv.FormatFloat(st.Fitness, 'f', 2, 64),
		FirstDivergentStep: st.FirstDivergentStep, Interleaved: st.Interleaved}
	col := map[int]int{}
	for k, s := range steps {
		col[s.Step] = k
		r.Cells = append(r.Cells, Cell{ID: fmt.Sprintf("c%d-%d", i, s.Step), State: CellMissing, Expected: s.Expected})
	}
	action := func(ai int) string {
		if t == nil || ai < 0 || ai >= len(t.Actions) {
			return ""
		}
		return indent(t.Actions[ai])
	}
	if st.Status == candidate.StatusUnmatched {
		// The trace does not contain the procedure: its alignment, all
		// model moves, says nothing a cell should repeat.
		for k := range r.Cells {
			r.Cells[k].State = CellUnmatched
		}
		r.Receipts = Cell{ID: fmt.Sprintf("c%d-r", i), State: CellNone}
		return r
	}
	last := -1 // the column of the last step move, for log moves after it
	for _, mv := range st.Alignment {
		switch mv.Kind {
		case candidate.MoveSync:
			if k, ok := col[mv.Step]; ok {
				r.Cells[k].State = CellMatched
				r.Cells[k].ActionID = mv.ActionID
				r.Cells[k].Action = action(mv.ActionIndex)
				last = k
			}
		case candidate.MoveModel:
			if k, ok := col[mv.Step]; ok {
				r.Cells[k].State = CellMissing
				last = k
			}
		case candidate.MoveLog:
			k := max(last, 0)
			if k < len(r.Cells) {
				desc := mv.Signature
				if mv.ActionID != "" {
					desc = mv.ActionID + " " + desc
				}
				r.Cells[k].Extra = append(r.Cells[k].Extra, desc)
				if r.Cells[k].State == CellMatched {
					r.Cells[k].State = CellExtra
				}
			}
		}
	}
	between(r.Cells, st.Alignment, col, t)
	for _, d := range st.Details {
		if d.Code == candidate.CodeReceiptDrift {
			continue
		}
		if k, ok := col[d.Step]; ok {
			r.Cells[k].Details = append(r.Cells[k].Details, d)
			if d.Code != candidate.CodeSignatureMismatch {
				r.Cells[k].State = CellDivergent
				if r.Cells[k].Path == "" {
					r.Cells[k].Path = d.Path
				}
			}
		}
		if r.FirstPath == "" && d.Path != "" {
			r.FirstPath = d.Path
		}
	}
	r.Receipts = Cell{ID: fmt.Sprintf("c%d-r", i), State: CellNone}
	if o := st.ReplayOracle; o != nil {
		r.Receipts.State = CellMatched
		r.Receipts.Note = fmt.Sprintf("replay oracle: %d receipt position(s) compared", st.ComparedReceipts)
		if o.Divergence != nil {
			r.Receipts.State = CellDivergent
			r.Receipts.Path = o.Divergence.Path
			r.Receipts.Left = compact(o.Divergence.Left)
			r.Receipts.Right = compact(o.Divergence.Right)
			r.Receipts.Details = []candidate.Problem{{Code: candidate.CodeReceiptDrift, Message: o.Divergence.Message, Path: o.Divergence.Path}}
			if r.FirstPath == "" {
				r.FirstPath = o.Divergence.Path
			}
		}
	}
	return r
}

// maxBetween bounds the actions a cell lists between two steps.
const maxBetween = 20

// between fills each cell's Between with the trace's actions that lie
// between its aligned action and the next step's and that the alignment
// does not list as log moves: the actions shadow replay counted as
// Interleaved.
func between(cells []Cell, moves []candidate.Move, col map[int]int, t *trace.Trace) {
	if t == nil {
		return
	}
	logged := map[int]bool{}
	type at struct{ k, ai int }
	var synced []at
	for _, mv := range moves {
		switch mv.Kind {
		case candidate.MoveLog:
			logged[mv.ActionIndex] = true
		case candidate.MoveSync:
			if k, ok := col[mv.Step]; ok {
				synced = append(synced, at{k, mv.ActionIndex})
			}
		}
	}
	for i := 0; i+1 < len(synced); i++ {
		from, to := synced[i].ai, synced[i+1].ai
		for ai := from + 1; ai < to && ai < len(t.Actions); ai++ {
			if ai < 0 || logged[ai] {
				continue
			}
			c := &cells[synced[i].k]
			if len(c.Between) == maxBetween {
				c.Between = append(c.Between, "…")
				break
			}
			a := t.Actions[ai]
			c.Between = append(c.Between, strings.TrimSpace(a.ID+" "+string(a.Kind)+" "+a.Name))
		}
	}
}
