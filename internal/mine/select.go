package mine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// Both miners select candidates the same way: a ranking hands over its
// patterns best first, each already judged against the ones taken before
// it (subsumed), and selection builds them into candidates, in batches
// built in parallel and consumed in order, until enough safe ones are
// found or the scan limit is reached. What differs between the miners is
// only how a pattern is found and what containing another means.

// ranking is a miner's patterns in rank order, as selection consumes them.
type ranking interface {
	// more reports whether any pattern is left.
	more() bool
	// scanned is how many patterns the scan limit has counted so far.
	scanned() int
	// total is the number of patterns the miner found, for the scan
	// limit's warning, and what names them there.
	total() (int, string)
	// next takes patterns from the ranking, never more than limit
	// counted by scanned, and returns those to build, at most n of them.
	// It may return none while more patterns are left. Rankings hold
	// their patterns in memory, so taking one cannot fail.
	next(limit, n int) []pick
}

// pick is a pattern chosen to be built into a candidate.
type pick struct {
	length int
	// traces is the traces of its examples, for its support in sessions.
	traces []int32
	// all is its examples, one per trace, as the builder reads them.
	all []match
}

// selection is how a miner's patterns are built into candidates.
type selection struct {
	builder  builder
	sessions *sessionCounter
	// batch is how many patterns are built at once, in parallel.
	batch int
	// flagFailures counts the failures of a sampled candidate's steps
	// in every example from the action flags of the first pass, which
	// the gapped miner always has.
	flagFailures bool
}

