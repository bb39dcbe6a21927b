package mine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestGappedSampledKeepsRetries checks that a gapped candidate built from
// a sample lists the retries of the examples outside it as the unsampled
// build does: a step that went through after failed attempts says so
// wherever the example is.
func TestGappedSampledKeepsRetries(t *testing.T) {
	var traces []*trace.Trace
	for i := range 7 {
		var actions []trace.Action
		// The sample (sessions 0, 3 and 6) sees every module.
		for k, s := range bumpSteps(i + i/3) {
			if k == 3 && i%2 == 1 {
				// go test fails once, then passes after an edit.
				actions = append(actions, failing(s), edit("", "lib.go"))
			}
			actions = append(actions, s)
		}
		traces = append(traces, session(fmt.Sprintf("s%d", i), actions...))
	}
	full := mustMine(t, traces, Options{ExampleSample: -1, MaxCandidates: 1}).Selected()
	sampled := mustMine(t, traces, Options{ExampleSample: 3, MaxCandidates: 1}).Selected()
	if full == nil || sampled == nil {
		t.Fatal("no candidate")
	}
	if !slices.ContainsFunc(sampled.Warnings, func(p candidate.Problem) bool { return p.Code == candidate.CodeExampleSample }) {
		t.Fatal("the candidate was not built from a sample")
	}
	if len(sampled.Examples) != len(full.Examples) {
		t.Fatalf("%d examples sampled, %d unsampled", len(sampled.Examples), len(full.Examples))
	}
	retried := 0
	picked := sampleIndexes(len(full.Examples), 3)
	for i, want := range full.Examples {
		got := sampled.Examples[i]
		if got.TraceID != want.TraceID || !slices.Equal(got.Retries, want.Retries) || !slices.Equal(got.Positions, want.Positions) {
			t.Errorf("example %d: %s retries %v positions %v, want %s %v %v", i, got.TraceID, got.Retries, got.Positions, want.TraceID, want.Retries, want.Positions)
		}
		if want.Retries != nil && !slices.Contains(picked, i) {
			retried++
		}
	}
	if retried == 0 {
		t.Fatal("no example outside the sample has retries: the test shows nothing")
	}
}
