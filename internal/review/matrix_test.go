package review

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/bundle"
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestMatrixCells checks how alignment moves and details become cells: a
// sync move is matched, a model move missing, a log move an extra action
// on the step before it, a step detail divergent at its path, retries
// folded into a source example's step are counted, and every cell of an
// unmatched held-out trace is unmatched.
func TestMatrixCells(t *testing.T) {
	steps := []candidate.Step{{Index: 1, Name: "a"}, {Index: 2, Name: "b"}, {Index: 3, Name: "c"}}
	c := &candidate.Candidate{Steps: steps, Examples: []candidate.Example{{TraceID: "t1", Retries: []int{0, 2, 0}}}}
	sync := func(step, ai int) candidate.Move {
		return candidate.Move{Kind: candidate.MoveSync, Step: step, ActionIndex: ai, ActionID: "x"}
	}
	m := &bundle.Manifest{Shadow: &candidate.ShadowReport{Traces: []candidate.ShadowTrace{
		{TraceID: "t1", Role: candidate.RoleSource, Status: candidate.StatusPass, Interleaved: 2, Alignment: []candidate.Move{sync(1, 0), sync(2, 3), sync(3, 4)}},
		{TraceID: "t2", Role: candidate.RoleHeldout, Status: candidate.StatusFail,
			Alignment: []candidate.Move{sync(1, 0), {Kind: candidate.MoveLog, ActionIndex: 1, ActionID: "stray", Signature: "tool_call:rm:"}, {Kind: candidate.MoveModel, Step: 2, ActionIndex: -1}, sync(3, 2)},
			Details: []candidate.Problem{
				{Code: candidate.CodeSignatureMismatch, Step: 2, Message: "missing"},
				{Code: candidate.CodeSideEffectsDiffer, Step: 3, Path: "/side_effects/0/target", Message: "differs"},
			}},
		{TraceID: "t3", Role: candidate.RoleHeldout, Status: candidate.StatusUnmatched, Alignment: []candidate.Move{{Kind: candidate.MoveModel, Step: 1, ActionIndex: -1}, {Kind: candidate.MoveModel, Step: 2, ActionIndex: -1}}},
	}}}
	fixtures := map[string]*trace.Trace{
		"t1": {ID: "t1", Actions: []trace.Action{{ID: "a0", Name: "a"}, {ID: "r", Kind: trace.KindObservation, Name: "fs.read"}, {ID: "f", Kind: trace.KindToolCall, Name: "b"}, {ID: "b0", Name: "b"}, {ID: "c0", Name: "c"}}},
		"t2": {ID: "t2", Actions: []trace.Action{{ID: "a0", Name: "a"}, {ID: "stray", Name: "rm"}, {ID: "c0", Name: "c"}}},
	}
	mx := matrixWindow(m, c, fixtures, 0, false)
	got := map[string][]string{}
	for _, r := range mx.Rows {
		for _, cell := range r.Cells {
			got[r.TraceID] = append(got[r.TraceID], cell.Title())
		}
	}
	want := map[string][]string{
		"t2": {"extra, 1 extra action(s)", "missing", "divergent at /side_effects/0/target"},
		"t3": {"unmatched", "unmatched", "unmatched"},
		"t1": {"matched", "matched, 2 failed attempt(s) folded in", "matched"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if ids := []string{mx.Rows[0].TraceID, mx.Rows[1].TraceID, mx.Rows[2].TraceID}; strings.Join(ids, ",") != "t2,t3,t1" {
		t.Errorf("row order = %v, want the failing and unmatched traces first", ids)
	}
	if r := mx.Rows[0]; r.FirstPath != "/side_effects/0/target" || !strings.Contains(r.Cells[2].Action, `"id": "c0"`) || r.Cells[0].Extra[0] != "stray tool_call:rm:" {
		t.Errorf("t2: first path %q, step 3 action %q, extra %q", r.FirstPath, r.Cells[2].Action, r.Cells[0].Extra)
	}
	// Between t1's steps 1 and 2 lie a read and a failed attempt; the
	// stray action of t2 is a log move, listed as extra, not between.
	if got := mx.Rows[2].Cells[0].Between; strings.Join(got, "|") != "r observation fs.read|f tool_call b" {
		t.Errorf("t1 step 1 between = %q", got)
	}
	if got := mx.Rows[0].Cells[0].Between; len(got) != 0 {
		t.Errorf("t2 step 1 between = %q, want none (its stray action is extra)", got)
	}
}

// TestMatrixPaging checks that the matrix of many traces shows one page
// of rows, the failing ones first (run 7, 57 and 107 fail, so page 1
// starts at the 48th passing run), and that the sample of the static page
// keeps every failing trace.
func TestMatrixPaging(t *testing.T) {
	m, c, _, fixtures := bigCandidate(3, 120)
	p1 := matrixWindow(m, c, fixtures, 1, false)
	if p1.Pages != 3 || p1.Page != 1 || len(p1.Rows) != RowsPerPage || p1.Rows[0].TraceID != "run_0048" {
		t.Errorf("page 1: pages %d page %d rows %d first %s", p1.Pages, p1.Page, len(p1.Rows), p1.Rows[0].TraceID)
	}
	last := matrixWindow(m, c, fixtures, 99, false)
	if last.Page != 2 || len(last.Rows) != 120-2*RowsPerPage {
		t.Errorf("page 99: page %d rows %d, want the last page", last.Page, len(last.Rows))
	}
	s := matrixWindow(m, c, fixtures, 0, true)
	fail := 0
	for _, r := range s.Rows {
		if r.Status == candidate.StatusFail {
			fail++
		}
	}
	if !s.Sampled || len(s.Rows) != RowsPerPage || fail != s.Failing || s.Failing != 3 {
		t.Errorf("sample: sampled %v rows %d failing shown %d of %d", s.Sampled, len(s.Rows), fail, s.Failing)
	}
}
