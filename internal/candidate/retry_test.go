package candidate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// attempts reads a trace written as words: a letter is an action's key,
// "!" after it marks a failure, "e" is a file edit (its own key), "r" a
// read.
func attempts(s string) []Attempt {
	var out []Attempt
	for _, w := range strings.Fields(s) {
		a := Attempt{Failed: strings.HasSuffix(w, "!")}
		w = strings.TrimSuffix(w, "!")
		switch w {
		case "r":
			a.Observation = true
		case "e":
			a.Edit = true
		}
		a.Key = int32(w[0])
		out = append(out, a)
	}
	return out
}

func TestFoldRetries(t *testing.T) {
	S, O, A, R := FoldStep, FoldObservation, FoldAttempt, FoldRepair
	tests := []struct {
		name    string
		trace   string
		folds   []Fold
		retries []int32
	}{{
		name:  "a failed push, a pull and the push that went through are one step and the pull",
		trace: "a c p! r l p", folds: []Fold{S, S, A, O, S, S}, retries: []int32{0, 0, 0, 0, 0, 1},
	}, {
		name:  "the edits between a failed test and its success are the repair",
		trace: "t! e r e t! e t c", folds: []Fold{A, R, O, R, A, R, S, S}, retries: []int32{0, 0, 0, 0, 0, 0, 2, 0},
	}, {
		name:  "a failure no success retries is a step",
		trace: "a p! c", folds: []Fold{S, S, S}, retries: []int32{0, 0, 0},
	}, {
		name:  "a success retries only the failures after the last success",
		trace: "t! t t! e t", folds: []Fold{A, S, A, R, S}, retries: []int32{0, 1, 0, 0, 1},
	}, {
		name:  "an edit before the first failed attempt is not the repair",
		trace: "e t! e t", folds: []Fold{S, A, R, S}, retries: []int32{0, 0, 0, 1},
	}, {
		name:  "another command's failure between stays as it is",
		trace: "t! x! e t", folds: []Fold{A, S, R, S}, retries: []int32{0, 0, 0, 1},
	}, {
		name:  "reads do not count in the window",
		trace: "t! " + strings.Repeat("r ", 3*RetryWindow) + "t",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := attempts(tt.trace)
			folds := make([]Fold, len(at))
			retries := make([]int32, len(at))
			FoldRetries(at, folds, retries, nil)
			if tt.folds == nil {
				if folds[0] != FoldAttempt || retries[len(at)-1] != 1 {
					t.Errorf("folds %v, retries %v: want the failure folded into the last action", folds, retries)
				}
				return
			}
			if diff := cmp.Diff(tt.folds, folds); diff != "" {
				t.Errorf("folds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.retries, retries); diff != "" {
				t.Errorf("retries (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFoldRetriesWindow checks the bound: a success RetryWindow actions
// after a failure retries it, one action further it does not, and the
// failure stays a step of its own.
func TestFoldRetriesWindow(t *testing.T) {
	for _, between := range []int{RetryWindow - 1, RetryWindow} {
		t.Run(fmt.Sprint(between), func(t *testing.T) {
			trace := "t! " + strings.Repeat("x ", between) + "t"
			at := attempts(trace)
			folds := make([]Fold, len(at))
			retries := make([]int32, len(at))
			scratch := FoldRetries(at, folds, retries, make([]int32, 0, 4))
			want := FoldAttempt
			if between >= RetryWindow {
				want = FoldStep
			}
			if folds[0] != want {
				t.Errorf("failure %d actions before its success: %v, want %v", between+1, folds[0], want)
			}
			if len(scratch) != len(at) {
				t.Errorf("scratch holds %d actions, want %d", len(scratch), len(at))
			}
		})
	}
}

func TestMayInterleave(t *testing.T) {
	tests := []struct {
		name string
		a    Attempt
		f    Fold
		want bool
	}{
		{"an action that changes nothing", Attempt{}, FoldStep, true},
		{"an action that changes something", Attempt{Changes: true}, FoldStep, false},
		{"a failure that changed nothing", Attempt{Changes: true, Failed: true}, FoldStep, true},
		{"a retried attempt", Attempt{Changes: true, Failed: true}, FoldAttempt, true},
		{"the repair of a retry", Attempt{Changes: true, Edit: true}, FoldRepair, true},
		{"an observation", Attempt{Observation: true}, FoldObservation, true},
		{"an action that needs a person", Attempt{NeedsPerson: true}, FoldStep, false},
		{"a failure that needs a person", Attempt{NeedsPerson: true, Failed: true}, FoldStep, false},
		{"an observation that needs a person", Attempt{Observation: true, NeedsPerson: true}, FoldObservation, false},
	}
	for _, tt := range tests {
		if got := MayInterleave(tt.a, tt.f); got != tt.want {
			t.Errorf("%s: MayInterleave = %v, want %v", tt.name, got, tt.want)
		}
	}
}
