package replay

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestShadowPinnedPositions checks that a source example is compared at
// the positions or the start mining recorded, with the moves of that
// occurrence, while positions or a start that do not name the steps in
// the trace are not trusted: the trace is then aligned as if it recorded
// none, here at the first occurrence.
func TestShadowPinnedPositions(t *testing.T) {
	tests := []struct {
		name        string
		example     candidate.Example
		moves       []string
		interleaved int
	}{
		{"gapped, at its positions", candidate.Example{Positions: []int{2, 4}}, []string{"=1@2", "=2@4"}, 1},
		{"gapped, positions of other actions", candidate.Example{Positions: []int{1, 4}}, []string{"=1@0", "=2@1"}, 0},
		{"gapped, positions past the end", candidate.Example{Positions: []int{2, 5}}, []string{"=1@0", "=2@1"}, 0},
		{"contiguous, at its start", candidate.Example{StartIndex: 3}, []string{"=1@3", "=2@4"}, 0},
		{"contiguous, start past the end", candidate.Example{StartIndex: 4}, []string{"=1@0", "=2@1"}, 0},
		{"contiguous, negative start", candidate.Example{StartIndex: -1}, []string{"=1@0", "=2@1"}, 0},
		// The trace ends after the first step of that occurrence.
		{"contiguous, start of a run the trace cuts short", candidate.Example{StartIndex: 5}, []string{"=1@0", "=2@1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := seq("t", "A B x A B A")
			if tt.example.Positions != nil {
				tr = seq("t", "A B A read B")
				tr.Actions[3].Kind = trace.KindObservation
			}
			c := cand("A B")
			ex := tt.example
			ex.TraceID, ex.SourceHash = tr.ID, tr.SourceHash
			c.Examples = []candidate.Example{ex}
			if ex.Positions != nil {
				// The other examples say the candidate was mined with gaps.
				c.Examples = append(c.Examples, candidate.Example{TraceID: "o", SourceHash: "sha256:o", Positions: []int{0, 1}})
			}
			rep := Shadow(c, []*trace.Trace{tr}, nil)
			st := rep.Traces[0]
			if diff := cmp.Diff(tt.moves, short(st.Alignment)); diff != "" {
				t.Errorf("alignment (-want +got):\n%s", diff)
			}
			if st.Interleaved != tt.interleaved {
				t.Errorf("interleaved %d, want %d", st.Interleaved, tt.interleaved)
			}
		})
	}
}

// TestShadowEffectMessage checks that a side effect that differs from the
// step's is described with its capability and mutation, which are what a
// reviewer needs to see when only they differ.
func TestShadowEffectMessage(t *testing.T) {
	s1, s2 := release("s1", "release-1"), release("s2", "release-2")
	h := release("h", "release-3")
	h.Actions[2].SideEffects = []trace.SideEffect{{Kind: "file_write", Target: "harn.toml", Capability: "fs.admin", Mutation: "append"}}
	rep := Shadow(releaseCandidate(s1, s2), []*trace.Trace{s1, s2}, []*trace.Trace{h})
	want := "step 2 update_manifest: candidate declares side effects [file_write harn.toml (fs.write)], action h-manifest requested [file_write harn.toml (fs.admin) append]"
	var got []string
	for _, st := range rep.Traces {
		for _, d := range st.Details {
			got = append(got, d.Message)
		}
	}
	if !slices.Contains(got, want) {
		t.Errorf("details %q, want one %q", got, want)
	}
}

// TestShadowOutputFallback checks that a step's expected output is
// compared with the action's output when the trace observed none.
func TestShadowOutputFallback(t *testing.T) {
	s1, s2 := release("s1", "release-1"), release("s2", "release-2")
	h := release("h", "release-3")
	h.Actions[2].Output = map[string]any{"ok": false}
	rep := Shadow(releaseCandidate(s1, s2), []*trace.Trace{s1, s2}, []*trace.Trace{h})
	st := rep.Traces[len(rep.Traces)-1]
	if st.TraceID != "h" || !slices.ContainsFunc(st.Details, func(p candidate.Problem) bool { return p.Code == candidate.CodeOutputDiffers }) {
		t.Errorf("trace %s details %+v, want %s", st.TraceID, st.Details, candidate.CodeOutputDiffers)
	}
}

// TestShadowReceiptDriftMessage checks that receipt drift names the
// receipt field that drifted.
func TestShadowReceiptDriftMessage(t *testing.T) {
	s1, s2 := release("s1", "release-1"), release("s2", "release-2")
	h := release("h", "release-3")
	h.ReplayRun = map[string]any{
		"run_id":          "run_h",
		"effect_receipts": []any{map[string]any{"receipt_id": "r", "sha256": "changed", "size": json.Number("12")}},
	}
	rep := Shadow(releaseCandidate(s1, s2), []*trace.Trace{s1, s2}, []*trace.Trace{h})
	st := rep.Traces[len(rep.Traces)-1]
	i := slices.IndexFunc(st.Details, func(p candidate.Problem) bool { return p.Code == candidate.CodeReceiptDrift })
	if i < 0 || !strings.HasPrefix(st.Details[i].Message, "replay run diverges from the candidate's expected receipts at /effect_receipts/0/sha256: ") {
		t.Errorf("details %+v, want receipt drift at /effect_receipts/0/sha256", st.Details)
	}
}

// TestApplyVerifiedNotRead checks that an example verified before and
// not listed is counted as passed without its trace being looked for:
// the sources here lack those traces, and the candidate still passes,
// whether the sources are indexed (ApplyStream) or handed over in
// batches (ApplyBatches).
func TestApplyVerifiedNotRead(t *testing.T) {
	c := cand("a b")
	c.ID = "candidate_v"
	var all []*trace.Trace
	for i := range 5 {
		tr := seq("t"+itoa(i), "a b")
		all = append(all, tr)
		c.Examples = append(c.Examples, candidate.Example{TraceID: tr.ID, SourceHash: tr.SourceHash})
	}
	o := Options{ListPassing: 2, Verified: func(*candidate.Candidate) []bool { return []bool{true, true, true, true, true} }}
	listed := []*trace.Trace{all[0], all[4]}
	noHeldout := func(func([]*trace.Trace) error) error { return nil }
	for _, road := range []struct {
		name  string
		apply func(r *candidate.Report) error
	}{
		{"indexed", func(r *candidate.Report) error {
			return ApplyStream(r, o, func(*candidate.Candidate) (Sources, error) { return IndexSources(listed), nil }, noHeldout)
		}},
		{"batches", func(r *candidate.Report) error {
			return ApplyBatches(r, o, func(_ *candidate.Candidate, yield func([]*trace.Trace) error) error { return yield(listed) }, noHeldout)
		}},
	} {
		t.Run(road.name, func(t *testing.T) {
			r := &candidate.Report{Candidates: []candidate.Candidate{*c}, RejectedCandidates: []candidate.Candidate{}}
			if err := road.apply(r); err != nil {
				t.Fatal(err)
			}
			if len(r.Candidates) != 1 {
				t.Fatalf("candidate rejected: %+v", r.RejectedCandidates)
			}
			if sh := r.Candidates[0].Shadow; sh.PassedNotListed != 3 || len(sh.Traces) != 2 {
				t.Errorf("passed not listed %d, traces %d; want 3 and 2", sh.PassedNotListed, len(sh.Traces))
			}
		})
	}
}
