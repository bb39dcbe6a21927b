package mine

import (
	"github.com/crystallize-dev/crystallize/internal/candidate"
	"github.com/crystallize-dev/crystallize/internal/trace"
)

// Verifying examples for shadow replay in the sample check's read.
//
// A candidate built from a sample of its examples has every other example
// read back to check it against the sample (sample.go), and shadow replay
// then compared each example with the candidate, reading it back again:
// at a million traces, fifty thousand examples per candidate read twice,
// at scattered offsets of a file larger than memory. With
// Options.Verify, the sample check's read also asks shadow replay's
// judgement of each example (ExampleVerifier, which package replay
// implements; mining does not decide shadow replay's verdicts, it only
// carries them). An example that passes and that the shadow report will
// not list is then only counted by shadow replay, which reads nothing for
// it: Scan.ExampleBatches leaves its trace out and Scan.Verified says
// which examples those are. What shadow replay lists (a bounded,
// evenly spaced selection of the passing examples and every failing one)
// it still reads and compares itself, with the final candidate.
//
// The same read consults Options.Verdicts, when set: an example that an
// earlier run verified against a candidate with the same content is not
// read at all (see candidate.ExampleVerdicts).

// ExampleVerifier judges examples the way shadow replay will.
type ExampleVerifier interface {
	// Listed returns which of a candidate's n examples its shadow report
	// lists even when they pass, or nil when it lists every one. Only an
	// example it does not list may be verified in advance.
	Listed(n int) []bool
	// Check returns a function that reports, for each example of c and
	// its trace, whether shadow replay passes it. c is built, with its
	// steps final, but its examples, id and support are not complete yet;
	// shadow replay's verdict does not depend on them.
	Check(c *candidate.Candidate) func(examples []*candidate.Example, traces []*trace.Trace) []bool
}

// verifiedExamples is what the sample check verified of a candidate's
// examples for shadow replay: the eligible index of each example's trace
// and whether the example was verified, in example order.
type verifiedExamples struct {
	seqs     []int32
	verified []bool
}

// unverified returns the eligible indexes of the traces of the examples
// not verified, in example order.
func (v verifiedExamples) unverified() []int32 {
	var out []int32
	for e, q := range v.seqs {
		if !v.verified[e] {
			out = append(out, q)
		}
	}
	return out
}

func matchSeqs(all []match) []int32 {
	out := make([]int32, len(all))
	for e, m := range all {
		out[e] = m.seq
	}
	return out
}

// Verified returns, for the candidate with id as Mine built it, which of
// its examples (in its Examples order) the sample check verified for
// shadow replay with Options.Verify: each passed shadow replay's check
// and is not among those the shadow report lists. It returns nil for a
// candidate with none. It must be called after Mine.
func (s *Scan) Verified(id string) []bool {
	return s.verified[id].verified
}
