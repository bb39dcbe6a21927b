package pipeline

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/crystallize-dev/crystallize/internal/mine"
)

// TestAutoReadsBack: with auto passes even a small corpus is mined in two
// passes, its traces read back rather than kept, while --passes 1 keeps
// them; both find the same candidates.
func TestAutoReadsBack(t *testing.T) {
	read := func(passes string) *Corpus {
		t.Helper()
		c, err := ReadCorpus(context.Background(), CorpusOptions{Dir: "../../examples/traces", Passes: passes, Mine: mine.Options{MinExamples: 2}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	auto, one := read(PassesAuto), read(PassesOne)
	if auto.Examples == nil || len(auto.Sources) != 0 {
		t.Errorf("auto: Examples set %v, %d sources kept; want traces read back and none kept", auto.Examples != nil, len(auto.Sources))
	}
	if one.Examples != nil || len(one.Sources) == 0 {
		t.Errorf("passes 1: Examples set %v, %d sources kept; want the traces kept", one.Examples != nil, len(one.Sources))
	}
	if len(auto.Report.Candidates) == 0 || len(auto.Report.Candidates) != len(one.Report.Candidates) {
		t.Fatalf("auto found %d candidates, passes 1 %d", len(auto.Report.Candidates), len(one.Report.Candidates))
	}
	for i := range auto.Report.Candidates {
		if a, o := auto.Report.Candidates[i].ID, one.Report.Candidates[i].ID; a != o {
			t.Errorf("candidate %d: auto %s, passes 1 %s", i, a, o)
		}
	}
}

// TestTwoPassMemoryLimit pins the read-back limit: 768 MiB plus 20 bytes
// an estimated action, never under 896 MiB, and under 2 GiB for a
// million traces of 50 actions (20.9 GB of JSON).
func TestTwoPassMemoryLimit(t *testing.T) {
	tests := []struct {
		input int64
		want  int64
	}{
		{0, 896 << 20},
		{209 << 20, 896 << 20},
		{20_917_637_050, 768<<20 + 20*(20_917_637_050/400)},
	}
	for _, tt := range tests {
		if got := TwoPassMemoryLimit(tt.input); got != tt.want {
			t.Errorf("TwoPassMemoryLimit(%d) = %d, want %d", tt.input, got, tt.want)
		}
	}
	if got := TwoPassMemoryLimit(20_917_637_050); got >= 2<<30 {
		t.Errorf("TwoPassMemoryLimit at a million traces = %d, want under 2 GiB", got)
	}
}

// Options out of range are refused before anything is read: the
// directory does not exist, and the error is about the options.
func TestReadCorpusChecksOptionsFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	_, err := ReadCorpus(context.Background(), CorpusOptions{Dir: dir, Passes: "3"})
	var pe *PassesError
	if !errors.As(err, &pe) || pe.Problem() != `must be auto, 1 or 2, got "3"` {
		t.Errorf("ReadCorpus(Passes 3) = %v, want a *PassesError", err)
	}
	_, err = ReadCorpus(context.Background(), CorpusOptions{Dir: dir, Mine: mine.Options{MinExamples: 1}})
	var oe *mine.OptionError
	if !errors.As(err, &oe) || oe.Field != "MinExamples" {
		t.Errorf("ReadCorpus(MinExamples 1) = %v, want a *mine.OptionError for MinExamples", err)
	}
	if err := CheckPasses(""); err == nil {
		t.Error(`CheckPasses("") = nil: a given value must not be empty`)
	}
}
