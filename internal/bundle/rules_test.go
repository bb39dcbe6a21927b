package bundle

import (
	"slices"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// TestLogicalSecretID checks the shape of a logical secret id at its
// edges: empty, the first byte, the length bound.
func TestLogicalSecretID(t *testing.T) {
	for id, want := range map[string]bool{
		"GITHUB_TOKEN": true, "A": true, "Z9": true, "Z9_": false, "A__B": false, strings.Repeat("A", 128): true,
		"": false, "_TOKEN": false, "9TOKEN": false, "github_token": false, "@A": false, "[A": false,
		strings.Repeat("A", 129): false, "A-B": false,
	} {
		if got := isLogicalSecretID(id); got != want {
			t.Errorf("isLogicalSecretID(%q) = %v, want %v", id, got, want)
		}
	}
}

// TestBlockersRejectedCodes checks that a rejected candidate's blocking
// reason names each rejection code once, in order.
func TestBlockersRejectedCodes(t *testing.T) {
	c := &candidate.Candidate{RejectionReasons: []candidate.Problem{{Code: "b"}, {Code: "a"}, {Code: "b"}}}
	rs := blockers(c, 0, nil, 2, 0.5)
	i := slices.IndexFunc(rs, func(r Reason) bool { return r.Code == ReasonCandidateRejected })
	if i < 0 || rs[i].Message != "the candidate is rejected (b, a)" {
		t.Errorf("blockers %+v, want %s %q", rs, ReasonCandidateRejected, "the candidate is rejected (b, a)")
	}
}

// TestSafePathEmpty checks that an empty manifest path is reported as
// one that could leave the bundle, saying why.
func TestSafePathEmpty(t *testing.T) {
	x := &validator{v: &Validation{}}
	if x.safePath("", "files[0].path") {
		t.Fatal("safePath(\"\") = true")
	}
	if len(x.v.Problems) != 1 || !strings.Contains(x.v.Problems[0].Message, "empty path") {
		t.Errorf("problems %+v, want one about an empty path", x.v.Problems)
	}
}
