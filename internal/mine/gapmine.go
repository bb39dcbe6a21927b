package mine

import (
	"container/heap"
	"context"
	"fmt"

	"github.com/crystallize-dev/crystallize/internal/candidate"
)

// CodeSearchBound is the warning of a gapped search that a bound cut
// short: what it lists is the best of what it visited.
const CodeSearchBound = "search_bound"

// mineGapped is Mine for the gapped miner: preprocess, search, rank, and
// build the ranked patterns, after the noise rule, into candidates until
// enough safe ones are found. Selection runs in rank order, one pattern at
// a time, so the report does not depend on the number of cores.
//
// It works on what the first pass keeps (symbol sequences and action
// flags) and reads a candidate's examples through src only to build it,
// so it runs in one pass and in two alike.
func (s *Scan) mineGapped(ctx context.Context, src traceSource, reason string) (*candidate.Report, error) {
	opts, report := s.opts, s.report
	minEx := opts.minExamples()
	gap := opts.maxGap()
	prep := prepareSeqs(s.seqs, s.flags, len(s.symbols))
	if done, err := s.begin(ctx, candidate.MiningSummary{
		Miner:               ModeGapped,
		MinerReason:         reason,
		MaxGap:              int(gap),
		ObservationsSkipped: prep.observations,
		RetriesCollapsed:    prep.retries,
	}); err != nil {
		return nil, err
	} else if done {
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

	sh := symbolShapes(s.symbols)
	for i := range patterns {
		patterns[i].notProcedure = symsNotProcedure(patterns[i].syms, sh) != ""
	}
	r := &patternRanking{
		prep: prep, gap: gap, minEx: minEx, sessions: sc, shapes: sh, mining: &report.Mining,
		queue: patternQueue(patterns), found: len(patterns),
		seen: map[string]bool{}, made: map[string]bool{}, variants: map[string]bool{},
	}
	heap.Init(&r.queue)
	how := selection{
		builder:      builder{eligible: len(s.seqs), positions: true, prices: opts.prices()},
		sessions:     sc,
		batch:        1,
		flagFailures: true,
	}
	if err := s.selectCandidates(ctx, src, r, how); err != nil {
		return nil, err
	}
	return report, nil
}

// patternRanking is the gapped miner's ranking. Patterns are taken best
// first. The noise rule may shorten one, which lowers its rank, so a
// shortened pattern goes back into the queue with its new support and
// length and is built only when it is the best again: a shortened noisy
// variant must not be built before a longer clean pattern that now
// outranks it.
type patternRanking struct {
	prep     *prepared
	gap      int32
	minEx    int
	sessions *sessionCounter
	shapes   shapes
	mining   *candidate.MiningSummary // counts the steps the noise rule drops

	queue patternQueue
	found int // patterns the search found
	// counted is the patterns the noise rule was applied to, which the
	// scan limit counts.
	counted int
	// seen holds the symbols of the patterns taken from the queue, made
	// those of the patterns built into candidates, and variants those of
	// the variants queued: a variant is built once, and never when a
	// pattern with its steps already was.
	seen, made, variants map[string]bool
	built                []builtPattern
}

func (r *patternRanking) more() bool           { return r.queue.Len() > 0 }
func (r *patternRanking) scanned() int         { return r.counted }
func (r *patternRanking) total() (int, string) { return r.found, "patterns" }

// next takes one pattern from the queue: the noise rule, and what it
// queues, decide before the next pattern is taken.
func (r *patternRanking) next(_, _ int) []pick {
	sc := r.sessions
	pt := heap.Pop(&r.queue).(pattern)
	if pt.variant && r.made[symKey(pt.syms)] || !pt.variant && r.seen[symKey(pt.syms)] {
		return nil
	}
	syms, matches := pt.syms, pt.matches
	if !pt.denoised {
		// A pattern a built candidate already stands for is not worth
		// the noise rule's cost (most of the subsequences of a long
		// procedure rank right after it).
		ptTraces := matchTraces(r.prep.matchAll(pt.syms, r.gap, -1, 0))
		if subsumed(r.built, pt.syms, ptTraces, sc.count(ptTraces), isSubsequence) {
			r.seen[symKey(pt.syms)] = true
			return nil
		}
		r.counted++
		var dropped int
		var longer []variant
		syms, matches, dropped, longer = r.prep.denoiseVariants(pt.syms, r.gap, true)
		r.mining.NoiseStepsDropped += dropped
		// A longer form that holds in enough sessions of its own is a
		// procedure too, ranked by its own support.
		for _, v := range longer {
			key := symKey(v.syms)
			if sup := sc.countMatches(v.matches); sup >= r.minEx && !r.variants[key] {
				r.variants[key] = true
				heap.Push(&r.queue, pattern{syms: v.syms, support: sup, traces: len(v.matches), first: v.matches[0].seq, denoised: true, matches: v.matches,
					variant: true, notProcedure: symsNotProcedure(v.syms, r.shapes) != ""})
			}
		}
		if dropped > 0 {
			r.seen[symKey(pt.syms)] = true
			r.built = append(r.built, builtPattern{syms: pt.syms, traces: ptTraces, sessions: sc.count(ptTraces), kept: syms})
			if sup := sc.countMatches(matches); len(syms) >= 2 && sup >= r.minEx {
				heap.Push(&r.queue, pattern{syms: syms, support: sup, traces: len(matches), first: matches[0].seq, denoised: true, matches: matches,
					notProcedure: symsNotProcedure(syms, r.shapes) != ""})
			}
			return nil
		}
	}
	key := symKey(syms)
	if len(syms) < 2 || sc.countMatches(matches) < r.minEx || r.made[key] {
		return nil
	}
	r.seen[key] = true
	r.made[key] = true
	tr := matchTraces(matches)
	if subsumed(r.built, syms, tr, sc.count(tr), isSubsequence) {
		return nil
	}
	// What is not a procedure is built to say so, but stands for nothing
	// a procedure could repeat.
	if !pt.notProcedure {
		r.built = append(r.built, builtPattern{syms: syms, traces: tr, sessions: sc.count(tr)})
	}
	return []pick{{length: len(syms), traces: tr, all: r.prep.examples(matches)}}
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
