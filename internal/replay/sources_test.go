package replay

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestIndexSources(t *testing.T) {
	a := &trace.Trace{ID: "t1", SourceHash: "sha256:a"}
	dup := &trace.Trace{ID: "t1", SourceHash: "sha256:a"}
	other := &trace.Trace{ID: "t1", SourceHash: "sha256:b"}
	ix := IndexSources([]*trace.Trace{nil, a, dup, other})
	for _, tc := range []struct {
		name     string
		id, hash string
		want     *trace.Trace
	}{
		{"first of two with one id and hash", "t1", "sha256:a", a},
		{"same id, other hash", "t1", "sha256:b", other},
		{"unknown hash", "t1", "sha256:c", nil},
		{"unknown id", "t2", "sha256:a", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ix.Example(&candidate.Example{TraceID: tc.id, SourceHash: tc.hash}); got != tc.want {
				t.Errorf("Example(%s, %s) = %p, want %p", tc.id, tc.hash, got, tc.want)
			}
		})
	}
}

func TestApplyEach(t *testing.T) {
	src := []*trace.Trace{seq("t1", "a b"), seq("t2", "a b")}
	c := cand("a b")
	c.ID = "candidate_x"
	for _, tr := range src {
		c.Examples = append(c.Examples, candidate.Example{TraceID: tr.ID, SourceHash: tr.SourceHash})
	}
	want := &candidate.Report{Candidates: []candidate.Candidate{*c}}
	Apply(want, src, nil)

	var asked []string
	got := &candidate.Report{Candidates: []candidate.Candidate{*c}}
	err := ApplyEach(got, func(c *candidate.Candidate) (Sources, error) {
		asked = append(asked, c.ID)
		return IndexSources(src), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "candidate_x" {
		t.Errorf("examples asked for %v, want [candidate_x]", asked)
	}
	if got.Candidates[0].Shadow == nil || !got.Candidates[0].Shadow.Pass || got.SelectedCandidateID == nil {
		t.Errorf("ApplyEach result %+v, want the candidate shadowed, passing and selected", got.Candidates[0].Shadow)
	}
	if len(got.Candidates[0].Shadow.Traces) != len(want.Candidates[0].Shadow.Traces) {
		t.Errorf("ApplyEach compared %d traces, Apply %d", len(got.Candidates[0].Shadow.Traces), len(want.Candidates[0].Shadow.Traces))
	}

	failed := &candidate.Report{Candidates: []candidate.Candidate{*c}}
	boom := errors.New("disk gone")
	if err := ApplyEach(failed, func(*candidate.Candidate) (Sources, error) { return nil, boom }, nil); !errors.Is(err, boom) {
		t.Fatalf("ApplyEach error = %v, want %v", err, boom)
	}
	if failed.Candidates[0].Shadow != nil {
		t.Error("a failed ApplyEach changed the report")
	}
}

// TestApplyBatches checks that comparing source examples batch by batch
// gives Apply's report, whatever the batches: one trace at a time, all at
// once, out of example order, with traces of no example, a trace handed
// over twice, an example given twice and an example whose trace never
// comes.
func TestApplyBatches(t *testing.T) {
	src := []*trace.Trace{seq("t1", "a b"), seq("t2", "a b"), seq("t3", "a c"), seq("t4", "a b"), seq("t5", "x y")}
	dup := seq("t2", "a c") // same id and hash as t2, handed over later
	build := func() *candidate.Report {
		c := cand("a b")
		c.ID = "candidate_x"
		for _, id := range []string{"t4", "t1", "t2", "t3", "t1", "t9"} {
			c.Examples = append(c.Examples, candidate.Example{TraceID: id, SourceHash: "sha256:" + id})
		}
		other := cand("a c")
		other.ID = "candidate_y"
		other.Examples = []candidate.Example{{TraceID: "t3", SourceHash: "sha256:t3"}}
		return &candidate.Report{Candidates: []candidate.Candidate{*c, *other}}
	}
	heldout := []*trace.Trace{seq("h1", "a b"), seq("h2", "a c")}
	want := build()
	Apply(want, append(slices.Clone(src), dup), heldout)
	wantJSON, err := candidate.EncodeJSON(want)
	if err != nil {
		t.Fatal(err)
	}
	stream := func(yield func([]*trace.Trace) error) error { return yield(heldout) }
	for _, size := range []int{1, 2, 3, len(src) + 1} {
		t.Run(fmt.Sprintf("batches of %d", size), func(t *testing.T) {
			got := build()
			var asked []string
			err := ApplyBatches(got, Options{}, func(c *candidate.Candidate, yield func([]*trace.Trace) error) error {
				asked = append(asked, c.ID)
				// Backwards, so that batches do not follow example order.
				all := append(slices.Clone(src), dup)
				slices.Reverse(all[:len(src)])
				for b := range slices.Chunk(all, size) {
					if err := yield(b); err != nil {
						return err
					}
				}
				return nil
			}, stream)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(asked, []string{"candidate_x", "candidate_y"}) {
				t.Errorf("examples asked for %v, want each candidate once in report order", asked)
			}
			gotJSON, err := candidate.EncodeJSON(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("ApplyBatches report differs from Apply's:\n%s\nwant\n%s", gotJSON, wantJSON)
			}
		})
	}
	// The example whose trace never came fails as missing.
	var codes []string
	for _, st := range want.RejectedCandidates[0].Shadow.Traces {
		for _, d := range st.Details {
			codes = append(codes, st.TraceID+":"+d.Code)
		}
	}
	if !slices.Contains(codes, "t9:"+candidate.CodeExampleMissing) {
		t.Errorf("details %v, want t9 missing", codes)
	}

	failed := build()
	boom := errors.New("disk gone")
	err = ApplyBatches(failed, Options{}, func(c *candidate.Candidate, yield func([]*trace.Trace) error) error {
		if err := yield(src[:1]); err != nil {
			return err
		}
		return boom
	}, stream)
	if !errors.Is(err, boom) {
		t.Fatalf("ApplyBatches error = %v, want %v", err, boom)
	}
	if failed.Candidates[0].Shadow != nil {
		t.Error("a failed ApplyBatches changed the report")
	}
}
