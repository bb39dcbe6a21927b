package mine

import (
	"reflect"
	"testing"
)

// TestNewSummaryOfAnEmptyTrace checks that a trace store which kept an
// eligible trace with no actions as no signatures and no flags at all
// (nil, as a column store gives back an empty list) rebuilds the summary
// Summarize gives that trace.
func TestNewSummaryOfAnEmptyTrace(t *testing.T) {
	want := Summarize(mk("e"))
	if want.Exclusion() != nil {
		t.Fatalf("an empty trace is excluded (%+v): the test shows nothing", want.Exclusion())
	}
	agent, observation := want.Evidence()
	if got := NewSummary(nil, agent, observation, want.Session(), nil, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("NewSummary of nil parts = %+v, want %+v", got, want)
	}
}