// selectCandidates builds the patterns of r, taken best first, into the
// report's candidates, reading the traces of their examples through src,
// and completes the report (finish). Patterns are built in batches of
// how.batch in parallel: the builds are independent and read the traces only.
// Whether a pattern is subsumed depends on the ones before it, so the
// ranking decides that in order before a batch is built, and results are
// consumed in order, which keeps the report identical to a sequential
// scan. A batch may build a few candidates past the last one needed; they
// are dropped.
func (s *Scan) selectCandidates(ctx context.Context, src traceSource, r ranking, how selection) error {
	opts, report := s.opts, s.report
	maxSafe := opts.maxCandidates()
	limit := opts.scanLimit()
	rejectedOmitted := 0
	names := map[string]bool{}
	progressed := 0
	for r.more() {
		if len(report.Candidates) >= maxSafe {
			break
		}
		if r.scanned() >= limit {
			total, what := r.total()
			report.Warnings = append(report.Warnings, candidate.Problem{
				Code: candidate.CodeScanLimit,
				Message: fmt.Sprintf("looked at the %d highest-ranked of %d %s and found fewer than %d distinct safe candidates; the rest rank lower (raise --max-candidates to look further)",
					limit, total, what, maxSafe),
			})
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		picks := r.next(limit, how.batch)
		if n := r.scanned(); opts.Progress != nil && n != progressed {
			progressed = n
			total, _ := r.total()
			opts.Progress(n, min(total, limit))
		}
		if len(picks) == 0 {
			continue
		}
		results, verified, err := s.buildPicks(ctx, src, how, picks)
		if err != nil {
			return err
		}
		for i, c := range results {
			if len(report.Candidates) >= maxSafe {
				break
			}
			report.Mining.CandidatesBuilt++
			if !c.Safe() && len(report.RejectedCandidates) >= maxSafe {
				rejectedOmitted++
				continue
			}
			c.Name = uniqueName(names, c.Name)
			s.examples[c.ID] = sortedSeqs(picks[i].traces)
			if verified[i] != nil {
				s.verified[c.ID] = verifiedExamples{seqs: matchSeqs(picks[i].all), verified: verified[i]}
			}
			if c.Safe() {
				report.Candidates = append(report.Candidates, *c)
			} else {
				report.RejectedCandidates = append(report.RejectedCandidates, *c)
			}
		}
	}
	finish(report, opts, names, rejectedOmitted)
	return nil
}

// buildPicks builds the candidates of picks in parallel and completes
// them: a pick with more examples than the bound is built from an evenly
// spaced sample of them and the others are checked against it
// (sample.go), and it returns which of those examples were verified.
func (s *Scan) buildPicks(ctx context.Context, src traceSource, how selection, picks []pick) ([]*candidate.Candidate, [][]bool, error) {
	opts, b := s.opts, how.builder
	samples := make([][]match, len(picks))
	picked := make([][]int, len(picks))
	var need []int32
	for i, p := range picks {
		samples[i], picked[i] = sampled(p.all, opts.exampleSample())
		for _, m := range samples[i] {
			need = append(need, m.seq)
		}
	}
	traces, err := src.traces(ctx, need)
	if err != nil {
		return nil, nil, err
	}
	b.traces = traces
	results := make([]*candidate.Candidate, len(picks))
	var wg sync.WaitGroup
	for i := range picks {
		wg.Go(func() { results[i] = b.build(samples[i], picks[i].length) })
	}
	wg.Wait()
	// The builds are done with the batch's traces. When sampled
	// candidates are to be completed, which reads every other example of
	// theirs, the cache is let go first: kept, it would be most of the
	// live heap that each collection marks during the longest part of a
	// large corpus's second pass, and its traces are read again if a
	// later batch needs them.
	verified := make([][]bool, len(picks))
	if slices.ContainsFunc(picked, func(p []int) bool { return p != nil }) {
		b.traces = nil
		src.release()
	}
	for i, c := range results {
		if picked[i] != nil {
			v, err := checkRest(ctx, src, c, picks[i].all, picked[i], len(s.seqs), opts)
			if err != nil {
				return nil, nil, err
			}
			verified[i] = v
			if how.flagFailures {
				// The first pass knows which actions failed, so the
				// failures of every example are counted, not only the
				// sample's: shadow replay checks every example against
				// them.
				countFailures(c, picks[i].all, s.flags)
			}
		}
		how.sessions.setSupport(c, picks[i].traces, picks[i].length)
		rejectNonProcedure(c)
		noteFailures(c)
	}
	return results, verified, nil
}

// builtPattern is a pattern taken into the candidates, or one the noise
// rule shortened, that later patterns are judged against (subsumed).
type builtPattern struct {
	syms []int32
	// traces is the distinct traces it occurs in, ascending, and
	// sessions their distinct sessions.
	traces   []int32
	sessions int
	// kept, for a pattern the noise rule shortened, is what it kept of
	// syms; nil for a built candidate.
	kept []int32
}

// subsumed reports whether a higher-ranked pattern in built already stands
// for the pattern syms, found in the ascending traces in sessions
// distinct sessions. contains(hay, needle) is what containment means to
// the miner: a contiguous run for the exact miner, a subsequence for the
// gapped one. A pattern is subsumed in one of three ways:
//
//   - a built candidate contains it and covers all its traces: the same
//     procedure seen through a shorter window (occurrence-maximal only
//     because the shorter run also appears once more elsewhere in one of
//     the traces), or with a step missing (a gapped pattern may occur in
//     fewer traces, since a missing step widens a gap);
//   - it contains a built candidate plus incidental steps, in a subset of
//     the candidate's traces that is less than a tenth of its sessions: a
//     procedure that happened to be preceded or followed by the same
//     unrelated action a few times. On a large corpus these variants
//     would otherwise fill the candidate list;
//   - a pattern the noise rule shortened contains it in its traces, and
//     it lacks a step the rule kept: that is the procedure with a step
//     missing, whose noise the rule may judge otherwise (an end step is
//     measured against the gap after or before its neighbour, and a
//     missing middle step changes that neighbour), and which ranks as
//     high as the procedure itself; the shortened pattern is the
//     procedure.
//
// Listing any of them would bury the real candidates.
func subsumed(built []builtPattern, syms, traces []int32, sessions int, contains func(hay, needle []int32) bool) bool {
	for _, b := range built {
		if b.kept != nil {
			if len(b.syms) > len(syms) && contains(b.syms, syms) && !contains(syms, b.kept) && subsetInts(traces, b.traces) {
				return true
			}
			continue
		}
		switch {
		case len(b.syms) > len(syms) && len(b.traces) >= len(traces):
			if contains(b.syms, syms) && subsetInts(traces, b.traces) {
				return true
			}
		case len(b.syms) < len(syms) && 10*sessions < b.sessions:
			if contains(syms, b.syms) && subsetInts(traces, b.traces) {
				return true
			}
		}
	}
	return false
}

// subsetInts reports whether every element of sub is in super; both are
// sorted ascending.
func subsetInts(sub, super []int32) bool {
	j := 0
	for _, x := range sub {
		for j < len(super) && super[j] < x {
			j++
		}
		if j == len(super) || super[j] != x {
			return false
		}
	}
	return true
}

// sortedSeqs returns the distinct trace indexes of seqs in corpus order.
func sortedSeqs(seqs []int32) []int32 {
	out := slices.Clone(seqs)
	slices.Sort(out)
	return slices.Compact(out)
}

// begin starts the report of a mining run with its summary m, and
// reports whether the run is done already: a corpus with fewer sessions
// than a candidate needs gets a warning and no candidates.
func (s *Scan) begin(ctx context.Context, m candidate.MiningSummary) (bool, error) {
	report := s.report
	report.SourceTraceCount = len(s.seqs)
	report.ExcludedTraceCount = len(report.ExcludedTraces)
	m.MinExamples = s.opts.minExamples()
	m.MaxCandidates = s.opts.maxCandidates()
	m.EligibleTraces = len(s.seqs)
	m.Actions = s.actions
	m.DistinctSignatures = len(s.symbols)
	report.Mining = m
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.noteSessions(&report.Mining)
	if w, few := s.tooFewSessions(m.MinExamples); few {
		report.Warnings = append(report.Warnings, w)
		return true, nil
	}
	return false, nil
}
