package candidate

import (
	"errors"
	"testing"
)

func TestReportErr(t *testing.T) {
	id := "c2"
	tests := []struct {
		name string
		r    Report
		want error
	}{
		{"nothing selected", Report{Candidates: []Candidate{{ID: "c1"}}}, ErrNoCandidate},
		// An id that names no listed candidate selects nothing either.
		{"selected id not listed", Report{SelectedCandidateID: &id, Candidates: []Candidate{{ID: "c1"}}}, ErrNoCandidate},
		{"selected", Report{SelectedCandidateID: &id, Candidates: []Candidate{{ID: "c1"}, {ID: "c2"}}}, nil},
	}
	for _, tt := range tests {
		if err := tt.r.Err(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Errorf("%s: Err() = %v, want %v", tt.name, err, tt.want)
		}
	}
}
