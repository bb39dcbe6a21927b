package mine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/trace"
)

// TestReadBackFailure checks that reading a mined scan's example traces
// back (for shadow replay and the bundle) fails with the read's error
// when the trace cannot be read any more, and that the examples of a
// candidate the scan did not build, or of a scan not yet mined, are an
// error rather than nothing.
func TestReadBackFailure(t *testing.T) {
	traces := sampleCorpus(40, -1, -1)
	s, err := NewScan(Options{MinExamples: 3, ExampleSample: 5, ExampleCache: 1})
	if err != nil {
		t.Fatal(err)
	}
	read := &failingRead{}
	for _, tr := range traces {
		if s.Add(Summarize(tr)) >= 0 {
			read.eligible = append(read.eligible, tr)
		}
	}
	each := func(batch []*trace.Trace) error { return nil }
	if err := s.UnverifiedExampleBatches(context.Background(), "candidate_x", each); err == nil {
		t.Error("UnverifiedExampleBatches before Mine: no error")
	}
	r, err := s.MineWindows(context.Background(), read.fetch, read.fetchWindows)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) == 0 {
		t.Fatal("no candidate")
	}
	id := r.Candidates[0].ID
	if err := s.UnverifiedExampleBatches(context.Background(), "candidate_x", each); err == nil || !strings.Contains(err.Error(), "candidate_x") {
		t.Errorf("UnverifiedExampleBatches of an unknown candidate = %v, want an error naming it", err)
	}

	read.failAt = read.calls + 1
	for name, readBack := range map[string]func() error{
		"Sources": func() error {
			_, err := s.Sources(context.Background(), r)
			return err
		},
		"Examples": func() error {
			_, err := s.Examples(context.Background(), id)
			return err
		},
		"ExampleBatches": func() error {
			return s.ExampleBatches(context.Background(), id, each)
		},
		"UnverifiedExampleBatches": func() error {
			return s.UnverifiedExampleBatches(context.Background(), id, each)
		},
	} {
		if err := readBack(); !errors.Is(err, errRead) {
			t.Errorf("%s with the traces unreadable = %v, want the read's error", name, err)
		}
	}
}
