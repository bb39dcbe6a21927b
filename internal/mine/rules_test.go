package mine

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestPathKey checks how a flow binding's JSON path names an object
// member: an identifier as ".name", anything else quoted in brackets,
// with the edges of each letter and digit range.
func TestPathKey(t *testing.T) {
	for k, want := range map[string]string{
		"name": ".name", "Name": ".Name", "a": ".a", "z": ".z", "A": ".A", "Z": ".Z",
		"_x": "._x", "a0": ".a0", "a9": ".a9",
		"": `[""]`, "0a": `["0a"]`, "odd key": `["odd key"]`, "a-b": `["a-b"]`,
		"@": `["@"]`, "[": `["["]`, "`": "[\"`\"]", "{": `["{"]`, "a/": `["a/"]`, "a:": `["a:"]`,
	} {
		if got := pathKey(k); got != want {
			t.Errorf("pathKey(%q) = %s, want %s", k, got, want)
		}
	}
}

// TestContainsRun checks the exact miner's containment: needle as a
// contiguous run of hay, anywhere in it.
func TestContainsRun(t *testing.T) {
	for _, tt := range []struct {
		hay, needle []int32
		want        bool
	}{
		{[]int32{1, 2, 3}, []int32{2, 3}, true},
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, true},
		{[]int32{1, 2, 3}, nil, true},
		{[]int32{1, 2, 3}, []int32{4, 5}, false},
		{[]int32{1, 2, 3}, []int32{1, 3}, false},
		{[]int32{1, 2}, []int32{1, 2, 3}, false},
		{[]int32{5, 1, 5, 1, 2}, []int32{1, 2}, true},
	} {
		if got := containsRun(tt.hay, tt.needle); got != tt.want {
			t.Errorf("containsRun(%v, %v) = %v, want %v", tt.hay, tt.needle, got, tt.want)
		}
	}
}

// TestSessionCounterWraps checks that a count after the stamp counter
// wraps around starts afresh: stamps left by earlier counts must not
// make a session look counted already.
func TestSessionCounterWraps(t *testing.T) {
	c := newSessionCounter([]int32{0, 0, 1, 2}, 3)
	if got := c.count([]int32{0, 1, 2}); got != 2 {
		t.Fatalf("count = %d, want 2", got)
	}
	c.epoch = math.MaxUint32
	if got := c.count([]int32{0, 2, 3}); got != 3 {
		t.Errorf("count after the wrap = %d, want 3", got)
	}
	if got := c.count([]int32{1, 3}); got != 2 {
		t.Errorf("next count = %d, want 2", got)
	}
}

// TestSourcesBeforeMine checks that a scan's sources cannot be read
// before it was mined: there are no candidates to read them for.
func TestSourcesBeforeMine(t *testing.T) {
	s, err := NewScan(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sources(context.Background(), &candidate.Report{}); err == nil {
		t.Error("Sources of a scan that was not mined: no error")
	}
}

// TestFinishExplicitName checks that the name the user gives the selected
// candidate wins: another candidate, safe or rejected, that inferred the
// same name is renamed, and the others keep theirs.
func TestFinishExplicitName(t *testing.T) {
	report := &candidate.Report{
		Candidates:         []candidate.Candidate{{ID: "a", Name: "inferred"}, {ID: "b", Name: "release"}, {ID: "c", Name: "lint"}},
		RejectedCandidates: []candidate.Candidate{{ID: "d", Name: "release"}, {ID: "e", Name: "other"}},
	}
	names := map[string]bool{"inferred": true, "release": true, "lint": true, "other": true}
	finish(report, Options{WorkflowName: "release"}, names, 0)
	var got []string
	for _, c := range append(report.Candidates, report.RejectedCandidates...) {
		got = append(got, c.Name)
	}
	want := []string{"release", "release_2", "lint", "release_3", "other"}
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
	if report.SelectedCandidateID == nil || *report.SelectedCandidateID != "a" {
		t.Errorf("selected %v, want a", report.SelectedCandidateID)
	}
}
