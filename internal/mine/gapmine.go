package mine

import (
	"container/heap"
	"context"
	"fmt"
	"slices"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// CodeSearchBound is the warning of a gapped search that a bound cut
// short: what it lists is the best of what it visited.
const CodeSearchBound = "search_bound"

// gapBuilt is a gapped candidate already built, or a pattern the noise
// rule shortened, for subsumption.
type gapBuilt struct {
	syms   []int32
	traces []int32
	// sessions is the distinct sessions of traces.
	sessions int
	// kept, for a pattern the noise rule shortened, is what it kept of
	// syms; nil for a built candidate.
	kept []int32
}

// mineGapped is Mine for the gapped miner: preprocess, search, rank, and
// build the ranked patterns, after the noise rule, into candidates until
// enough safe ones are found. Selection runs in rank order on one
// goroutine, so the report does not depend on the number of cores.
//
// It works on what the first pass keeps (symbol sequences and action
// flags) and reads a candidate's examples through src only to build it,
// so it runs in one pass and in two alike.
func (s *Scan) mineGapped(ctx context.Context, src traceSource, reason string) (*candidate.Report, error) {
	opts, report := s.opts, s.report
	report.SourceTraceCount = len(s.seqs)
	report.ExcludedTraceCount = len(report.ExcludedTraces)
	minEx := opts.minExamples()
	gap := opts.maxGap()
	prep := prepareSeqs(s.seqs, s.flags, len(s.symbols))
	eligible := len(s.seqs)
	report.Mining = candidate.MiningSummary{
		MinExamples:         minEx,
		MaxCandidates:       opts.maxCandidates(),
		EligibleTraces:      eligible,
		Actions:             s.actions,
		DistinctSignatures:  len(s.symbols),
		Miner:               ModeGapped,
		MinerReason:         reason,
		MaxGap:              int(gap),
		ObservationsSkipped: prep.observations,
		RetriesCollapsed:    prep.retries,
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.noteSessions(&report.Mining)
	if w, few := s.tooFewSessions(minEx); few {
		report.Warnings = append(report.Warnings, w)
		return report, nil
	}
	sc := newSessionCounter(s.session, s.sessions)

	nsym := len(s.symbols)
	budget := opts.searchBudget()
	g := &gapSearch{
		ctx:  ctx,
		seqs: prep.seqs, minSup: minEx, gap: gap, sessions: sc, minSessions: minEx,
		nodeBudget: budget, workBudget: int64(budget) * gapWorkPerNode,
		last: make([]int32, nsym), cnt: make([]int32, nsym), bucket: make([][]int32, nsym),
		count: prep.count, total: prep.totalItems, spans: map[int32]int{},
	}
	roots, projs := g.rootProjections(prep.traces)
	patterns := g.search(roots, projs)

	report.Mining.PatternsSearched = g.nodes
	report.Mining.RepeatsFound = len(patterns)
	for _, cut := range []struct {
		hit bool
		msg string
	}{
		{g.cutNodes, fmt.Sprintf("the gapped search visited its budget of %d patterns and stopped; less frequent procedures may be missing", budget)},
		{g.cutWork, fmt.Sprintf("the gapped search scanned its budget of %d projected positions and stopped; less frequent procedures may be missing", g.workBudget)},
		{g.cutLength, fmt.Sprintf("a pattern reached %d steps, the most the gapped search grows; a longer procedure is listed as its first %d steps", gapMaxLength, gapMaxLength)},
	} {
		if cut.hit {
			report.Warnings = append(report.Warnings, candidate.Problem{Code: CodeSearchBound, Message: cut.msg})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	b := builder{eligible: eligible, positions: true, prices: opts.prices()}
	maxSafe := opts.maxCandidates()
	limit := opts.scanLimit()
	rejectedOmitted := 0
	names := map[string]bool{}
	seen := map[string]bool{}
	// made holds the symbols of the patterns built into candidates, and
	// variants those of the variants queued: a variant is built once,
	// and never when a pattern with its steps already was.
	made, variants := map[string]bool{}, map[string]bool{}
	var built []gapBuilt
	// Patterns are taken best first. The noise rule may shorten one,
	// which lowers its rank, so a shortened pattern goes back into the
	// queue with its new support and length and is built only when it is
	// the best again: a shortened noisy variant must not be built before
	// a longer clean pattern that now outranks it.
	sh := symbolShapes(s.symbols)
	for i := range patterns {
		patterns[i].notProcedure = symsNotProcedure(patterns[i].syms, sh) != ""
	}
	queue := patternQueue(patterns)
	heap.Init(&queue)
	scanned := 0
	for queue.Len() > 0 {
		if len(report.Candidates) >= maxSafe {
			break
		}
		if scanned >= limit {
			report.Warnings = append(report.Warnings, candidate.Problem{
				Code: candidate.CodeScanLimit,
				Message: fmt.Sprintf("looked at the %d highest-ranked of %d patterns and found fewer than %d distinct safe candidates; the rest rank lower (raise --max-candidates to look further)",
					limit, len(patterns), maxSafe),
			})
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pt := heap.Pop(&queue).(pattern)
		if pt.variant && made[symKey(pt.syms)] || !pt.variant && seen[symKey(pt.syms)] {
			continue
		}
		syms, matches := pt.syms, pt.matches
		if !pt.denoised {
			// A pattern a built candidate already stands for is not
			// worth the noise rule's cost (most of the subsequences of a
			// long procedure rank right after it).
			ptTraces := matchTraces(prep.matchAll(pt.syms, gap, -1, 0))
			if gapSubsumed(built, pt.syms, ptTraces, sc.count(ptTraces)) {
				seen[symKey(pt.syms)] = true
				continue
			}
			scanned++
			if opts.Progress != nil {
				opts.Progress(scanned, min(len(patterns), limit))
			}
			var dropped int
			var longer []variant
			syms, matches, dropped, longer = prep.denoiseVariants(pt.syms, gap, true)
			report.Mining.NoiseStepsDropped += dropped
			// A longer form that holds in enough sessions of its own is
			// a procedure too, ranked by its own support.
			for _, v := range longer {
				key := symKey(v.syms)
				if sup := sc.countMatches(v.matches); sup >= minEx && !variants[key] {
					variants[key] = true
					heap.Push(&queue, pattern{syms: v.syms, support: sup, traces: len(v.matches), first: v.matches[0].seq, denoised: true, matches: v.matches,
						variant: true, notProcedure: symsNotProcedure(v.syms, sh) != ""})
				}
			}
			if dropped > 0 {
				seen[symKey(pt.syms)] = true
				built = append(built, gapBuilt{syms: pt.syms, traces: ptTraces, sessions: sc.count(ptTraces), kept: syms})
				if sup := sc.countMatches(matches); len(syms) >= 2 && sup >= minEx {
					heap.Push(&queue, pattern{syms: syms, support: sup, traces: len(matches), first: matches[0].seq, denoised: true, matches: matches,
						notProcedure: symsNotProcedure(syms, sh) != ""})
				}
				continue
			}
		}
		key := symKey(syms)
		if len(syms) < 2 || sc.countMatches(matches) < minEx || made[key] {
			continue
		}
		seen[key] = true
		made[key] = true
		tr := matchTraces(matches)
		if gapSubsumed(built, syms, tr, sc.count(tr)) {
			continue
		}
		// What is not a procedure is built to say so, but stands for
		// nothing a procedure could repeat.
		if !pt.notProcedure {
			built = append(built, gapBuilt{syms: syms, traces: tr, sessions: sc.count(tr)})
		}
		// As the exact miner does, a pattern with more examples than the
		// bound is built from an evenly spaced sample of them and the
		// others are checked against it (sample.go).
		all := prep.examples(matches)
		sample, picked := sampled(all, opts.exampleSample())
		need := tr
		if picked != nil {
			need = matchSeqs(sample)
		}
		traces, err := src.traces(ctx, need)
		if err != nil {
			return nil, err
		}
		b.traces = traces
		c := b.build(sample, len(syms))
		var verified []bool
		if picked != nil {
			if verified, err = checkRest(ctx, src, c, all, picked, eligible, opts); err != nil {
				return nil, err
			}
			// The first pass knows which actions failed, so the failures
			// of every example are counted, not only the sample's: shadow
			// replay checks every example against them.
			countFailures(c, all, s.flags)
		}
		sc.setSupport(c, tr, len(syms))
		rejectNonProcedure(c)
		noteFailures(c)
		report.Mining.CandidatesBuilt++
		if !c.Safe() && len(report.RejectedCandidates) >= maxSafe {
			rejectedOmitted++
			continue
		}
		c.Name = uniqueName(names, c.Name)
		s.examples[c.ID] = sortedSeqs(tr)
		if verified != nil {
			s.verified[c.ID] = verifiedExamples{seqs: matchSeqs(all), verified: verified}
		}
		if c.Safe() {
			report.Candidates = append(report.Candidates, *c)
		} else {
			report.RejectedCandidates = append(report.RejectedCandidates, *c)
		}
	}
	finish(report, opts, names, rejectedOmitted)
	return report, nil
}

func matchTraces(ms []gmatch) []int32 {
	out := make([]int32, len(ms))
	for i, m := range ms {
		out[i] = m.seq
	}
	return out
}

// patternQueue is a heap of patterns whose top is the best ranked
// (comparePatterns).
type patternQueue []pattern

func (q patternQueue) Len() int           { return len(q) }
func (q patternQueue) Less(i, j int) bool { return comparePatterns(q[i], q[j]) < 0 }
func (q patternQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *patternQueue) Push(x any)        { *q = append(*q, x.(pattern)) }
func (q *patternQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// examples converts embeddings into the builder's matches: item indexes
// become action indexes, and retries are attached when any step has them.
func (p *prepared) examples(ms []gmatch) []match {
	out := make([]match, len(ms))
	for e, m := range ms {
		s := p.seqs[m.seq]
		pos := make([]int32, len(m.at))
		var retries []int32
		for k, q := range m.at {
			pos[k] = s.pos[q]
			if r := s.retries[q]; r > 0 {
				if retries == nil {
					retries = make([]int32, len(m.at))
				}
				retries[k] = r
			}
		}
		out[e] = match{seq: m.seq, pos: pos, retries: retries}
	}
	return out
}

// gapSubsumed is subsumed for gapped patterns, with containment as a
// subsequence: a pattern is skipped when a built candidate contains it and
// covers all its traces (the same procedure with a step missing: it may
// occur in fewer traces, since a missing step widens a gap), or when
// it contains a built candidate in under a tenth of that candidate's
// sessions (the procedure plus an incidental step). A pattern the noise rule
// shortened subsumes, in the same way, a pattern it contains in its traces
// that lacks a step the rule kept: that is the procedure with a step
// missing, whose noise the rule may judge otherwise (an end step is
// measured against the gap after or before its neighbour, and a missing
// middle step changes that neighbour), and which ranks as high as the
// procedure itself; the shortened pattern is the procedure.
func gapSubsumed(built []gapBuilt, syms, traces []int32, sessions int) bool {
	for _, b := range built {
		if b.kept != nil {
			if len(b.syms) > len(syms) && isSubsequence(b.syms, syms) && !isSubsequence(syms, b.kept) && subsetInts(traces, b.traces) {
				return true
			}
			continue
		}
		switch {
		case len(b.syms) > len(syms) && len(b.traces) >= len(traces):
			if isSubsequence(b.syms, syms) && subsetInts(traces, b.traces) {
				return true
			}
		case len(b.syms) < len(syms) && 10*sessions < b.sessions:
			if isSubsequence(syms, b.syms) && subsetInts(traces, b.traces) {
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
