package replay

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

func TestListedExamples(t *testing.T) {
	for _, tc := range []struct {
		n, bound int
		want     []int // nil: every example listed
	}{
		{n: 5, bound: 5},
		{n: 5, bound: 10},
		{n: 5, bound: -1},
		{n: 10, bound: 4, want: []int{0, 3, 6, 9}},
		{n: 11, bound: 3, want: []int{0, 5, 10}},
		{n: 7, bound: 1, want: []int{0}},
		{n: 1001, bound: 0, want: nil}, // filled below: the default bound
	} {
		t.Run(fmt.Sprintf("%d of %d", tc.bound, tc.n), func(t *testing.T) {
			listed := ListedExamples(tc.n, Options{ListPassing: tc.bound})
			var got []int
			for i, l := range listed {
				if l {
					got = append(got, i)
				}
			}
			want := tc.want
			if tc.bound == 0 {
				if len(got) != DefaultListPassing || got[0] != 0 || got[len(got)-1] != tc.n-1 {
					t.Fatalf("default bound listed %d examples from %v to %v, want %d from the first to the last", len(got), got[0], got[len(got)-1], DefaultListPassing)
				}
				return
			}
			if want == nil {
				if listed != nil {
					t.Fatalf("ListedExamples = %v, want nil (every example listed)", got)
				}
				return
			}
			if !slices.Equal(got, want) {
				t.Errorf("listed %v, want %v", got, want)
			}
		})
	}
}

// TestShadowListsBounded checks a candidate with more examples than the
// bound: the passing examples at the evenly spaced selection are listed,
// every failing one is listed wherever it is, the other passing ones are
// counted, and the counts (compared traces, pass rate, tally) are those
// of the unbounded report. The stream and batch roads agree byte for
// byte.
func TestShadowListsBounded(t *testing.T) {
	const n = 20
	var src []*trace.Trace
	failing := map[int]bool{3: true, 7: true, 19: true}
	for i := range n {
		id := fmt.Sprintf("t%02d", i)
		if failing[i] {
			src = append(src, seq(id, "a c"))
		} else {
			src = append(src, seq(id, "a b"))
		}
	}
	build := func() *candidate.Report {
		c := cand("a b")
		c.ID = "candidate_x"
		for _, tr := range src {
			c.Examples = append(c.Examples, candidate.Example{TraceID: tr.ID, SourceHash: tr.SourceHash})
		}
		return &candidate.Report{Candidates: []candidate.Candidate{*c}}
	}
	heldout := []*trace.Trace{seq("h1", "a b"), seq("h2", "x y")}
	stream := func(yield func([]*trace.Trace) error) error { return yield(heldout) }

	full := build()
	if err := ApplyStream(full, Options{ListPassing: -1}, func(*candidate.Candidate) (Sources, error) { return IndexSources(src), nil }, stream); err != nil {
		t.Fatal(err)
	}
	bounded := build()
	if err := ApplyStream(bounded, Options{ListPassing: 5}, func(*candidate.Candidate) (Sources, error) { return IndexSources(src), nil }, stream); err != nil {
		t.Fatal(err)
	}
	fc, bc := &full.RejectedCandidates[0], &bounded.RejectedCandidates[0]
	fs, bs := fc.Shadow, bc.Shadow
	if fs.PassedNotListed != 0 || len(fs.Traces) != n+2 {
		t.Fatalf("unbounded report lists %d traces and counts %d unlisted, want %d and 0", len(fs.Traces), fs.PassedNotListed, n+2)
	}
	// Selection of 5 of 20: 0, 4, 9, 14, 19; 19 fails, and 3 and 7 fail
	// outside it.
	var listed []string
	for _, st := range bs.Traces {
		listed = append(listed, st.Role+":"+st.TraceID+":"+st.Status)
	}
	want := []string{"source:t00:pass", "source:t03:fail", "source:t04:pass", "source:t07:fail", "source:t09:pass", "source:t14:pass", "source:t19:fail", "heldout:h1:pass", "heldout:h2:unmatched"}
	if !slices.Equal(listed, want) {
		t.Errorf("listed %v\nwant %v", listed, want)
	}
	if bs.PassedNotListed != n-len(failing)-4 {
		t.Errorf("PassedNotListed = %d, want %d", bs.PassedNotListed, n-len(failing)-4)
	}
	if bs.ComparedTraces != fs.ComparedTraces || bs.Pass != fs.Pass {
		t.Errorf("bounded compared %d pass %v, unbounded %d %v", bs.ComparedTraces, bs.Pass, fs.ComparedTraces, fs.Pass)
	}
	if bt, ft := bs.Tally(), fs.Tally(); bt.Source != ft.Source || bt.SourcePassed != ft.SourcePassed || bt.Passed() != ft.Passed() || bt.SourceNotListed != bs.PassedNotListed {
		t.Errorf("tally %+v, unbounded %+v", bt, ft)
	}
	if *bc.ConfidenceFactors.ShadowPassRate != *fc.ConfidenceFactors.ShadowPassRate || bc.Confidence != fc.Confidence {
		t.Errorf("pass rate %v confidence %v, unbounded %v %v", *bc.ConfidenceFactors.ShadowPassRate, bc.Confidence, *fc.ConfidenceFactors.ShadowPassRate, fc.Confidence)
	}
	if !slices.EqualFunc(bs.Failures, fs.Failures, func(a, b candidate.Problem) bool { return a == b }) ||
		!slices.EqualFunc(bc.RejectionReasons, fc.RejectionReasons, func(a, b candidate.Problem) bool { return a == b }) {
		t.Errorf("failures or rejections differ from the unbounded report's")
	}

	// Every passing example, with the bound: the listed selection only
	// (and an all-passing report still passes).
	for i := range failing {
		src[i] = seq(src[i].ID, "a b")
	}
	clean := build()
	if err := ApplyStream(clean, Options{ListPassing: 5}, func(*candidate.Candidate) (Sources, error) { return IndexSources(src), nil }, nil); err != nil {
		t.Fatal(err)
	}
	cs := clean.Candidates[0].Shadow
	if len(cs.Traces) != 5 || cs.PassedNotListed != n-5 || cs.ComparedTraces != n || !cs.Pass {
		t.Errorf("all passing: %d listed, %d unlisted, %d compared, pass %v; want 5, %d, %d, true", len(cs.Traces), cs.PassedNotListed, cs.ComparedTraces, cs.Pass, n-5, n)
	}
	cleanJSON, err := candidate.EncodeJSON(clean)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(cleanJSON, []byte(`"passed_not_listed": 15`)) {
		t.Errorf("report JSON does not count the unlisted examples")
	}

	// The batch road gives the same bytes, whatever the batches.
	bounded = build()
	for i := range failing {
		src[i] = seq(src[i].ID, "a c")
	}
	if err := ApplyStream(bounded, Options{ListPassing: 5}, func(*candidate.Candidate) (Sources, error) { return IndexSources(src), nil }, stream); err != nil {
		t.Fatal(err)
	}
	wantJSON, err := candidate.EncodeJSON(bounded)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 3, n} {
		got := build()
		err := ApplyBatches(got, Options{ListPassing: 5}, func(c *candidate.Candidate, yield func([]*trace.Trace) error) error {
			all := slices.Clone(src)
			slices.Reverse(all)
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
		gotJSON, err := candidate.EncodeJSON(got)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gotJSON, wantJSON) {
			t.Errorf("batches of %d: report differs from ApplyStream's:\n%s\nwant\n%s", size, gotJSON, wantJSON)
		}
	}
}
