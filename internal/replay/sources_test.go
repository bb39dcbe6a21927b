package replay

import (
	"errors"
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
